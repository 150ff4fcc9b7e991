"""Responses of a run: what a study records per run, from the run's result and its monolithic reference.

A study's ``responses`` is a function ``f(res, ref) -> {name: number}`` (``ref`` is None without a reference) or a
list of the names below. For a failed run (diverged, solver failure) the responses are computed from its partial
result where possible (NaN otherwise).

* ``eps_mono``: ε_mono,global of genser2020 eq. 3.9–3.10 (time mean, §11.1) against the monolithic reference;
* ``eps_mono_sat``: the same saturated at 1 (genser2020 §12.1's DoE target; non-finite or failed runs count 1);
* ``stable``: genser2020's 20 % amplitude rule (§11.3; :func:`cosim.metrics.is_stable`);
* ``growth``: the largest amplitude growth factor of a coupled output (:func:`cosim.metrics.max_growth`);
* ``max_rel``, ``nrmse``: the overall errors of :meth:`cosim.Result.error_to`;
* ``macro_steps``: the number of macro steps done.

:func:`eps_mono` and :func:`amplitude_stable` are minimal versions for the study layer (cosim.metrics has no
such functions yet).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import metrics
from ..result import EPS_MONO_EPSILON, Result
from .factors import check_name

__all__ = ["eps_mono", "amplitude_stable", "BUILTIN", "UNITS", "as_responses"]

_AGG = ("mean", "max", "final")
_FAILED = (4, 5)   # Result.status of a run that ended in a solver failure or diverged (cosim.simulate)


def eps_mono(res, ref, saturate=None, time="mean") -> float:
    """ε_mono,global (genser2020 eq. 3.9–3.10, aggregated over the macro points by ``time``: "mean", "max" or
    "final") of the run ``res`` against the monolithic reference ``ref``; with ``saturate`` (e.g. 1.0, as genser2020
    §12.1) the value is min(ε, saturate), and a non-finite ε or a failed run gives ``saturate``."""
    if ref is None:
        raise ValueError("ref: eps_mono needs the monolithic reference (Study(reference=True))")
    if saturate is not None:
        if isinstance(saturate, bool) or not isinstance(saturate, numbers.Real) or not saturate > 0:
            raise ValueError(f"saturate: expected a positive number or None, got {saturate!r}")
        if getattr(res, "status", 0) in _FAILED:
            return float(saturate)
    e = _eps_mono_same_grid(res, ref, time)
    if e is None:
        e = float(res.error_to(ref, eps_mono_time=time)["eps_mono"])
    if saturate is not None:
        return float(saturate) if not math.isfinite(e) else min(e, float(saturate))
    return e


def _eps_mono_same_grid(res, ref, time):
    """ε_mono,global of :meth:`cosim.Result.error_to` for the common case of a study (the reference on the run's
    own grid), computed from the outputs alone with the same operations in the same order (the same number to the
    last bit), the reference's denominators (running range + ε, eq. 3.10) cached on the reference. None where
    error_to must decide (other grids, other shapes, bad arguments: it raises the errors)."""
    if (type(res) is not Result or type(ref) is not Result or time not in _AGG or len(res.t) == 0
            or ref.X.shape[1] != res.X.shape[1] or ref.Y.shape[1] != res.Y.shape[1]
            or len(ref.t) != len(res.t) or not np.array_equal(ref.t, res.t)):
        return None
    Zr, Z = ref.Y, res.Y
    if Z.shape[1] == 0:
        return 0.0
    cache = ref.__dict__.get("_doe_eps_den")
    if cache is None or cache[0] is not Zr:
        # genser2020 eq. 3.10: the running range of the reference over the macro points up to N, plus ε
        rng = np.maximum.accumulate(Zr, axis=0) - np.minimum.accumulate(Zr, axis=0)
        cache = (Zr, rng + EPS_MONO_EPSILON)
        ref.__dict__["_doe_eps_den"] = cache
    term = np.abs(Z - Zr) / cache[1]
    eps = term.mean(axis=0) if time == "mean" else term.max(axis=0) if time == "max" else term[-1]
    system = res.system
    total = 0.0
    for a, b in zip(system.out_offset[:-1], system.out_offset[1:]):
        if b > a:
            v = float(np.mean(eps[a:b]))
            total += v * v
    return float(math.sqrt(total))


def amplitude_stable(res) -> bool:
    """genser2020 §11.3: True unless a coupled output's amplitude over the last 20 % of the run exceeds that over
    the first 20 % (non-finite values and diverged runs are unstable)."""
    return metrics.is_stable(res)


def _err(key):
    def f(res, ref):
        if ref is None:
            raise ValueError(f"responses: {key!r} needs the monolithic reference (Study(reference=True))")
        return float(res.error_to(ref)[key])
    return f


BUILTIN = {
    "eps_mono": lambda res, ref: eps_mono(res, ref),
    "eps_mono_sat": lambda res, ref: eps_mono(res, ref, saturate=1.0),
    "stable": lambda res, ref: amplitude_stable(res),
    "growth": lambda res, ref: metrics.max_growth(res),
    "max_rel": _err("max_rel"),
    "nrmse": _err("nrmse"),
    "macro_steps": lambda res, ref: int(len(res.t) - 1),
}
NEEDS_REFERENCE = {"eps_mono", "eps_mono_sat", "max_rel", "nrmse"}
#: units of the built-in responses for the axes of the DoE plots: relative errors, growth factors, the stability flag
#: (its mean is the stable fraction) and the step count are dimensionless ("-")
UNITS = {name: "-" for name in BUILTIN}


class Named:
    """Responses given by name (picklable, unlike a lambda over BUILTIN)."""

    def __init__(self, names):
        self.names = tuple(names)

    def __call__(self, res, ref):
        out = {}
        for n in self.names:
            try:
                out[n] = BUILTIN[n](res, ref)
            except Exception:
                if getattr(res, "status", 0) == 0:
                    raise
                out[n] = 1.0 if n == "eps_mono_sat" else math.nan
        return out

    def __repr__(self):
        return f"responses{list(self.names)}"


def as_responses(responses, reference):
    """A callable f(res, ref) -> dict from ``responses`` (a callable, a list of built-in names or None = the
    defaults: eps_mono and stable with a reference, stable and growth without)."""
    if responses is None:
        responses = ["eps_mono", "stable"] if reference else ["stable", "growth"]
    if callable(responses):
        return responses
    if isinstance(responses, str):
        responses = [responses]
    if not isinstance(responses, (list, tuple)) or not responses:
        raise TypeError(f"responses: expected a function f(res, ref) -> dict or a list of names of "
                        f"{sorted(BUILTIN)}, got {responses!r}")
    unknown = [n for n in responses if n not in BUILTIN]
    if unknown:
        raise ValueError(f"responses: unknown response name(s) {unknown}; known: {sorted(BUILTIN)}")
    if not reference:
        need = [n for n in responses if n in NEEDS_REFERENCE]
        if need:
            raise ValueError(f"responses: {need} need the monolithic reference; pass reference=True")
    return Named(responses)


def to_row(values):
    """A response value dict as plain Python scalars; raises TypeError naming a bad entry."""
    if not isinstance(values, dict):
        if isinstance(values, (numbers.Number, np.generic)):
            values = {"response": values}
        else:
            raise TypeError(f"responses: the function must return a dict name -> number, got "
                            f"{type(values).__name__}")
    out = {}
    for k, v in values.items():
        check_name(k, "responses")
        t = type(v)
        if t is float or t is bool or t is int or t is str:   # the common case, without the ABC checks below
            out[k] = v
        elif isinstance(v, (bool, np.bool_)):
            out[k] = bool(v)
        elif isinstance(v, (numbers.Integral, np.integer)):
            out[k] = int(v)
        elif isinstance(v, (numbers.Real, np.floating)):
            out[k] = float(v)
        elif isinstance(v, str):
            out[k] = v
        else:
            raise TypeError(f"responses: value of {k!r} must be a number, bool or string, got {type(v).__name__}")
    return out
