"""Subsystem integrators (the "solver" of a stepper). All restart at every macro point, where the coupling input
may jump (kraft2021 §12, moshagen.md §6.8), except CVODE where its ``restart`` option lets it keep its history."""
from __future__ import annotations

import math
import numbers

from . import _check, _core

_KINDS = _core.codes["solver"]
_LINEAR_SOLVERS = _core.codes["linear_solver"]

#: Cap on the micro steps of Euler/RK4 per macro step (``substeps``, or ceil(H/h) for a fixed micro step h); the
#: C core enforces the same cap (CS_MAX_MICRO_STEPS in csrc/integrators/stepper.h) before converting H/h.
MAX_MICRO_STEPS = 10_000_000


class Solver:
    kind = -1

    def spec(self) -> dict:
        """The solver's spec for the C core: a dict of the named parameters of ``cs_solver_opts``
        (``_core.kinds["solver"]["solver"]``); parameters left out keep the C defaults."""
        raise NotImplementedError


class _FixedStep(Solver):
    def __init__(self, substeps: int = 1, h: float | None = None):
        substeps = _check.integer(substeps, "substeps", 1)
        if substeps > MAX_MICRO_STEPS:
            raise ValueError(f"substeps: {substeps} exceeds the cap of {MAX_MICRO_STEPS} micro steps per macro step "
                             f"(cosim.solvers.MAX_MICRO_STEPS)")
        self.substeps = substeps
        self.h = (None if h is None else _check.real(h, "h", positive=True))

    def micro_steps(self, H: float) -> int:
        """Number n of micro steps for the macro step H: ``substeps``, or ceil(H/h) with a fixed micro step h.
        Raises ValueError (naming ``h``) if n would exceed :data:`MAX_MICRO_STEPS`."""
        H = _check.real(H, "H", positive=True)
        if not self.h:
            return self.substeps
        r = H / self.h
        r -= 1e-9 * r
        if not r <= MAX_MICRO_STEPS:
            raise ValueError(f"h: H/h = {H!r}/{self.h!r} needs {r:.6g} micro steps per macro step, more than "
                             f"the cap of {MAX_MICRO_STEPS} (cosim.solvers.MAX_MICRO_STEPS); use a larger h")
        return max(1, math.ceil(r))

    def spec(self):
        return dict(kind=self.kind, substeps=self.substeps, h=self.h or 0.0)

    def __repr__(self):
        extra = f"h={self.h}" if self.h else f"substeps={self.substeps}"
        return f"{type(self).__name__}({extra})"


class Euler(_FixedStep):
    """Explicit Euler with ``substeps`` equal micro steps per macro step (h = H/n), or a fixed micro step ``h``
    (n = ceil(H/h)). Order p = 1; the co-simulation order is min(p, k+1) (moshagen Thm 3.6)."""

    kind = _KINDS["euler"]


class RK4(_FixedStep):
    """Classical Runge-Kutta of order 4 with ``substeps`` micro steps per macro step, or a fixed micro step ``h``."""

    kind = _KINDS["rk4"]


class Exact(Solver):
    """Exact integration of LTI subsystems: x(T+H) = e^{AH} x(T) + ∫ e^{A(H−τ)} B u(T+τ) dτ for the polynomial
    coupling input (busch2016 eq. 20), from the φ functions of A H: Φ = φ_0(AH), Γ_m = H m! φ_{m+1}(AH) B
    (balanced Taylor series with scaling and squaring, accurate to a 40-digit reference also for stiff A). The
    co-simulation error is then the coupling error alone."""

    kind = _KINDS["exact"]

    def spec(self):
        return dict(kind=self.kind, substeps=1)

    def __repr__(self):
        return "Exact()"


_RESTARTS = ("always", "auto", "continuous", "never")


