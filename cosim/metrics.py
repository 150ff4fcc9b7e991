"""Amplitude measures of a run: the growth of signals and genser2020's 20 % stability rule.

* :func:`amplitudes`: max |s| of every signal over the first and the last part (``window``, a fraction of the
  run's time span) of a run.
* :func:`growth`: per signal, the amplitude over the last 20 % of the run divided by the amplitude over the first
  20 % (genser2020 §11.3; "amplitude" = max |·| in the window, the spec's [AMB] default).
* :func:`is_stable`: the 20 % rule: a run is **unstable** if, for at least one coupled output signal, the amplitude
  in the last 20 % of the simulation time is greater than the amplitude in the first 20 %; non-finite values count
  as unstable.
* :func:`divergence`: the criterion :func:`cosim.simulate` applies after every run: the largest growth of a state
  or output after the first ``window`` of the run relative to its amplitude within it
  (:data:`cosim.defaults.DIVERGENCE_GROWTH`).

The coupled outputs of a system are the outputs y that some connection u = L y + r reads (a non-zero column of
L); a system without such connections is judged on all its outputs (or its states if it has none).
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import _core, defaults

__all__ = ["amplitudes", "growth", "max_growth", "is_stable", "divergence", "Divergence", "sustained_growth"]

# Signals whose amplitude in the early window is below this fraction of the largest early amplitude of their kind
# (states or outputs) are measured against that floor instead (a state that starts at exactly 0 is not "infinitely
# grown" by any later motion).
_FLOOR = 1e-3
# The divergence criterion needs this many macro points in the early window (fewer: the first window does not
# resolve the early amplitude, e.g. a velocity starting from rest).
_MIN_EARLY_POINTS = 5
# divergence(): a signal whose early amplitude (after the group floor) is at most _REST times the largest |s| it
# reaches after the early window is at rest there: below the double round-off of its own later scale (a chain
# forced from rest, whose early values are 1e-39, not 0). Exactly 0 is the limiting case. The engine's absolute
# bound (1e10 max(1, |x_0|)) stops a run from a non-negligible start long before such a ratio.
_REST = float(np.finfo(float).eps)
#: divergence(): a signal counts as still growing when max |s| over the last window exceeds GROWING times max |s|
#: over the window before it
GROWING = 2.0


def _window(window, name="window"):
    if window is None:
        return None
    if isinstance(window, bool) or not isinstance(window, numbers.Real):
        raise TypeError(f"{name}: expected a fraction of the run in (0, 0.5], got {window!r}")
    w = float(window)
    if not 0.0 < w <= 0.5:
        raise ValueError(f"{name}: must be a fraction of the run in (0, 0.5], got {window!r}")
    return w


def _series(t, values):
    t = np.asarray(t, dtype=float).reshape(-1)
    V = np.asarray(values, dtype=float)
    if V.ndim == 1:
        V = V.reshape(-1, 1)
    if V.ndim != 2 or V.shape[0] != t.size:
        raise ValueError(f"values: expected shape ({t.size}, n) matching t, got {np.shape(values)}")
    if t.size < 2:
        raise ValueError(f"t: need at least two time points, got {t.size}")
    if not np.all(np.isfinite(t)) or not np.all(np.diff(t) > 0):
        raise ValueError("t: must be finite and strictly increasing")
    return t, V


def amplitudes(t, values, window=None):
    """(early, late): max |s| per column of ``values`` over t ≤ t_0 + w (t_n − t_0) and over
    t ≥ t_n − w (t_n − t_0), w = ``window`` (default :data:`cosim.defaults.STABILITY_WINDOW` = 0.2). A column with a non-finite value has
    amplitude inf in the window that contains it."""
    w = _window(window) or defaults.STABILITY_WINDOW
    t, V = _series(t, values)
    span = t[-1] - t[0]
    # t is strictly increasing: the windows t <= t_0 + w span and t >= t_n - w span are a prefix and a suffix
    k_early = int(np.searchsorted(t, t[0] + w * span * (1 + 1e-12), side="right"))
    k_late = int(np.searchsorted(t, t[-1] - w * span * (1 + 1e-12), side="left"))
    return _window_amplitude(V[:k_early]), _window_amplitude(V[k_late:])


def _window_amplitude(V):
    """max |v| per column, inf for a column with a non-finite value (+ 0.0: no signed zero)."""
    a = _absmax(V) + 0.0
    a[~np.isfinite(a)] = np.inf
    return a


def _absmax(V):
    """max |v| per column without a copy of V (NaN propagates). Long narrow records (many macro points, few
    signals) are reduced column by column: NumPy's axis-0 reduction of an (n, 2) array is about 30x slower."""
    if V.shape[0] >= 8 * V.shape[1]:
        out = np.empty(V.shape[1])
        for j in range(V.shape[1]):
            c = V[:, j]
            out[j] = max(c.max(), -c.min()) if c.size else -np.inf
        return out
    return np.maximum(V.max(axis=0), -V.min(axis=0))


