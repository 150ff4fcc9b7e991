"""Subsystems: ODEs with inputs and outputs (kraft2021 eq. 2.3, genser2020 §1.1),

    ẋ = f(t, x, u),   y = g(t, x, u),

given as LTI matrices (:class:`LTI`), Python callables (:class:`ODE`), C function pointers (:class:`CModel`) or a
model of the C core (:class:`BuiltinModel`); :class:`cosim.FMU` is one too. Every subsystem describes itself to the
engine by :meth:`Subsystem.spec`.
"""
from __future__ import annotations

import ctypes
import re
from typing import Callable

import numpy as np

from . import _check

_KINDS = {"x": ("states", "state", "nx"), "y": ("outputs", "output", "ny"), "u": ("inputs", "input", "nu")}
_INDEXED = re.compile(r"([xyu])\[(\d+)\]")      # the indexed form "x[i]" of a signal


class Subsystem:
    """Common interface: ``name``, sizes ``nx, nu, ny``, initial state ``x0``, ``feedthrough`` (does y depend on u),
    optional signal names ``states``/``inputs``/``outputs``. Input and output names are usable in :func:`connect`
    as ``"S1.F"`` besides ``"S1.u[0]"``; every name (and ``"x[i]"``, ``"y[j]"``, ``"u[a]"``) selects a signal of
    a :class:`cosim.Result`, e.g. ``res["S2.F"]``.

    ``units`` (optional, every subsystem kind): dict signal name -> unit string, e.g. ``{"x1": "m", "v1": "m/s",
    "F": "N"}``. A declared name gives its unit to every signal of that name (a state and the output or input named
    like it are one quantity); ``"x[i]"``, ``"y[j]"``, ``"u[a]"`` give one signal its unit. ``"-"`` marks a
    dimensionless signal; a signal left out has no known unit. Units are labels only (nothing is converted):
    ``cosim.Result.units`` carries them and :meth:`cosim.Result.plot` writes them on the axes."""

    nx: int
    nu: int
    ny: int
    feedthrough: bool
    is_lti = False

    def _init_common(self, name, x0, inputs, outputs, states=None, units=None):
        self.name = _check.identifier(name)
        self.x0 = _check.vector(x0, "x0", self.nx) if x0 is not None else np.zeros(self.nx)
        self.inputs = _check.labels(inputs, self.nu, "inputs")
        self.outputs = _check.labels(outputs, self.ny, "outputs")
        self.states = _check.labels(states, self.nx, "states")
        self.units = {}
        self.set_units(units)

    def set_units(self, units):
        """Declare the units of signals (see :class:`Subsystem`): ``units`` is a dict signal name -> unit string,
        added to ``units`` (an entry replaces the one of the same key). Returns the subsystem.

        Raises TypeError for anything but a dict of strings, ValueError for a name this subsystem does not have."""
        self.units = {**getattr(self, "units", {}), **self._checked_units(units)}
        return self

    def _checked_units(self, units):
        """``units`` as a new dict; TypeError/ValueError naming ``units`` for anything but signal names of this
        subsystem mapped to non-empty strings."""
        if units is None:
            return {}
        if not isinstance(units, dict):
            raise TypeError(f"units: expected a dict signal name -> unit string, got {type(units).__name__}")
        out, named = {}, self._named_signals()
        for key, unit in units.items():
            if not isinstance(key, str):
                raise TypeError(f"units: keys must be signal names (str), got {key!r}")
            if not isinstance(unit, str) or not unit.strip():
                raise TypeError(f"units[{key!r}]: expected a non-empty unit string such as 'm/s' or '-', got {unit!r}")
            try:
                self._resolve(key, named)
            except KeyError as e:
                raise ValueError(f"units: {e.args[0]}") from None
            out[key] = unit.strip()
        return out

    def signal_unit(self, kind: str, i: int):
        """The unit of state/output/input ``i`` of ``kind`` ("x", "y", "u"), from ``units``: the entry of the
        signal's indexed form ``"y[j]"`` if given, else that of its declared name; None where none is known."""
        return self.signal_units(kind)[i]

    def signal_units(self, kind: str) -> list:
        """:meth:`signal_unit` of every signal of ``kind`` in one pass (a chain segment has 1e5 states)."""
        units = getattr(self, "units", None) or {}
        return [units[f"{kind}[{i}]"] if f"{kind}[{i}]" in units else units.get(name)
                for i, name in enumerate(self.signal_names(kind))]

    def signal_names(self, kind: str) -> list:
        """Local names of the states (``kind="x"``), outputs (``"y"``) or inputs (``"u"``): the given names, or
        ``"x[i]"``/``"y[j]"``/``"u[a]"`` where none were given."""
        if kind not in _KINDS:
            raise ValueError(f"kind: must be 'x', 'y' or 'u', got {kind!r}")
        attr, _, size = _KINDS[kind]
        labels = getattr(self, attr, None)
        return list(labels) if labels else [f"{kind}[{i}]" for i in range(getattr(self, size))]

    def find_signal(self, label: str):
        """(kind, index) of a state, output or input of this subsystem given as ``"x[i]"``, ``"y[j]"``, ``"u[a]"``
        or by name. A name used for several kinds resolves to the state first, then the output, then the input
        (in the built-in two-mass models S1's outputs x1, v1 *are* its states); the indexed forms are unambiguous.
        Raises KeyError listing the valid names."""
        if not isinstance(label, str):
            raise TypeError(f"label: expected a signal name string, got {type(label).__name__}")
        return self._resolve(label, None)

    def _resolve(self, label, named):
        """:meth:`find_signal` with the table of :meth:`_named_signals` given (built here when None), so that
        resolving every name of a 1e5-state subsystem takes one pass."""
        m = _INDEXED.fullmatch(label)
        if m:
            kind, i = m.group(1), int(m.group(2))
            n = getattr(self, _KINDS[kind][2])
            if i < n:
                return kind, i
        elif label in (named := self._named_signals() if named is None else named):
            return named[label]
        raise KeyError(f"{self.name}.{label}: no such signal; {self.name} has {self._describe_signals()}")

    def signal_label(self, kind: str, i: int) -> str:
        """The name of state/output/input ``i`` of ``kind`` in results and analyses (without the subsystem's name).

        Parameters
        ----------
        kind : {"x", "y", "u"}
            States, outputs or inputs.
        i : int
            Index of the signal within its kind.

        Returns
        -------
        str
            The declared name where :meth:`find_signal` resolves it to this very signal, or where an output is
            named like a state and is that state (one quantity, one name: the two-mass models' outputs x1, v1;
            for an LTI subsystem the output's rows of C and D must select the state); else the indexed form
            ``"y[j]"``.
        """
        return self.signal_labels(kind)[i]

    def signal_labels(self, kind: str) -> list:
        """:meth:`signal_label` of every signal of ``kind`` in one pass (a chain segment has 1e5 states)."""
        named = None
        out = []
        for i, name in enumerate(self.signal_names(kind)):
            if name != f"{kind}[{i}]":
                named = self._named_signals() if named is None else named
                found = self._resolve(name, named)
                if not (found == (kind, i) or (kind == "y" and found[0] == "x" and self._output_is_state(i, found[1]))):
                    name = f"{kind}[{i}]"
            out.append(name)
        return out

    def _named_signals(self) -> dict:
        """{declared name: (kind, index)}: the first state, else output, else input of that name (the resolution
        of :meth:`find_signal`)."""
        named = {}
        for kind in ("x", "y", "u"):
            for i, name in enumerate(getattr(self, _KINDS[kind][0], None) or ()):
                named.setdefault(name, (kind, i))
        return named

    def _output_is_state(self, j, i):
        """Whether output j equals state i: checked on C and D where the subsystem has them, else taken from the
        names (an output named like a state is that state)."""
        C, D = getattr(self, "C", None), getattr(self, "D", None)
        if C is None:
            return True
        row = np.zeros(self.nx)
        row[i] = 1.0
        return bool(np.array_equal(C[j], row) and (D is None or not np.any(D[j])))

    def _describe_signals(self):
        parts = [f"{_KINDS[k][0]} " + ", ".join(self.signal_names(k)) for k in ("x", "y", "u")
                 if getattr(self, _KINDS[k][2])]
        return "; ".join(parts) + " (or by index: x[i], y[j], u[a])" if parts else "no signals"

    def signal_index(self, kind: str, label: str) -> int:
        """Index of input (kind 'u') or output (kind 'y') given as 'u[3]'/'y[0]' or by its name; ValueError listing
        the valid names."""
        m = re.fullmatch(r"([uy])\[(\d+)\]", label)
        n = self.nu if kind == "u" else self.ny
        what = "inputs" if kind == "u" else "outputs"
        if m:
            if m.group(1) != kind:
                raise ValueError(f"{self.name}.{label}: expected an {'input u' if kind == 'u' else 'output y'}; "
                                 f"{self._valid_names(kind)}")
            i = int(m.group(2))
            if i >= n:
                raise ValueError(f"{self.name}.{label}: index out of range ({self.name} has {n} {what}); "
                                 f"{self._valid_names(kind)}")
            return i
        labels = self.inputs if kind == "u" else self.outputs
        if labels and label in labels:
            return labels.index(label)
        raise ValueError(f"unknown {what[:-1]} {self.name}.{label}; {self._valid_names(kind)}")

    def _valid_names(self, kind, shown=20):
        """'valid outputs of S1: S1.F, ...' for an error message: the first ``shown`` names only (a subsystem may
        declare millions of signals), built only when an error is raised."""
        n = self.nu if kind == "u" else self.ny
        what = "inputs" if kind == "u" else "outputs"
        if not n:
            return f"{self.name} has no {what}"
        labels = self.inputs if kind == "u" else self.outputs
        names = list(labels[:shown]) if labels else [f"{kind}[{i}]" for i in range(min(n, shown))]
        more = f", ... ({n} in all)" if n > shown else ""
        return f"valid {what} of {self.name}: " + ", ".join(f"{self.name}.{v}" for v in names) + more

    def spec(self):
        """What the engine builds this subsystem from: a tuple whose first item names the model kind of the C core
        ("lti", "cfunc", "builtin", "python", "fmu") and whose second is the subsystem's name. Every subclass
        defines it; a subsystem the engine cannot run raises TypeError."""
        raise TypeError(f"subsystem {getattr(self, 'name', self)!r}: unsupported type {type(self).__name__}")

    def with_x0(self, x0):
        """Copy with another initial state."""
        import copy
        new = copy.copy(self)
        new.x0 = _check.vector(x0, "x0", self.nx)
        return new