class CVODE(Solver):
    """SUNDIALS CVODE: variable-order, variable-step BDF (``method="bdf"``, stiff) or Adams-Moulton
    (``method="adams"``) with dense Newton iterations, tolerances ``rtol``/``atol``, stopping exactly at each macro
    point. ``max_steps`` per macro step, ``max_step`` limits the micro step.

    ``restart="auto"`` (default) keeps the multistep history across macro points where the input function is
    continuous (:class:`ExtrapolatedInterpolation`, C0 or C1, for every input not interpolated under Gauss-Seidel;
    busch2016 §1: the point of EXTRIPOL for implicit solvers) and re-initialises where it may jump (ZOH, Lagrange,
    Hermite, interpolated Gauss-Seidel inputs). ``"always"`` re-initialises at every macro point. Runs whose steps
    may be rolled back re-initialise at every macro point either way, so that a repeated step is exact.
    ``"continuous"`` keeps the history also where an input that may jump is continuous at the macro point T_N to
    CVODE's tolerance, h ‖f(T_N, x, u_new(T_N)) − f(T_N, x, u_old(T_N))‖_WRMS ≤ 1 with CVODE's next micro step h
    and error weights (Lagrange κ ≥ 1 jumps by its extrapolation error only), and under step control too. A
    rolled-back step restarts from the saved (t, x) (kraft2021 §12.1 reloads the whole solver workspace instead;
    SUNDIALS' public API cannot set the Nordsieck history). A second CVODE instance takes the restarts, so the
    history at T_N survives a step that restarted and was rejected, and dense output. Under exLE/exMD, whose
    comparative integrations restart, the step restarts too, as with ``"auto"``. Results differ from ``"auto"`` by
    about the solver tolerance. The check costs two right-hand sides per unit at each macro point where the input
    values differ. ``"never"`` is ``"continuous"`` without the check: the history is kept across every jump, which
    CVODE's error test then absorbs (kraft2021's IDA at fixed H, which is never re-initialised; the T25 setting,
    docs/chains.md); rolled-back steps and exLE/exMD restart as with ``"continuous"``. Large jumps cost accuracy
    (measured 11x the error of restarting where the jumps were 20-1800 times the tolerance). In every mode a step
    that CVODE cannot complete with a kept history (its error test fails down to the minimum step) is repeated
    once, restarted from T_N.

    ``warm_start=True`` begins a re-initialisation at a state CVODE reached itself (a jump of the input at T_N, a
    rolled-back step, a comparative integration or dense output from T_N) with the step it had there instead of
    CVODE's own estimate: h_0 = min(h_next, ½ √(2 / ‖ÿ‖_WRMS)), CVODE's proposal for its next step, at most half the
    step at which the order-1 start's local error h²/2 ‖ÿ‖ reaches the error test's bound (ÿ from the history where
    the order is ≥ 2; ½ is the bias of CVODE's own estimate). It saves the estimate's right-hand sides (about two
    per restart), not the order-1 start's small steps, and can change step-controlled runs by the solver
    tolerance (docs/chains.md). Off by default, so that runs stay those of earlier versions bit for bit.

    ``linear_solver="dense"`` (default) factors the full Newton matrix; ``"band"`` uses SUNDIALS' band solver with
    half-bandwidths ``bandwidth=(ml, mu)``, or, by default, the bandwidths found from the model's right-hand side at
    the first step (difference quotients at two points). Chains (:func:`cosim.models.oscillator_chain`) have
    bandwidth 3 also as a monolithic system, so that the reference of a 1000-body chain costs O(n_K) per Newton
    solve instead of O(n_K³) (kraft2021 §18.1: KLU vs dense)."""

    kind = _KINDS["cvode"]

    def __init__(self, rtol: float = 1e-8, atol: float = 1e-10, method: str = "bdf", max_steps: int = 100000,
                 max_step: float | None = None, restart: str = "auto", linear_solver: str = "dense",
                 bandwidth=None, warm_start: bool = False):
        if not isinstance(warm_start, bool):
            raise TypeError(f"warm_start: expected True or False, got {type(warm_start).__name__}")
        self.warm_start = warm_start
        if linear_solver not in _LINEAR_SOLVERS:
            raise ValueError(f"linear_solver: must be 'dense' or 'band', got {linear_solver!r}")
        self.linear_solver = linear_solver
        if bandwidth is not None:
            if linear_solver != "band":
                raise ValueError("bandwidth: only with linear_solver='band'")
            if not (isinstance(bandwidth, (tuple, list)) and len(bandwidth) == 2 and all(
                    isinstance(b, numbers.Integral) and not isinstance(b, bool) and 0 <= b < 2**31 for b in bandwidth)):
                raise ValueError(f"bandwidth: expected a pair (ml, mu) of non-negative ints, got {bandwidth!r}")
            bandwidth = (int(bandwidth[0]), int(bandwidth[1]))
        self.bandwidth = bandwidth
        self.rtol, self.atol = _check.real(rtol, "rtol", positive=True), _check.real(atol, "atol", positive=True)
        if restart not in _RESTARTS:
            raise ValueError(f"restart: must be 'always', 'auto', 'continuous' or 'never', got {restart!r}")
        self.restart = restart
        if method not in ("bdf", "adams"):
            raise ValueError(f"method: must be 'bdf' or 'adams', got {method!r}")
        self.method = method
        self.max_steps = _check.integer(max_steps, "max_steps", 1, 2**31 - 1)
        self.max_step = (None if max_step is None else _check.real(max_step, "max_step", positive=True))

    def spec(self):
        ml, mu = self.bandwidth if self.bandwidth is not None else (-1, -1)
        return dict(kind=self.kind, substeps=1, rtol=self.rtol, atol=self.atol, adams=int(self.method == "adams"),
                    max_steps=self.max_steps, max_h=self.max_step or 0.0, continue_smooth=self.restart != "always",
                    continue_agreeing=self.restart in ("continuous", "never"),
                    continue_jumps=self.restart == "never", warm_start=int(self.warm_start),
                    linear_solver=_LINEAR_SOLVERS[self.linear_solver], band_lower=ml, band_upper=mu)

    def __repr__(self):
        extra = f", linear_solver='band'" if self.linear_solver == "band" else ""
        extra += f", restart={self.restart!r}" if self.restart != "auto" else ""
        extra += ", warm_start=True" if self.warm_start else ""
        return f"CVODE(rtol={self.rtol}, atol={self.atol}, method={self.method!r}{extra})"