def _ratio(late, early):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(early > 0, late / np.where(early > 0, early, 1.0), np.where(late > 0, np.inf, 1.0))
    r[~np.isfinite(early) | ~np.isfinite(late)] = np.inf
    return r


def _is_result(obj):
    """Whether ``obj`` is a run's result (holds what :class:`cosim.Result` holds: ``t``, ``X``, ``Y`` and its
    ``system``). Judged by shape, not by type: the metrics sit below the result type, which uses them."""
    return all(hasattr(obj, a) for a in ("t", "X", "Y", "system"))


def _check_result(result, name):
    if not _is_result(result):
        raise TypeError(f"{name}: expected a cosim Result, got {type(result).__name__}")


def _coupled_outputs(system):
    cols = np.unique(system.coupling[1])
    return cols


def _result_signals(result):
    """(values, names) the 20 % rule looks at: the coupled outputs, else all outputs, else the states."""
    _check_result(result, "result")
    system = result.system
    Y = np.asarray(result.Y)
    if Y.ndim == 2 and Y.shape[1] > 0 and Y.shape[1] == int(system.out_offset[-1]):
        names = system.signal_names("y")
        cols = _coupled_outputs(system)
        if cols.size == 0:
            cols = np.arange(Y.shape[1])
        return Y[:, cols], [names[i] for i in cols]
    return np.asarray(result.X), system.signal_names("x")


_STATUS_DIVERGED = _core.codes["status"]["diverged"]  # Result.status of a run stopped or flagged as diverged (CS_ERR_DIVERGED, cosim.simulate)


def _diverged(result):
    return getattr(result, "status", 0) == _STATUS_DIVERGED


def is_diverged(result) -> bool:
    """The run was stopped or flagged as diverged (the result of a :class:`cosim.DivergenceError`)."""
    return _diverged(result)


def growth(result, window=None) -> dict:
    """Per coupled output signal of a run: max |y| over the last ``window`` of the run divided by max |y| over
    its first ``window`` (default 20 %, genser2020 §11.3). Returns {signal name: factor}; inf for a signal with
    non-finite values or that starts at exactly 0 and later moves, 1.0 for a signal that is 0 in both windows.
    A run with a single macro point has factor 1.0 (inf if it was stopped as diverged)."""
    V, names = _result_signals(result)
    if len(result.t) < 2:
        return dict.fromkeys(names, math.inf if _diverged(result) else 1.0)
    early, late = amplitudes(result.t, V, window)
    return dict(zip(names, _ratio(late, early).tolist()))


def max_growth(result, window=None) -> float:
    """The largest factor of :func:`growth` (what ``Result.growth`` returns)."""
    g = growth(result, window)
    return max(g.values()) if g else 1.0


def is_stable(result, window=None) -> bool:
    """genser2020's 20 % amplitude rule (§11.3): False if, for at least one coupled output, max |y| over the last
    20 % of the run is greater than max |y| over the first 20 %, or if a value is not finite; True otherwise.

    A run stopped or flagged by :class:`cosim.DivergenceError` (status of its ``result``) is not stable."""
    if _diverged(result):
        return False
    return bool(max_growth(result, window) <= 1.0)


