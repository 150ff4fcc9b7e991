"""Subsystems, connections and coupled systems.

A subsystem is an ODE with inputs and outputs (kraft2021 eq. 2.3, genser2020 §1.1):

    ẋ = f(t, x, u),   y = g(t, x, u).

Connections define the inputs from the outputs, u = L y + r (kraft2021: coupling condition g := u − φ(y) = 0 with a
linear φ), declared by names: ``connect("S1.y[0]", "S2.u[1]", gain=...)``. Several connections into the same input
add up; a number as source adds a constant offset r.
"""
from __future__ import annotations

import ctypes
import re
from typing import Callable, Sequence

import numpy as np


def _real_array(value, name, what):
    """float64 array of real input. Complex input is rejected (a cast would silently drop the imaginary part), as
    are strings and anything float() cannot convert; the error names the argument."""
    if value is None:
        raise TypeError(f"{name}: expected a real {what}, got None")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name}: expected a real {what}") from None
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: expected a real {what}, got complex values")
    if a.dtype.kind not in "biufO":
        raise TypeError(f"{name}: expected a real {what}, got dtype {a.dtype}")
    try:
        return np.array(a, dtype=float)
    except OverflowError:
        raise ValueError(f"{name}: contains values too large for float64") from None
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a real {what}") from None


def _matrix(value, name, shape=None):
    a = _real_array(value, name, "matrix")
    if a.ndim == 0:
        a = a.reshape(1, 1)
    if a.ndim == 1 and shape is not None:
        a = a.reshape(shape) if a.size == shape[0] * shape[1] else a
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return np.ascontiguousarray(a)


def _vector(value, name, n):
    a = _real_array(value, name, "vector").reshape(-1)
    if a.size != n:
        raise ValueError(f"{name}: expected {n} entries, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def _check_name(name):
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name: must be an identifier-like string, got {name!r}")
    return name


def _check_size(v, name, minimum=0):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name}: must be an int, got {type(v).__name__}")
    if v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {v}")
    return int(v)


