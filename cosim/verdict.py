"""The verdict on a finished run: did the coupling stay stable? (issue 30, part 2)

A run raises :class:`cosim.DivergenceError` only for what cannot be a result: a non-finite value or a state beyond
the absolute ``divergence_bound`` (and, if asked for, growth beyond ``divergence_growth``). Whether the coupling was
stable is judged here, with what the run knows, by one of two rules:

1. **spectral radius** (all-LTI systems whose settings the linear analysis covers: fixed H, Jacobi or
   Gauss-Seidel, a polynomial approximation, no coupling method): ρ(Ω) of the scheme's amplification matrix at the
   run's H (busch2016 eq. 25, :meth:`cosim.Result.spectral_radius`). Unstable iff ρ > 1 + ``RHO_TOL``: the
   coupling errors then grow by ρ per macro step, however short the run. (The analysis assumes exact subsystem
   integration; with CVODE/RK4 it judges the coupling, not the integrators.)
2. **amplitude** (every other run): geometric growth of a coupled output sustained to the end of the run
   (:func:`cosim.metrics.sustained_growth`): over the last 6 of 20 equal windows the peak grows in every window
   and by at least 1.2 per window on average. A forced physical response (growth like a power of t) passes; an
   unstable coupling (growth like ρ^N) does not.

An unstable verdict sets ``res.status = Result.UNSTABLE`` (``res.success`` False, ``res.state == "unstable"``),
puts the reason into ``res.message`` and issues a :class:`cosim.CouplingInstabilityWarning`.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from . import metrics, stability

#: ρ(Ω) above 1 + RHO_TOL is unstable (the eigenvalue solver's rounding of a ρ of exactly 1, e.g. undamped modes)
RHO_TOL = 1e-9
#: the spectral-radius rule is used up to this many states in total (the analysis forms a dense Ω)
RHO_MAX_STATES = 100
#: ρ of the last runs by content (matrices, connections, settings, H): a loop of runs with the same system pays
#: the analysis once, not per run (a short run of the engine costs about as much as the analysis)
_RHO_CACHE: OrderedDict = OrderedDict()
_RHO_CACHE_SIZE = 64


@dataclass
class Verdict:
    """``stable``; ``rule``: "spectral radius" or "amplitude"; ``value``: ρ(Ω), or the growth factor over the
    sustained windows (1.0 where nothing grew); ``message``: the reason, for ``Result.message``."""

    stable: bool
    rule: str
    value: float
    message: str


def _rho(result):
    """ρ(Ω) of the run's settings, or None where the linear analysis does not cover them."""
    opts = result.options or {}
    if opts.get("coupling") is not None or opts.get("step_control") is not None or opts.get("startup"):
        return None
    system = result.system
    if not all(getattr(s, "is_lti", False) for s in system.subsystems) or len(system.subsystems) < 2:
        return None
    if sum(s.nx for s in system.subsystems) > RHO_MAX_STATES:
        return None
    try:
        key = _rho_key(system, opts)
    except (AttributeError, TypeError, ValueError):
        key = None
    if key is not None and key in _RHO_CACHE:
        _RHO_CACHE.move_to_end(key)
        return _RHO_CACHE[key]
    try:
        rho = float(stability.result_spectral_radius(result))
    except (ValueError, TypeError, ArithmeticError):
        rho = None
    if key is not None:
        _RHO_CACHE[key] = rho
        if len(_RHO_CACHE) > _RHO_CACHE_SIZE:
            _RHO_CACHE.popitem(last=False)
    return rho


def _rho_key(system, opts):
    """Everything ρ(Ω) depends on, by value: the subsystems' sizes and matrices, L and r, scheme, approximation,
    order, update, H and the grid."""
    approx = opts.get("approximation")
    order = opts.get("order")
    grid = opts.get("grid")
    return (tuple((s.nx, s.nu, s.ny) for s in system.subsystems), stability._pack(system).tobytes(),
            str(opts.get("scheme")), repr(approx),
            None if order is None else tuple(map(str, order)), str(opts.get("update")), float(opts["H"]),
            None if grid is None else np.asarray(grid, dtype=float).tobytes())


def judge(result) -> Verdict:
    """The verdict on a finished (or stopped) run; see the module's documentation for the rules."""
    rho = _rho(result)
    if rho is not None:
        H = (result.options or {}).get("H")
        if rho > 1.0 + RHO_TOL:
            return Verdict(False, "spectral radius", rho,
                           f"coupling unstable: the spectral radius of the macro step is rho(Omega) = {rho:.6g} > 1 "
                           f"at H = {H:.6g} (coupling errors grow by this factor per macro step); reduce H or change "
                           f"the approximation, scheme or update")
        return Verdict(True, "spectral radius", rho, "")
    found = metrics.sustained_growth(result)
    if found is None:
        return Verdict(True, "amplitude", 1.0, "")
    name, factor = found
    return Verdict(False, "amplitude", factor,
                   f"coupling unstable: {name} grew geometrically to the end of the run (by {factor:.3g} over its "
                   f"last {metrics.GROWTH_SUSTAINED} of {metrics.GROWTH_WINDOWS} windows, at least "
                   f"{metrics.GROWTH_PER_WINDOW:g} per window on average); reduce H or change the approximation, "
                   f"scheme or update")