#: sustained_growth(): windows of the run, windows at its end that must each grow, the growth per window, and the
#: roughness (max |second difference over macro points| / max |y| in the last window) of an unstable mode
GROWTH_WINDOWS, GROWTH_SUSTAINED, GROWTH_PER_WINDOW, GROWTH_ROUGHNESS = 20, 6, 1.2, 0.5


def sustained_growth(result):
    """The amplitude rule of the run verdict (:func:`cosim.verdict.judge`) for runs without a spectral radius:
    geometric growth of a coupled output, sustained to the end of the run.

    The run is cut into ``GROWTH_WINDOWS`` = 20 windows of equal time; p_k = max |y| over window k. A signal grows
    geometrically when, over the last ``GROWTH_SUSTAINED`` = 6 windows, p grows in every window and by
    ``GROWTH_PER_WINDOW`` (1.2) per window on geometric average, and the growing part is not resolved by the macro
    grid: over the last window (at least the last three macro points), max |y_{N+1} - 2 y_N + y_{N-1}| >=
    ``GROWTH_ROUGHNESS`` max |y| (0.5; a sampled
    sinusoid of ω H has 2 (1 - cos ω H), so 0.5 means fewer than about 9 macro steps per period). A numerically
    unstable coupling grows
    like rho^N (a constant factor per window) in a mode near the macro step's own scale; a forced physical response
    grows at most like a power t^q of time (its mean ratio (20/14)^(q/6) per window over the last 6 stays below 1.2
    for q < 3.07) or, when it grows faster (a force ramped like sin^95), is resolved by the macro grid of an
    accurate run. The scale is the signal's own (no threshold on the early amplitude, so a run forced from rest is
    not "grown" by starting at 0); a signal below 1e-12 of the largest coupled amplitude counts as at rest.

    Returns (name, factor over the sustained windows) of the fastest-growing such signal, or None. Runs with
    fewer than 2 points per window are not judged (None)."""
    V, names = _result_signals(result)
    t = np.asarray(result.t, dtype=float)
    n_w, m = GROWTH_WINDOWS, GROWTH_SUSTAINED
    if len(t) < 2 * n_w or V.shape[1] == 0:
        return None
    edges = np.searchsorted(t, t[0] + (t[-1] - t[0]) * np.arange(1, n_w) / n_w, side="right")
    absV = np.abs(V)
    p = np.array([np.max(w, axis=0) if len(w) else np.zeros(V.shape[1]) for w in np.split(absV, edges)])
    if not np.all(np.isfinite(p)):
        j = int(np.argmax(~np.all(np.isfinite(p), axis=0)))
        return names[j], math.inf
    tail = p[-m - 1:]
    floor = 1e-12 * max(float(np.max(p)), np.finfo(float).tiny)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = tail[1:] / tail[:-1]
    # growth in every window, by GROWTH_PER_WINDOW per window on (geometric) average: the peak of a growing
    # oscillation sampled by windows of a few periods wobbles from window to window (ratios 1.1 then 2 at rho^10 = 1.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_ratio = (tail[-1] / tail[0]) ** (1.0 / m)
    grows = np.all(ratios >= 1.0, axis=0) & (mean_ratio >= GROWTH_PER_WINDOW) & (tail[-1] > floor)
    last = V[min(edges[-1], len(V) - 3):]         # at least three macro points: a step-controlled run may take
    if np.any(grows):                               # fewer in its last window
        rough = np.max(np.abs(np.diff(last, 2, axis=0)), axis=0) >= GROWTH_ROUGHNESS * np.max(np.abs(last), axis=0)
        grows &= rough
    if not np.any(grows):
        return None
    factor = np.where(grows, tail[-1] / np.maximum(tail[0], np.finfo(float).tiny), 0.0)
    j = int(np.argmax(factor))
    return names[j], float(factor[j])