class LTI(Subsystem):
    """Linear time-invariant subsystem ẋ = A x + B u, y = C x + D u.

    Integrated exactly by :class:`cosim.Exact` (matrix exponential with polynomial input, busch2016 eq. 20), and the only
    kind the stability analysis accepts (busch2016 eq. 4). ``states``, ``inputs``, ``outputs``: optional names of the
    components of x, u and y (identifiers, e.g. ``states=["x1", "v1"]``); ``units``: optional units of the signals
    (e.g. ``units={"x1": "m", "v1": "m/s"}``, see :class:`Subsystem`)."""

    is_lti = True

    def __init__(self, A, B, C, D=None, x0=None, name="S", inputs=None, outputs=None, states=None, units=None):
        A = _check.matrix(A, "A")
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"A: must be square, got shape {A.shape}")
        nx = A.shape[0]
        B = _check.real_array(B, "B", "matrix")
        if B.ndim == 1:
            B = B.reshape(nx, -1) if nx else B.reshape(0, B.size)
        B = _check.matrix(B, "B")
        if B.shape[0] != nx:
            raise ValueError(f"B: expected {nx} rows (A is {nx}x{nx}), got shape {B.shape}")
        nu = B.shape[1]
        C = _check.real_array(C, "C", "matrix")
        if C.ndim == 1:
            C = C.reshape(-1, nx)
        C = _check.matrix(C, "C")
        if C.shape[1] != nx:
            raise ValueError(f"C: expected {nx} columns, got shape {C.shape}")
        ny = C.shape[0]
        D = np.zeros((ny, nu)) if D is None else _check.matrix(np.reshape(D, (ny, nu)) if np.size(D) == ny * nu else D, "D",
                                                        (ny, nu))
        self.A, self.B, self.C, self.D = A, B, C, D
        self.nx, self.nu, self.ny = nx, nu, ny
        self.feedthrough = bool(np.any(D != 0))
        self._init_common(name, x0, inputs, outputs, states, units)

    def spec(self):
        """("lti", name, A, B, C, D) (see :meth:`Subsystem.spec`)."""
        return ("lti", self.name, self.A, self.B, self.C, self.D)

    def __repr__(self):
        return f"LTI(name={self.name!r}, nx={self.nx}, nu={self.nu}, ny={self.ny})"


