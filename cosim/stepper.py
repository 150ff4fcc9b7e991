"""A single subsystem with its integrator, stepped by hand (like an FMI co-simulation unit).

Useful to build custom masters in Python and to inspect rollback: ``save()`` returns the complete stepper state
(every integrator restarts at macro points, so time, states and counters are the whole state) and ``restore()``
reinstates it exactly, so a repeated macro step reproduces the first one bit for bit.

A :class:`cosim.FMU` is stepped as the FMU itself: a co-simulation FMU by its own ``doStep``, a model-exchange FMU
integrated by ``solver`` with its events. Its snapshots hold the FMU's state (``fmi2GetFMUstate`` /
``fmi3GetFMUState``), so ``save()`` needs an FMU that declares ``canGetAndSetFMUState``; a snapshot belongs to the
stepper (the FMU instance) that took it.
"""
from __future__ import annotations

import numpy as np

import math

from . import _core
from .approximations import MAXDEG
from .solvers import CVODE, Exact, Solver, as_solver
from . import _check
from .fmu import FMU
from .subsystem import Subsystem


def _real_array(value, name):
    """A float64 array from real input: complex, string or object input that is not numeric is rejected."""
    if value is None:
        raise TypeError(f"{name}: expected an array of real numbers, got None")
    try:
        a = np.asarray(value)
        if a.dtype.kind == "c":
            raise TypeError(f"{name}: expected real numbers, got complex values")
        if a.dtype.kind not in "biufO":
            raise TypeError(f"{name}: expected an array of real numbers, got dtype {a.dtype}")
        return np.asarray(a, dtype=float)
    except (ValueError, OverflowError):
        raise ValueError(f"{name}: expected an array of real numbers") from None
    except TypeError as e:
        if str(e).startswith(name + ":"):
            raise
        raise TypeError(f"{name}: expected an array of real numbers") from None


class Stepper:
    """``Stepper(subsystem, solver=CVODE(), x0=None, t0=0.0)``.

    ``do_step(T, H, u)`` integrates over [T, T+H] with the input polynomial u(T + sH) = Σ_m u[m] s^m, s ∈ [0, 1]
    (``u`` of shape (deg+1, nu); a 1-D array of length nu is a constant input).

    For a :class:`cosim.FMU` the FMU is instantiated and initialised at ``t0`` (its start values as set on the
    FMU object); ``x0=None`` keeps a model-exchange FMU's own initial states at ``t0``. Inputs of a co-simulation
    FMU are held at u(T) over the step (the FMU's input derivatives where it takes them). The FMU's log messages
    go to its ``log_callback`` or wait for :meth:`cosim.FMU.flush_log`."""

    def __init__(self, subsystem: Subsystem, solver: Solver | str = CVODE(), x0=None, t0: float = 0.0):
        if not isinstance(subsystem, Subsystem):
            raise TypeError(f"subsystem: expected a cosim subsystem, got {type(subsystem).__name__}")
        solver = as_solver(solver)
        if isinstance(solver, Exact) and not subsystem.is_lti:
            raise ValueError(f"solver: Exact() integrates LTI subsystems only; {subsystem.name!r} is not LTI")
        t0 = _check.real(t0, "t0")
        self.subsystem, self.solver = subsystem, solver
        if isinstance(subsystem, FMU):
            x0 = None if x0 is None else _check.vector(x0, "x0", subsystem.nx)
            try:
                self._cap = _core.stepper_new_fmu(subsystem.spec(), solver.spec(), x0, t0)
            finally:
                subsystem.flush_log()
            return
        x0 = subsystem.x0 if x0 is None else _check.vector(x0, "x0", subsystem.nx)
        self._cap = _core.stepper_new(subsystem.spec(), solver.spec(), x0, t0)

    def do_step(self, T: float, H: float, u):
        """Integrate over [T, T+H] (T, H finite, H > 0). Raises :class:`cosim.SolverError` if the integrator or a
        callback fails and :class:`cosim.DivergenceError` if the state becomes non-finite."""
        T, H = _check.real(T, "T"), _check.real(H, "H")
        if not H > 0:
            raise ValueError(f"H: must be positive, got {H!r}")
        if not math.isfinite(T + H):
            raise ValueError(f"H: T + H = {T!r} + {H!r} is not finite")
        if hasattr(self.solver, "micro_steps"):  # fixed-step solvers (Euler, RK4)
            self.solver.micro_steps(H)  # ValueError naming h beyond MAX_MICRO_STEPS micro steps
        nu = self.subsystem.nu
        c = _real_array(u, "u")
        if c.ndim == 1:
            c = c.reshape(1, -1)
        if c.ndim != 2 or c.shape[1] != nu or not 1 <= c.shape[0] <= MAXDEG + 1:
            raise ValueError(f"u: expected shape (deg+1, {nu}) with deg <= {MAXDEG}, got {np.shape(u)}")
        if not np.all(np.isfinite(c)):
            raise ValueError("u: contains NaN or infinite values")
        if isinstance(self.subsystem, FMU):
            try:
                _core.stepper_step(self._cap, T, H, c)
            except BaseException:
                self.subsystem.flush_log()   # the FMU's own account of the failure
                raise
            return
        _core.stepper_step(self._cap, T, H, c)

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
        return _core.stepper_output(self._cap, _real_array(u, "u").reshape(-1))

    def save(self):
        """Opaque snapshot of the full stepper state.

        For an FMU the snapshot holds the FMU state (``fmi2GetFMUstate`` / ``fmi3GetFMUState``); ValueError if the
        FMU does not declare ``canGetAndSetFMUState``."""
        fmu = self.subsystem
        if isinstance(fmu, FMU) and not fmu.can_rollback:
            name = "canGetAndSetFMUstate" if fmu.fmi_version == 2 else "canGetAndSetFMUState"
            raise ValueError(f"save: FMU {fmu.name!r} cannot save its state: its model description does not declare "
                             f"{name}=\"true\" for {'co-simulation' if fmu.kind == 'cs' else 'model exchange'}")
        return _core.stepper_save(self._cap)

    def restore(self, state):
        """Return to a snapshot taken by :meth:`save` on this stepper (or one of the same sizes nx, nu).

        Raises TypeError if ``state`` is not a snapshot and ValueError if it was taken from a stepper of other
        sizes."""
        _core.stepper_restore(self._cap, state)