class Divergence:
    """What :func:`divergence` found: ``signal`` (name), ``factor`` (growth relative to the early amplitude),
    ``t`` (first time the signal exceeded the allowed amplitude), ``early`` (reference amplitude A_0, see
    :func:`divergence`),
    ``peak`` (max |s| after the early window), ``window`` and ``limit`` (the growth factor allowed)."""

    def __init__(self, signal, factor, t, early, peak, window, limit):
        self.signal, self.factor, self.t, self.early, self.peak = signal, factor, t, early, peak
        self.window, self.limit = window, limit

    def message(self):
        return (f"co-simulation diverged: {self.signal} grew by a factor {self.factor:.3g} (|{self.signal}| = "
                f"{self.peak:.3g} after the first {self.window:.0%} of the run, where its amplitude was "
                f"{self.early:.3g}; it passed {self.limit:g} times that at t = {self.t:.10g}). The coupling is "
                "probably numerically unstable at this H: check res.spectral_radius() (LTI) and reduce H or "
                "change the approximation/scheme. The result is attached as .result; to change the criterion pass "
                "divergence_growth=<factor> (math.inf turns it off) or set cosim.defaults.DIVERGENCE_GROWTH")

    def __repr__(self):
        return f"Divergence({self.signal!r}, factor={self.factor:.3g}, t={self.t:.6g})"


def divergence(t, groups, limit=None, window=None):
    """The relative divergence criterion of :func:`cosim.simulate`.

    ``groups``: a sequence of (values (n, m), names) pairs (e.g. the states and the outputs of a run). For every
    signal s, A_0 = max |s| over the first ``window`` (default 20 %) of the run, floored at 1e-3 times the largest
    A_0 of its group; the run has diverged if max |s| after that window exceeds ``limit`` · A_0 (default
    :data:`cosim.defaults.DIVERGENCE_GROWTH` = 1e3) and s is still growing at the end of the run: max |s| over the
    last window exceeds :data:`GROWING` (2) times max |s| over the window before it. A numerical instability grows
    geometrically to the end; a solution that grows physically (a system forced from rest, a pilot command that
    starts late) levels off and is not flagged. Signals at rest in the early window are not judged: A_0 (after
    the floor) at most the double round-off (2.2e-16) times max |s| after the window, e.g. 0 throughout the early
    window of a group that is all 0 there, or the 1e-39 of a chain forced from rest. Non-finite values count as
    diverged. Needs at least 5 macro points in the early window; shorter runs return None (only the absolute
    bound of the engine applies to them).

    Returns the worst offender as a :class:`Divergence`, or None."""
    limit = defaults.DIVERGENCE_GROWTH if limit is None else limit
    if isinstance(limit, bool) or not isinstance(limit, numbers.Real):
        raise TypeError(f"limit: expected a growth factor > 1 or math.inf, got {limit!r}")
    if not limit > 1:
        raise ValueError(f"limit: must be a growth factor > 1 or math.inf, got {limit!r}")
    w = _window(window) or defaults.DIVERGENCE_WINDOW
    t = np.asarray(t, dtype=float).reshape(-1)
    if not math.isfinite(limit) or t.size < 2:
        return None
    if not np.all(np.isfinite(t)) or not np.all(np.diff(t) > 0):
        raise ValueError("t: must be finite and strictly increasing")
    return _divergence(t, groups, limit, w)


def _divergence(t, groups, limit, w):
    """:func:`divergence` on checked arguments: t finite and strictly increasing (as in every Result), limit > 1,
    w the window fraction (cosim.simulate calls this after each run). The criterion runs in C
    (csrc/analysis/growth.c, one pass over the records per window bound) with the constants defined here. The names
    of a group may be a function that makes them: they are needed only for an offender (simulate's short runs)."""
    if not math.isfinite(limit) or t.size < 2:
        return None
    worst = None
    for values, names in groups:
        V = np.asarray(values, dtype=float)
        if V.ndim != 2 or V.shape[0] != t.size or (not callable(names) and len(names) != V.shape[1]):
            raise ValueError(f"groups: expected (values of shape ({t.size}, m), m names) pairs, got shape "
                             f"{V.shape} with {len(names)} names")
        r = _core.growth_worst(t, V, limit, w, _FLOOR, _REST, GROWING, _MIN_EARLY_POINTS)
        if r is not None and (worst is None or r[1] > worst.factor):
            j, factor, t_bad, ref, peak = r
            worst = Divergence((names() if callable(names) else names)[j], factor, t_bad, ref, peak, w, limit)
    return worst