class ODE(Subsystem):
    """Subsystem from Python callables: ``rhs(t, x, u) -> ẋ`` and ``output(t, x, u) -> y`` (NumPy arrays).

    The slow path: every right-hand-side evaluation calls back into Python (the GIL is re-acquired), which costs
    microseconds per call. For speed, write the model in C and use :class:`CModel`. ``feedthrough`` declares whether
    y depends on u (True by default, the safe choice: the consistent update then solves the algebraic loop).
    ``output_derivative(t, x, u, udot) -> ẏ`` is optional (Hermite approximation); without it, a finite-difference
    directional derivative is used. ``states``, ``inputs``, ``outputs``: optional names of the components of x, u, y;
    ``units``: optional units of the signals (e.g. ``units={"x": "m", "F": "N"}``, see :class:`Subsystem`).
    """

    def __init__(self, rhs: Callable, output: Callable, nx: int, nu: int, ny: int, x0=None, name="S",
                 feedthrough: bool = True, output_derivative: Callable | None = None, inputs=None, outputs=None,
                 states=None, units=None):
        if not callable(rhs):
            raise TypeError("rhs: must be callable rhs(t, x, u) -> xdot")
        if not callable(output):
            raise TypeError("output: must be callable output(t, x, u) -> y")
        if output_derivative is not None and not callable(output_derivative):
            raise TypeError("output_derivative: must be callable or None")
        self.nx, self.nu, self.ny = _check.size(nx, "nx"), _check.size(nu, "nu"), _check.size(ny, "ny")
        self.rhs, self.output, self.output_derivative = rhs, output, output_derivative
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states, units)

    def spec(self):
        """("python", name, nx, nu, ny, feedthrough, rhs, output, output_derivative) (see :meth:`Subsystem.spec`)."""
        return ("python", self.name, self.nx, self.nu, self.ny, self.feedthrough, self.rhs, self.output,
                self.output_derivative)

    def __repr__(self):
        return f"ODE(name={self.name!r}, nx={self.nx}, nu={self.nu}, ny={self.ny})"