class AB2(Solver):
    """Adams-Bashforth 2 with ``substeps`` = n equal micro steps per macro step (h = H/n), restarted at every macro
    point with a one-step ``starter``: ``"euler"`` (explicit Euler) or ``"heun"`` (moshagen §4.2.3, the multistep
    pitfall: the starter's error recurs at every exchange, so an Euler starter drops the co-simulation to order 1
    even with H = n h, a Heun starter keeps order 2)."""

    kind = _KINDS["ab2"]
    STARTERS = dict(_core.codes["ab2_starter"])

    def __init__(self, starter: str = "heun", substeps: int = 4):
        if not isinstance(starter, str) or starter not in self.STARTERS:
            raise ValueError(f"starter: must be 'euler' or 'heun', got {starter!r}")
        self.starter, self.substeps = starter, _check.integer(substeps, "substeps", 1, MAX_MICRO_STEPS)

    def spec(self):
        return dict(kind=self.kind, substeps=self.substeps, starter=self.STARTERS[self.starter])

    def __repr__(self):
        return f"AB2(starter={self.starter!r}, substeps={self.substeps})"


def as_solver(obj, name="solver") -> Solver:
    if isinstance(obj, Solver):
        return obj
    if isinstance(obj, str):
        table = {"cvode": CVODE, "rk4": RK4, "euler": Euler, "exact": Exact}
        if obj.lower() in table:
            return table[obj.lower()]()
        raise ValueError(f"{name}: unknown solver {obj!r}; use one of {sorted(table)} or a solver object")
    raise TypeError(f"{name}: expected a cosim solver (CVODE, RK4, Euler, Exact), got {type(obj).__name__}")