# ------------------------------------------------------------------------------------- genser2020 §11 measures
# ε_mono (3.9/3.10), σ_mono (4.11) with Garcia's evar, the amplitude rule (§11.3) and the NRMSE.

__all__ += ["eps_mono", "eps_mono_rel", "evar", "sigma_mono", "amplitude_stable", "nrmse"]

_AGGREGATIONS = ("mean", "final", "max")


def _pair(result, reference):
    """Outputs of ``result`` and of ``reference`` at the result's macro points (the reference is interpolated
    linearly where its times differ), as two (n, ny) arrays."""
    for name, r in (("result", result), ("reference", reference)):
        _check_result(r, name)
    if result.system is not reference.system and [s.ny for s in result.system.subsystems] != \
            [s.ny for s in reference.system.subsystems]:
        raise ValueError("reference: its subsystems' outputs differ from those of result")
    t, Y = np.asarray(result.t, dtype=float), np.asarray(result.Y, dtype=float)
    tr, R = np.asarray(reference.t, dtype=float), np.asarray(reference.Y, dtype=float)
    if R.shape[1] != Y.shape[1]:
        raise ValueError(f"reference: {R.shape[1]} outputs, result has {Y.shape[1]}")
    if tr.size == t.size and np.array_equal(tr, t):
        return t, Y, R
    if t.size and (t[0] < tr[0] - 1e-12 or t[-1] > tr[-1] * (1 + 1e-12) + 1e-12):
        raise ValueError("reference: must cover the time span of result")
    return t, Y, np.column_stack([np.interp(t, tr, R[:, j]) for j in range(R.shape[1])])


def _aggregation(aggregation):
    if aggregation not in _AGGREGATIONS:
        raise ValueError(f"aggregation: must be one of {_AGGREGATIONS}, got {aggregation!r}")
    return aggregation


def eps_mono_rel(result, reference, aggregation="mean", saturate=True, eps=1e-12) -> dict:
    """ε_mono,rel per subsystem (genser eq. 3.10): at every macro point k

        ε^k = (1/n) Σ_i |y^k[i] − y_mono^k[i]| / (max_{j≤k} y_mono^j[i] − min_{j≤k} y_mono^j[i] + ϵ),

    over the n outputs of the subsystem, reduced over k by ``aggregation`` ("mean" (default, spec §11.1 [AMB]),
    "final" or "max") and saturated at 1 (``saturate``). A run that diverged or holds non-finite values scores 1
    (inf without saturation). Returns {subsystem name: value}."""
    _aggregation(aggregation)
    t, Y, R = _pair(result, reference)
    system = result.system
    off = system.out_offset
    out = {}
    bad = _diverged(result) or not np.all(np.isfinite(Y))
    for i, s in enumerate(system.subsystems):
        if s.ny == 0:
            continue
        if bad or Y.shape[0] == 0:
            out[s.name] = 1.0 if saturate else math.inf
            continue
        y, r = Y[:, off[i]:off[i + 1]], R[:, off[i]:off[i + 1]]
        rng = np.maximum.accumulate(r, axis=0) - np.minimum.accumulate(r, axis=0) + eps
        e = np.mean(np.abs(y - r) / rng, axis=1)
        v = float(np.mean(e) if aggregation == "mean" else e[-1] if aggregation == "final" else np.max(e))
        out[s.name] = min(v, 1.0) if saturate else v
    return out


def eps_mono(result, reference, aggregation="mean", saturate=True, eps=1e-12) -> float:
    """ε_mono,global = sqrt(Σ_s (ε_mono,rel^(s))²) over the subsystems (genser eq. 3.9), from
    :func:`eps_mono_rel` with the same options; saturated at 1 (``saturate``). ``reference`` is the monolithic
    result (e.g. ``cosim.simulate_monolithic(system, t_end, t_eval=result.t)``)."""
    rel = eps_mono_rel(result, reference, aggregation, saturate, eps)
    v = math.sqrt(sum(x * x for x in rel.values()))
    return min(v, 1.0) if saturate else v