class CModel(Subsystem):
    """Subsystem from C function pointers (the fast path; e.g. from ctypes, cffi or numba ``cfunc``).

    Signatures (C)::

        int rhs(double t, const double *x, const double *u, double *xdot, void *user_data);
        int output(double t, const double *x, const double *u, double *y, void *user_data);

    A non-zero return value aborts the run with :class:`cosim.SolverError`. Pointers are given as ints or ctypes
    function pointers; the caller keeps the underlying objects (and ``user_data``) alive during the run.
    ``states``, ``inputs``, ``outputs``: optional names of the components of x, u, y; ``units``: optional units of
    the signals (see :class:`Subsystem`).
    """

    def __init__(self, rhs, output, nx: int, nu: int, ny: int, x0=None, name="S", feedthrough: bool = True,
                 user_data=None, inputs=None, outputs=None, states=None, units=None):
        self.nx, self.nu, self.ny = _check.size(nx, "nx"), _check.size(nu, "nu"), _check.size(ny, "ny")
        _check_cfunc(rhs, "rhs")
        _check_cfunc(output, "output")
        self.rhs_ptr = _address(rhs, "rhs")
        self.output_ptr = _address(output, "output")
        self.user_data_ptr = _user_data_address(user_data)
        self._keepalive = (rhs, output, user_data)
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states, units)

    def spec(self):
        """("cfunc", name, nx, nu, ny, feedthrough, rhs, output, user_data) with the three addresses (see
        :meth:`Subsystem.spec`)."""
        return ("cfunc", self.name, self.nx, self.nu, self.ny, self.feedthrough, self.rhs_ptr, self.output_ptr,
                self.user_data_ptr)

    def __repr__(self):
        return f"CModel(name={self.name!r}, nx={self.nx}, nu={self.nu}, ny={self.ny})"


