"""A single subsystem with its integrator, stepped by hand (like an FMI co-simulation unit).

Useful to build custom masters in Python and to inspect rollback: ``save()`` returns the complete stepper state
(every integrator restarts at macro points, so time, states and counters are the whole state) and ``restore()``
reinstates it exactly, so a repeated macro step reproduces the first one bit for bit.
"""
from __future__ import annotations

import numpy as np

from . import _core
from .approximations import MAXDEG
from .simulate import _model_spec
from .solvers import CVODE, Exact, Solver, as_solver
from .system import Subsystem


class Stepper:
    """``Stepper(subsystem, solver=CVODE(), x0=None, t0=0.0)``.

    ``do_step(T, H, u)`` integrates over [T, T+H] with the input polynomial u(T + sH) = Σ_m u[m] s^m, s ∈ [0, 1]
    (``u`` of shape (deg+1, nu); a 1-D array of length nu is a constant input)."""

    def __init__(self, subsystem: Subsystem, solver: Solver | str = CVODE(), x0=None, t0: float = 0.0):
        if not isinstance(subsystem, Subsystem):
            raise TypeError(f"subsystem: expected a cosim subsystem, got {type(subsystem).__name__}")
        solver = as_solver(solver)
        if isinstance(solver, Exact) and not subsystem.is_lti:
            raise ValueError(f"solver: Exact() integrates LTI subsystems only; {subsystem.name!r} is not LTI")
        x0 = subsystem.x0 if x0 is None else np.asarray(x0, dtype=float).reshape(-1)
        if x0.size != subsystem.nx or not np.all(np.isfinite(x0)):
            raise ValueError(f"x0: expected {subsystem.nx} finite values")
        if not np.isfinite(t0):
            raise ValueError("t0: must be finite")
        self.subsystem, self.solver = subsystem, solver
        self._cap = _core.stepper_new(_model_spec(subsystem), solver.spec(), x0, float(t0))

    def do_step(self, T: float, H: float, u):
        nu = self.subsystem.nu
        c = np.asarray(u, dtype=float)
        if c.ndim == 1:
            c = c.reshape(1, -1)
        if c.ndim != 2 or c.shape[1] != nu or not 1 <= c.shape[0] <= MAXDEG + 1:
            raise ValueError(f"u: expected shape (deg+1, {nu}) with deg <= {MAXDEG}, got {np.shape(u)}")
        _core.stepper_step(self._cap, float(T), float(H), c)

    @property
    def t(self) -> float:
        return _core.stepper_get(self._cap)[0]

    @property
    def x(self) -> np.ndarray:
        return _core.stepper_get(self._cap)[1]

    @property
    def stats(self) -> dict:
        return _core.stepper_get(self._cap)[2]

    def output(self, u) -> np.ndarray:
        """y = g(t, x, u) at the current state."""
        return _core.stepper_output(self._cap, np.asarray(u, dtype=float).reshape(-1))

    def save(self):
        """Opaque snapshot of the full stepper state."""
        return _core.stepper_save(self._cap)

    def restore(self, state):
        """Return to a snapshot taken by :meth:`save` on this stepper."""
        _core.stepper_restore(self._cap, state)