def _check_labels(labels, n, what):
    if labels is None:
        return None
    labels = list(labels)
    if len(labels) != n or not all(isinstance(s, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", s) for s in labels):
        raise ValueError(f"{what}: expected {n} identifier-like names, got {labels!r}")
    if len(set(labels)) != n:
        raise ValueError(f"{what}: names must be unique")
    return labels


_KINDS = {"x": ("states", "state", "nx"), "y": ("outputs", "output", "ny"), "u": ("inputs", "input", "nu")}


class Subsystem:
    """Common interface: ``name``, sizes ``nx, nu, ny``, initial state ``x0``, ``feedthrough`` (does y depend on u),
    optional signal names ``states``/``inputs``/``outputs``. Input and output names are usable in :func:`connect`
    as ``"S1.F"`` besides ``"S1.u[0]"``; every name (and ``"x[i]"``, ``"y[j]"``, ``"u[a]"``) selects a signal of
    a :class:`cosim.Result`, e.g. ``res["S2.F"]``."""

    nx: int
    nu: int
    ny: int
    feedthrough: bool
    is_lti = False

    def _init_common(self, name, x0, inputs, outputs, states=None):
        self.name = _check_name(name)
        self.x0 = _vector(x0, "x0", self.nx) if x0 is not None else np.zeros(self.nx)
        self.inputs = _check_labels(inputs, self.nu, "inputs")
        self.outputs = _check_labels(outputs, self.ny, "outputs")
        self.states = _check_labels(states, self.nx, "states")

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
        m = re.fullmatch(r"([xyu])\[(\d+)\]", label)
        if m:
            kind, i = m.group(1), int(m.group(2))
            n = getattr(self, _KINDS[kind][2])
            if i < n:
                return kind, i
        else:
            for kind in ("x", "y", "u"):
                labels = getattr(self, _KINDS[kind][0], None)
                if labels and label in labels:
                    return kind, labels.index(label)
        raise KeyError(f"{self.name}.{label}: no such signal; {self.name} has {self._describe_signals()}")

    def _describe_signals(self):
        parts = [f"{_KINDS[k][0]} " + ", ".join(self.signal_names(k)) for k in ("x", "y", "u")
                 if getattr(self, _KINDS[k][2])]
        return "; ".join(parts) + " (or by index: x[i], y[j], u[a])" if parts else "no signals"

    def signal_index(self, kind: str, label: str) -> int:
        """Index of input (kind 'u') or output (kind 'y') given as 'u[3]'/'y[0]' or by its name."""
        m = re.fullmatch(r"([uy])\[(\d+)\]", label)
        n = self.nu if kind == "u" else self.ny
        if m:
            if m.group(1) != kind:
                raise ValueError(f"{self.name}.{label}: expected an {'input u' if kind == 'u' else 'output y'}")
            i = int(m.group(2))
            if i >= n:
                raise ValueError(f"{self.name}.{label}: index out of range ({self.name} has {n} "
                                 f"{'inputs' if kind == 'u' else 'outputs'})")
            return i
        labels = self.inputs if kind == "u" else self.outputs
        if labels and label in labels:
            return labels.index(label)
        raise ValueError(f"unknown {'input' if kind == 'u' else 'output'} {self.name}.{label}")

    def with_x0(self, x0):
        """Copy with another initial state."""
        import copy
        new = copy.copy(self)
        new.x0 = _vector(x0, "x0", self.nx)
        return new


class LTI(Subsystem):
    """Linear time-invariant subsystem ẋ = A x + B u, y = C x + D u.

    Integrated exactly by :class:`cosim.Exact` (matrix exponential with polynomial input, busch2016 eq. 20), and the only
    kind the stability analysis accepts (busch2016 eq. 4). ``states``, ``inputs``, ``outputs``: optional names of the
    components of x, u and y (identifiers, e.g. ``states=["x1", "v1"]``)."""

    is_lti = True

    def __init__(self, A, B, C, D=None, x0=None, name="S", inputs=None, outputs=None, states=None):
        A = _matrix(A, "A")
        if A.shape[0] != A.shape[1]:
            raise ValueError(f"A: must be square, got shape {A.shape}")
        nx = A.shape[0]
        B = _real_array(B, "B", "matrix")
        if B.ndim == 1:
            B = B.reshape(nx, -1) if nx else B.reshape(0, B.size)
        B = _matrix(B, "B")
        if B.shape[0] != nx:
            raise ValueError(f"B: expected {nx} rows (A is {nx}x{nx}), got shape {B.shape}")
        nu = B.shape[1]
        C = _real_array(C, "C", "matrix")
        if C.ndim == 1:
            C = C.reshape(-1, nx)
        C = _matrix(C, "C")
        if C.shape[1] != nx:
            raise ValueError(f"C: expected {nx} columns, got shape {C.shape}")
        ny = C.shape[0]
        D = np.zeros((ny, nu)) if D is None else _matrix(np.reshape(D, (ny, nu)) if np.size(D) == ny * nu else D, "D",
                                                        (ny, nu))
        self.A, self.B, self.C, self.D = A, B, C, D
        self.nx, self.nu, self.ny = nx, nu, ny
        self.feedthrough = bool(np.any(D != 0))
        self._init_common(name, x0, inputs, outputs, states)

    def __repr__(self):
        return f"LTI(name={self.name!r}, nx={self.nx}, nu={self.nu}, ny={self.ny})"


class ODE(Subsystem):
    """Subsystem from Python callables: ``rhs(t, x, u) -> ẋ`` and ``output(t, x, u) -> y`` (NumPy arrays).

    The slow path: every right-hand-side evaluation calls back into Python (the GIL is re-acquired), which costs
    microseconds per call. For speed, write the model in C and use :class:`CModel`. ``feedthrough`` declares whether
    y depends on u (True by default, the safe choice: the consistent update then solves the algebraic loop).
    ``output_derivative(t, x, u, udot) -> ẏ`` is optional (Hermite approximation); without it, a finite-difference
    directional derivative is used. ``states``, ``inputs``, ``outputs``: optional names of the components of x, u, y.
    """

    def __init__(self, rhs: Callable, output: Callable, nx: int, nu: int, ny: int, x0=None, name="S",
                 feedthrough: bool = True, output_derivative: Callable | None = None, inputs=None, outputs=None,
                 states=None):
        if not callable(rhs):
            raise TypeError("rhs: must be callable rhs(t, x, u) -> xdot")
        if not callable(output):
            raise TypeError("output: must be callable output(t, x, u) -> y")
        if output_derivative is not None and not callable(output_derivative):
            raise TypeError("output_derivative: must be callable or None")
        self.nx, self.nu, self.ny = _check_size(nx, "nx"), _check_size(nu, "nu"), _check_size(ny, "ny")
        self.rhs, self.output, self.output_derivative = rhs, output, output_derivative
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states)

    def __repr__(self):
        return f"ODE(name={self.name!r}, nx={self.nx}, nu={self.nu}, ny={self.ny})"


class CModel(Subsystem):
    """Subsystem from C function pointers (the fast path; e.g. from ctypes, cffi or numba ``cfunc``).

    Signatures (C)::

        int rhs(double t, const double *x, const double *u, double *xdot, void *user_data);
        int output(double t, const double *x, const double *u, double *y, void *user_data);

    A non-zero return value aborts the run with :class:`cosim.SolverError`. Pointers are given as ints or ctypes
    function pointers; the caller keeps the underlying objects (and ``user_data``) alive during the run.
    ``states``, ``inputs``, ``outputs``: optional names of the components of x, u, y.
    """

    def __init__(self, rhs, output, nx: int, nu: int, ny: int, x0=None, name="S", feedthrough: bool = True,
                 user_data=None, inputs=None, outputs=None, states=None):
        self.nx, self.nu, self.ny = _check_size(nx, "nx"), _check_size(nu, "nu"), _check_size(ny, "ny")
        _check_cfunc(rhs, "rhs")
        _check_cfunc(output, "output")
        self.rhs_ptr = _address(rhs, "rhs")
        self.output_ptr = _address(output, "output")
        self.user_data_ptr = _user_data_address(user_data)
        self._keepalive = (rhs, output, user_data)
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states)

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
    parameters in the order the C model documents."""

    def __init__(self, kind: str, params, nx, nu, ny, x0=None, name="S", feedthrough=True, inputs=None,
                 outputs=None, lti=None, states=None):
        self.kind = kind
        self.params = np.asarray(params, dtype=float)
        self.nx, self.nu, self.ny = nx, nu, ny
        self.feedthrough = bool(feedthrough)
        self._init_common(name, x0, inputs, outputs, states)

    def __repr__(self):
        return f"BuiltinModel({self.kind!r}, name={self.name!r})"


class Connection:
    """u[dst] += gain * y[src] (or += gain * value for a constant source)."""

    def __init__(self, src, dst, gain=1.0):
        if not isinstance(dst, str):
            raise TypeError(f"connect: destination must be a string like 'S2.u[0]', got {dst!r}")
        if isinstance(src, bool) or not isinstance(src, (str, int, float, np.floating, np.integer)):
            raise TypeError(f"connect: source must be a string like 'S1.y[0]' or a number, got {src!r}")
        try:
            g = float(gain)
        except (TypeError, ValueError):
            raise TypeError(f"connect: gain must be a real number, got {gain!r}") from None
        if not np.isfinite(g):
            raise ValueError(f"connect: gain must be finite, got {gain!r}")
        if not isinstance(src, str) and not np.isfinite(float(src)):
            raise ValueError(f"connect: constant source must be finite, got {src!r}")
        self.src, self.dst, self.gain = src, dst, g

    def __repr__(self):
        return f"connect({self.src!r}, {self.dst!r}, gain={self.gain})"


def connect(src, dst, gain: float = 1.0) -> Connection:
    """Declare ``dst += gain * src``: ``src`` is an output ``"S1.y[0]"`` (or ``"S1.<output name>"``) or a constant
    number, ``dst`` an input ``"S2.u[0]"``. Connections into the same input add up (u = L y + r)."""
    return Connection(src, dst, gain)


def _split(ref, what):
    if not isinstance(ref, str) or "." not in ref:
        raise ValueError(f"{what}: expected 'Subsystem.signal', got {ref!r}")
    sub, sig = ref.split(".", 1)
    return sub, sig


class CoupledSystem:
    """Named subsystems plus connections u = L y + r.

    Global signal order: the inputs (outputs) of the subsystems, concatenated in the order given. ``L`` has shape
    (total inputs, total outputs). The monolithic form (strong coupling) is available for LTI subsystems as
    :meth:`monolithic_lti`.

    Every input must be defined: by a connection (an output or a constant source), or by ``inputs_default``
    (a dict ``{"S2.u[0]": value}``, or one number for every input without a connection: constant values added to
    r). Otherwise the constructor raises ValueError naming the open inputs, unless ``allow_unconnected=True``
    declares that they are held at 0 (listed in ``unconnected_inputs``).
    """

    def __init__(self, subsystems: Sequence[Subsystem], connections: Sequence[Connection] = (), *,
                 inputs_default=None, allow_unconnected: bool = False):
        subsystems = list(subsystems)
        if len(subsystems) < 1:
            raise ValueError("subsystems: need at least one subsystem")
        for s in subsystems:
            if not isinstance(s, Subsystem):
                raise TypeError(f"subsystems: expected cosim subsystems (LTI, ODE, CModel), got {type(s).__name__}")
        names = [s.name for s in subsystems]
        if len(set(names)) != len(names):
            raise ValueError(f"subsystems: names must be unique, got {names}")
        if not isinstance(allow_unconnected, bool):
            raise TypeError(f"allow_unconnected: expected True or False, got {allow_unconnected!r}")
        self.subsystems = subsystems
        self._by_name = {s.name: i for i, s in enumerate(subsystems)}
        self.in_offset = np.cumsum([0] + [s.nu for s in subsystems])
        self.out_offset = np.cumsum([0] + [s.ny for s in subsystems])
        self.state_offset = np.cumsum([0] + [s.nx for s in subsystems])
        nu, ny = int(self.in_offset[-1]), int(self.out_offset[-1])
        self.r = np.zeros(nu)
        rows, cols, gains = [], [], []
        if isinstance(connections, (Connection, str)):
            raise TypeError("connections: expected a list of cosim.connect(...) objects")
        self.connections = list(connections)
        connected = np.zeros(nu, dtype=bool)
        for c in self.connections:
            if not isinstance(c, Connection):
                raise TypeError(f"connections: expected cosim.connect(...) objects, got {type(c).__name__}")
            di = self._global_index(c.dst, "u")
            connected[di] = True
            if isinstance(c.src, str):
                rows.append(di)
                cols.append(self._global_index(c.src, "y"))
                gains.append(c.gain)
            else:
                self.r[di] += c.gain * float(c.src)
        self._coupling = self._merge(nu, ny, rows, cols, gains)
        self._L_dense = None
        self.inputs_default = self._apply_defaults(inputs_default, connected)
        in_names = self.signal_names("u")
        #: inputs that no connection or default defines: held at 0 (only with allow_unconnected=True)
        self.unconnected_inputs = [in_names[i] for i in np.flatnonzero(~connected)]
        self.allow_unconnected = allow_unconnected
        if self.unconnected_inputs and not allow_unconnected:
            raise ValueError(f"connections: inputs {self.unconnected_inputs} are not connected; connect them, give "
                             "their constant values with inputs_default={name: value} (or one number for all), or "
                             "pass allow_unconnected=True to hold them at 0")

    @staticmethod
    def _merge(nu, ny, rows, cols, gains):
        """u = L y + r as sorted (input, output, gain) triples; repeated pairs add up, zero sums are dropped."""
        if not rows:
            e = np.zeros(0, dtype=np.int64)
            return e, e.copy(), np.zeros(0)
        key = np.asarray(rows, dtype=np.int64) * ny + np.asarray(cols, dtype=np.int64)
        uniq, inv = np.unique(key, return_inverse=True)
        g = np.zeros(uniq.size)
        np.add.at(g, inv, np.asarray(gains, dtype=float))
        keep = g != 0.0
        return uniq[keep] // ny, uniq[keep] % ny, g[keep]

    @property
    def coupling(self):
        """The connections u = L y + r as arrays (input index a, output index j, gain L[a, j]), sorted by input:
        the sparse form the engine uses (no dense n_u x n_y matrix for large systems)."""
        return self._coupling

    @property
    def L(self) -> np.ndarray:
        """L as a dense (n_u, n_y) matrix, formed on first use (for the analysis and small systems; the engine uses
        :attr:`coupling`)."""
        if self._L_dense is None:
            a, j, g = self._coupling
            L = np.zeros((int(self.in_offset[-1]), int(self.out_offset[-1])))
            L[a, j] = g
            L.setflags(write=False)
            self._L_dense = L
        return self._L_dense

    def _apply_defaults(self, inputs_default, connected):
        """Constant values r for inputs without a connection (``inputs_default``); marks them connected."""
        if inputs_default is None:
            return {}
        in_names = self.signal_names("u")
        if isinstance(inputs_default, dict):
            items = list(inputs_default.items())
        elif isinstance(inputs_default, (int, float, np.integer, np.floating)) and not isinstance(inputs_default,
                                                                                                  bool):
            items = [(in_names[i], inputs_default) for i in np.flatnonzero(~connected)]
        else:
            raise TypeError("inputs_default: expected a dict {'S2.u[0]': value} or one number for every unconnected "
                            f"input, got {type(inputs_default).__name__}")
        out = {}
        for ref, value in items:
            if not isinstance(ref, str):
                raise TypeError(f"inputs_default: keys must be input names like 'S2.u[0]', got {ref!r}")
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not np.isfinite(value):
                raise ValueError(f"inputs_default[{ref!r}]: expected a finite number, got {value!r}")
            try:
                di = self._global_index(ref, "u")
            except ValueError as e:
                raise ValueError(f"inputs_default: {e}") from None
            if connected[di]:
                raise ValueError(f"inputs_default[{ref!r}]: input {in_names[di]} is already connected; a default "
                                 "is only for inputs without a connection")
            self.r[di] += float(value)
            connected[di] = True
            out[in_names[di]] = float(value)
        return out

    def signal_names(self, kind: str) -> list:
        """Global names of the states (``kind="x"``), inputs (``"u"``) or outputs (``"y"``) in the stacked order:
        ``"S1.x[0]"`` or ``"S1.<name>"`` where the subsystem names its signals (``inputs``/``outputs``/``states``)."""
        if kind not in ("x", "u", "y"):
            raise ValueError(f"kind: must be 'x', 'u' or 'y', got {kind!r}")
        out = []
        for s in self.subsystems:
            n = {"x": s.nx, "u": s.nu, "y": s.ny}[kind]
            labels = getattr(s, {"x": "states", "u": "inputs", "y": "outputs"}[kind], None)
            if not labels or len(labels) != n:
                labels = [f"{kind}[{i}]" for i in range(n)]
            out += [f"{s.name}.{lab}" for lab in labels]
        return out

    def _global_index(self, ref, kind):
        sub, sig = _split(ref, "connection")
        if sub not in self._by_name:
            raise ValueError(f"connection {ref!r}: unknown subsystem {sub!r} (known: {list(self._by_name)})")
        i = self._by_name[sub]
        local = self.subsystems[i].signal_index(kind, sig)
        return int((self.in_offset if kind == "u" else self.out_offset)[i] + local)

    def __getitem__(self, name):
        return self.subsystems[self.index(name)]

    def index(self, name):
        if name not in self._by_name:
            raise KeyError(f"unknown subsystem {name!r}; known: {list(self._by_name)}")
        return self._by_name[name]

    @property
    def names(self):
        return [s.name for s in self.subsystems]

    @property
    def is_lti(self):
        return all(s.is_lti for s in self.subsystems)

    def connection_matrix(self):
        """(L, r) with u = L y + r over the global input/output order."""
        return self.L.copy(), self.r.copy()

    def monolithic_lti(self):
        """Strongly coupled form of an all-LTI system: ż = A z + b with z the stacked states.

        y = C z + D u, u = L y + r  ⇒  y = (I − D L)⁻¹ (C z + D r), and ż = A_blk z + B_blk (L y + r).
        Returns (A, b, z0). Raises ValueError if the algebraic loop I − D L is singular."""
        if not self.is_lti:
            raise ValueError("monolithic_lti: all subsystems must be cosim.LTI")
        from scipy.linalg import block_diag
        A = block_diag(*[s.A for s in self.subsystems])
        B = block_diag(*[s.B for s in self.subsystems])
        C = block_diag(*[s.C for s in self.subsystems])
        D = block_diag(*[s.D for s in self.subsystems])
        ny = C.shape[0]
        M = np.eye(ny) - D @ self.L
        if np.linalg.matrix_rank(M) < ny:
            raise ValueError("monolithic_lti: algebraic loop I - D L is singular (ill-posed coupling)")
        Minv = np.linalg.inv(M)
        Ay = Minv @ C                         # y = Ay z + by
        by = Minv @ (D @ self.r)
        Amono = A + B @ self.L @ Ay
        bmono = B @ (self.L @ by + self.r)
        z0 = np.concatenate([s.x0 for s in self.subsystems])
        return Amono, bmono, z0

    def __repr__(self):
        return f"CoupledSystem({self.names}, {len(self.connections)} connections)"

    @classmethod
    def from_ssp(cls, path, *, kind=None, **fmu_options):
        """The system of an SSP archive (``.ssp``) or unpacked directory: its FMU components as :class:`cosim.FMU`
        subsystems (``kind``, ``tolerance``, ``logging_on`` passed on), its connections (with the factor of a
        linear transformation as gain) and its parameter bindings as start values. Inputs without a connection
        are held at their value 0 (``allow_unconnected``). See :mod:`cosim.ssp` for what is supported."""
        from .ssp import read_ssp
        return read_ssp(path, kind=kind, **fmu_options)


# ----------------------------------------------------------------------------------------------------------------
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