_ADDRESS_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_void_p)) - 1


def _address(obj, name, allow_null=False):
    """The address of a C function pointer (or of user data) as a non-negative int that fits in a pointer."""
    if isinstance(obj, (int, np.integer)) and not isinstance(obj, bool):
        addr = int(obj)
    elif isinstance(obj, ctypes._CFuncPtr):
        addr = ctypes.cast(obj, ctypes.c_void_p).value or 0
    elif isinstance(obj, ctypes.c_void_p):
        addr = obj.value or 0
    elif hasattr(obj, "address"):  # numba cfunc
        addr = obj.address
    elif hasattr(obj, "_as_parameter_"):
        try:
            addr = ctypes.cast(obj, ctypes.c_void_p).value or 0
        except (TypeError, ctypes.ArgumentError):
            raise TypeError(f"{name}: {type(obj).__name__}._as_parameter_ is not a pointer") from None
    else:
        raise TypeError(f"{name}: expected a C function pointer (int address, ctypes or numba cfunc), "
                        f"got {type(obj).__name__}")
    if isinstance(addr, bool) or not isinstance(addr, (int, np.integer)):
        raise TypeError(f"{name}: the address must be an int, got {type(addr).__name__}")
    addr = int(addr)
    if addr < 0 or addr > _ADDRESS_MAX:
        raise ValueError(f"{name}: address {addr} is out of range for a pointer (0 .. {_ADDRESS_MAX})")
    if addr == 0 and not allow_null:
        raise ValueError(f"{name}: NULL function pointer")
    return addr


class BuiltinModel(Subsystem):
    """A model implemented in the C core (see :mod:`cosim.models`). ``kind`` names it, ``params`` are its
    parameters in the order the C model documents; ``units``: the units of its signals (see :class:`Subsystem`)."""

    def __init__(self, kind: str, params, nx, nu, ny, x0=None, name="S", feedthrough=True, inputs=None,
                 outputs=None, lti=None, states=None, units=None):
        self.kind = kind
        self.params = np.asarray(params, dtype=float)
        self.nx, self.nu, self.ny = nx, nu, ny
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states, units)

    def spec(self):
        """("builtin", name, kind, params) (see :meth:`Subsystem.spec`)."""
        return ("builtin", self.name, self.kind, self.params)

    def __repr__(self):
        return f"BuiltinModel({self.kind!r}, name={self.name!r})"


# C function pointers of CModel: signature checks and user_data
_CFUNC_SIGNATURE = "intc(float64, CPointer(float64), CPointer(float64), CPointer(float64), voidptr)"
_C_SIGNATURE = "int f(double t, const double *x, const double *u, double *out, void *user_data)"


def cfunc_signature() -> str:
    """The numba signature of the ``rhs`` and ``output`` functions of :class:`CModel`::

        @numba.cfunc(cosim.cfunc_signature())
        def rhs(t, x, u, xdot, user_data): ...; return 0

    i.e. ``int f(double t, const double *x, const double *u, double *out, void *user_data)`` in C (ẋ = f(t, x, u)
    into ``out``, or y = g(t, x, u)); return 0 on success. :class:`CModel` checks the signature of numba cfuncs and
    ctypes function pointers whose argument types are known and raises TypeError on a mismatch (plain int
    addresses cannot be checked)."""
    return _CFUNC_SIGNATURE


