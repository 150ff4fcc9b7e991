"""Connections and coupled systems (the subsystems are in :mod:`cosim.subsystem`).

Connections define the inputs from the outputs, u = L y + r (kraft2021: coupling condition g := u − φ(y) = 0 with a
linear φ), declared by names: ``connect("S1.y[0]", "S2.u[1]", gain=...)``. Several connections into the same input
add up; a number as source adds a constant offset r.
"""
from __future__ import annotations

import pathlib
from typing import Sequence

import numpy as np

from . import _check
from .subsystem import (BuiltinModel, CModel, LTI, ODE, Subsystem, cfunc_signature)  # noqa: F401  (cosim.system.*)


class Connection:
    """u[dst] += gain * y[src] (or += gain * value for a constant source); ``convert``: the user allows signals
    of different FMI type classes (Real, Integer, Boolean) to be connected."""

    def __init__(self, src, dst, gain=1.0, convert=False):
        if not isinstance(dst, str):
            raise TypeError(f"connect: destination must be a string like 'S2.u[0]', got {dst!r}")
        if isinstance(src, bool) or not isinstance(src, (str, int, float, np.floating, np.integer)):
            raise TypeError(f"connect: source must be a string like 'S1.y[0]' or a number, got {src!r}")
        g = _check.real(gain, "connect: gain")
        if not isinstance(src, str) and not np.isfinite(float(src)):
            raise ValueError(f"connect: constant source must be finite, got {src!r}")
        if not isinstance(convert, bool):
            raise TypeError(f"connect: convert must be True or False, got {convert!r}")
        self.src, self.dst, self.gain, self.convert = src, dst, g, convert

    def __repr__(self):
        return f"connect({self.src!r}, {self.dst!r}, gain={self.gain}{', convert=True' if self.convert else ''})"


def connect(src, dst, gain: float = 1.0, *, convert: bool = False) -> Connection:
    """Declare ``dst += gain * src``: ``src`` is an output ``"S1.y[0]"`` (or ``"S1.<output name>"``) or a constant
    number, ``dst`` an input ``"S2.u[0]"``. Connections into the same input add up (u = L y + r). Signals of FMUs
    carry their FMI type: a Real, Integer and Boolean signal connect only to their own class unless ``convert=True``
    (docs/fmu.md "Variable types"); other subsystems' signals count as Real.

    Examples
    --------
    Two first-order lags in a feedback loop, u_B = y_A and u_A = -y_B:

    >>> import cosim
    >>> a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[1.0], name="A", inputs=["f"], outputs=["z"])
    >>> b = cosim.LTI([[-2.0]], [[1.0]], [[1.0]], name="B", inputs=["g"], outputs=["w"])
    >>> system = cosim.CoupledSystem([a, b], [cosim.connect("A.z", "B.g"), cosim.connect("B.w", "A.f", gain=-1.0)])
    >>> res = cosim.simulate(system, t_end=1.0, H=0.01, solver=cosim.Exact())
    >>> print(f"{res['B.w'][-1]:.3f}")
    0.198
    """
    return Connection(src, dst, gain, convert)


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
                si = self._global_index(c.src, "y")
                if not c.convert:
                    self._check_types(c, si, di)
                rows.append(di)
                cols.append(si)
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

    def _signal_type(self, index, kind):
        """The FMI type name of global output/input ``index`` ("Float64" for subsystems without types)."""
        offsets = self.out_offset if kind == "y" else self.in_offset
        i = int(np.searchsorted(offsets, index, side="right")) - 1
        types = getattr(self.subsystems[i], "output_types" if kind == "y" else "input_types", None)
        return types[index - int(offsets[i])] if types else "Float64"

    def _check_types(self, c, si, di):
        from ._fmi_types import type_class
        ts, td = self._signal_type(si, "y"), self._signal_type(di, "u")
        if type_class(ts) != type_class(td):
            raise ValueError(f"connect({c.src!r}, {c.dst!r}): a {ts} output drives a {td} input; FMI connects "
                             "signals of one type class (Real, Integer, Boolean): pass convert=True to convert")

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

    def connection_arrays(self):
        """:attr:`coupling` in the engine's types: (int64 input indices, int64 output indices, float gains)."""
        a, j, g = self._coupling
        return a.astype(np.int64), j.astype(np.int64), g.astype(float)

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
        """The system of an SSP archive (``.ssp``) or unpacked directory: its FMU components (also those of nested
        systems) as :class:`cosim.FMU` subsystems (``kind``, ``tolerance``, ``logging_on``, ``max_unpacked``
        passed on), its connections (a linear transformation's factor as gain, its offset as a constant added to
        the input) and its parameter bindings as start values. Inputs without a connection are held at their
        value 0 (``allow_unconnected``). ``default_experiment``: the SSP's DefaultExperiment ({} if none). See
        :mod:`cosim.ssp` and docs/fmu.md for what is supported."""
        from .ssp import read_ssp
        subsystems, connections, offsets, experiment = read_ssp(path, kind=kind, **fmu_options)
        out = cls(subsystems, [connect(*c) for c in connections] + [connect(v, d) for v, d in offsets],
                  allow_unconnected=True)
        out.ssp_path = pathlib.Path(path)
        out.default_experiment = experiment
        return out