def evar(signal) -> float:
    """Noise variance of a 1-D signal about a time-varying mean: D. Garcia's GCV/DCT estimator (``evar``, CSDA 2010;
    genser2020 §11.2). With the orthonormal DCT-II Ŷ of the signal, S_i = Λ_i², Λ_i = 2(1 − cos(π(i−1)/n)) and
    M_i(s) = 1 − 1/(1 + s S_i): noisevar(s) = mean(Ŷ² M²), GCV(s) = noisevar / mean(M)², minimised over
    log10 s in [log10 s_min, log10 s_max] (h_max = 0.99, h_min = 1e-6; bounded minimiser, tolerance 0.1);
    returns noisevar at the minimum. A constant offset has no noise (0); white noise of variance v gives ≈ v."""
    from scipy.fft import dct
    from scipy.optimize import minimize_scalar
    y = np.asarray(signal, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"signal: expected a 1-D array, got shape {y.shape}")
    if y.size < 3:
        raise ValueError(f"signal: need at least 3 samples, got {y.size}")
    if not np.all(np.isfinite(y)):
        return math.inf
    n = y.size
    lam = 2.0 * (1.0 - np.cos(np.pi * np.arange(n) / n))
    S = lam * lam
    Y2 = dct(y, type=2, norm="ortho") ** 2

    def s_bound(h):
        return (((1 + math.sqrt(1 + 8 * h * h)) / (4 * h * h)) ** 2 - 1) / 16

    lo, hi = math.log10(s_bound(0.99)), math.log10(s_bound(1e-6))

    def parts(L):
        M = 1.0 - 1.0 / (1.0 + 10.0 ** L * S)
        return float(np.mean(Y2 * M * M)), float(np.mean(M))

    def gcv(L):
        nv, mm = parts(L)
        return nv / (mm * mm)

    r = minimize_scalar(gcv, bounds=(lo, hi), method="bounded", options={"xatol": 0.1})
    return parts(float(r.x))[0]


def sigma_mono(result, reference, saturate=True) -> float:
    """σ_mono,global (genser eq. 4.11): Σ over subsystems of the mean over their outputs of sqrt(evar(y_i −
    y_mono,i)) at the macro points, saturated at 1 (``saturate``). Oscillations about the monolithic solution count;
    stationary offsets do not (those are ε_mono's). A diverged run scores 1."""
    t, Y, R = _pair(result, reference)
    system = result.system
    if _diverged(result) or not np.all(np.isfinite(Y)):
        return 1.0 if saturate else math.inf
    off, total = system.out_offset, 0.0
    for i, s in enumerate(system.subsystems):
        if s.ny == 0:
            continue
        d = Y[:, off[i]:off[i + 1]] - R[:, off[i]:off[i + 1]]
        total += float(np.mean([math.sqrt(max(evar(d[:, j]), 0.0)) for j in range(s.ny)]))
    return min(total, 1.0) if saturate else total


def amplitude_stable(result, window=None) -> bool:
    """genser2020's 20 % amplitude rule (§11.3), the same as :func:`is_stable`: unstable if a coupled output's
    max |y| over the last 20 % of the run exceeds that over the first 20 %, or a value is not finite."""
    return is_stable(result, window)


def nrmse(y, y_ref) -> float:
    """Normalised root-mean-square error sqrt(mean((y − y_ref)²)) / (max y_ref − min y_ref) over all entries
    (arrays of equal shape, or two Results compared on their outputs at the result's macro points)."""
    if _is_result(y) or _is_result(y_ref):
        _, Y, R = _pair(y, y_ref)
    else:
        Y, R = np.asarray(y, dtype=float), np.asarray(y_ref, dtype=float)
        if Y.shape != R.shape:
            raise ValueError(f"y_ref: expected shape {Y.shape}, got {R.shape}")
    if Y.size == 0:
        raise ValueError("y: empty")
    rng = float(np.max(R) - np.min(R))
    e = float(np.sqrt(np.mean((Y - R) ** 2)))
    return e / rng if rng > 0 else (0.0 if e == 0 else math.inf)