def _ctype_name(t):
    return "void" if t is None else getattr(t, "__name__", repr(t))


def _is_double_ptr(t):
    return t is ctypes.c_void_p or (isinstance(t, type) and issubclass(t, ctypes._Pointer)
                                    and getattr(t, "_type_", None) is ctypes.c_double)


def _is_any_ptr(t):
    return t in (ctypes.c_void_p, ctypes.c_char_p) or (isinstance(t, type) and issubclass(t, ctypes._Pointer))


def _check_cfunc(obj, name):
    """TypeError if ``obj`` (a numba cfunc, i.e. anything with ``.address`` and ``.ctypes``, or a ctypes function
    pointer) declares argument or return types other than :func:`cfunc_signature`. Objects whose types are not
    known (int addresses, ctypes functions from a library without ``argtypes``) pass unchecked."""
    fn = obj
    if not isinstance(obj, ctypes._CFuncPtr) and hasattr(obj, "address") and hasattr(obj, "ctypes"):
        fn = obj.ctypes  # numba cfunc: its ctypes wrapper carries the argument and return types
    if not isinstance(fn, ctypes._CFuncPtr):
        return
    argtypes, restype = fn.argtypes, fn.restype
    if argtypes is None:
        return
    argtypes = list(argtypes)
    got = f"{_ctype_name(restype)}({', '.join(_ctype_name(t) for t in argtypes)})"
    hint = (f"{name}: C signature {got} does not match {_C_SIGNATURE}"
            f"; with numba use @cfunc(cosim.cfunc_signature()) = @cfunc({_CFUNC_SIGNATURE!r})")
    if restype is not ctypes.c_int:
        raise TypeError(f"{hint} (return type is {_ctype_name(restype)}, expected int)")
    if len(argtypes) != 5:
        raise TypeError(f"{hint} ({len(argtypes)} arguments, expected 5)")
    checks = [(lambda t: t is ctypes.c_double, "double t"), (_is_double_ptr, "double *x"),
              (_is_double_ptr, "double *u"), (_is_double_ptr, "double *out"), (_is_any_ptr, "void *user_data")]
    for i, (t, (ok, what)) in enumerate(zip(argtypes, checks)):
        if not ok(t):
            raise TypeError(f"{hint} (argument {i} is {_ctype_name(t)}, expected {what})")


def _user_data_address(user_data):
    """Address passed as ``void *user_data`` to CModel's functions: None (NULL), an int address, a ctypes object
    (pointer, c_void_p, or any instance: its address) or a NumPy array (its data buffer)."""
    if user_data is None:
        return 0
    if isinstance(user_data, bool):
        raise TypeError("user_data: expected None, an int address, a ctypes object or a NumPy array, got bool")
    if isinstance(user_data, (int, np.integer)):
        return _address(user_data, "user_data", allow_null=True)  # one range check for every address
    if isinstance(user_data, np.ndarray):
        if not user_data.flags.c_contiguous:
            raise ValueError("user_data: NumPy array must be C-contiguous (use np.ascontiguousarray)")
        return int(user_data.ctypes.data)
    if isinstance(user_data, (ctypes.c_void_p, ctypes.c_char_p)):
        return user_data.value or 0
    if isinstance(user_data, (ctypes._Pointer, ctypes._CFuncPtr)):
        return ctypes.cast(user_data, ctypes.c_void_p).value or 0
    if isinstance(user_data, (ctypes._SimpleCData, ctypes.Structure, ctypes.Union, ctypes.Array)):
        return ctypes.addressof(user_data)
    raise TypeError("user_data: expected None, an int address, a ctypes object or a NumPy array (passed as "
                    f"void *user_data), got {type(user_data).__name__}")
