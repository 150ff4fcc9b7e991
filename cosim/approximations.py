"""Approximations of the coupling variables between macro points (how a subsystem sees its inputs).

All are polynomials on each macro step [T_N, T_{N+1}] built from the exchanged outputs y at past macro points
(busch2016.md §2, kraft2021.md §4, moshagen.md §2.2). Non-equidistant macro grids are supported; while the history
is shorter than the degree needs (start-up), the degree is reduced. ``approximation.evaluate(t_hist, y_hist, t)``
evaluates the polynomial a subsystem sees, with the engine's own weights.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _core

_KIND_LAGRANGE, _KIND_C0, _KIND_C1, _KIND_HERMITE, _KIND_LSQ = (_core.codes["approximation"][n] for n in (
    "lagrange", "extripol-c0", "extripol-c1", "hermite", "lsq"))
MAXDEG = _core.MAXDEG    # highest polynomial degree of a coupling signal (CS_MAXDEG)
MAXHIST = _core.MAXHIST  # samples the C weights can read (CS_MAXHIST)


def _check_smooth(smooth, what):
    if not isinstance(smooth, bool):
        raise TypeError(f"{what}: smooth must be True or False, got {smooth!r}")
    return smooth


def smoothstep5(tau):
    """The quintic switch s(τ) = 10τ³ − 15τ⁴ + 6τ⁵ of the smoothed input (moshagen.md §2.5 [ours]): s(0) = 0,
    s(1) = 1, s' = s'' = 0 at both ends."""
    tau = np.asarray(tau, dtype=float)
    return tau**3 * (10.0 + tau * (-15.0 + 6.0 * tau))


def _check_degree(k, kmax, what):
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{what}: k must be an int, got {type(k).__name__}")
    if not 0 <= k <= kmax:
        raise ValueError(f"{what}: k must be in 0..{kmax}, got {k}")
    return k


class Approximation:
    """Base class. ``spec()`` returns the (kind, k, nsp) triple the C core understands (nsp: the least-squares
    points of :class:`LeastSquares`, 0 for the others)."""

    kind = _KIND_LAGRANGE
    k = 0
    smooth = False
    _nsp = 0

    def spec(self):
        return (self.kind, self.k, self._nsp)

    def evaluate(self, t_hist, y_hist, t, H=None, *, interpolate=False, ydot_hist=None):
        """The input polynomial ũ(t) this approximation forms on one macro step, evaluated at ``t``.

        Uses the engine's own weights (C, ``cs_approx_weights_compute``): the values are those a subsystem sees
        as its input in :func:`cosim.simulate`.

        Parameters
        ----------
        t_hist : 1-D array, strictly increasing (oldest first)
            Macro points of the samples, e.g. ``res.t[:N + 1]``; only the newest 8 are read.
        y_hist : array (n,) or (n, m)
            The exchanged values at ``t_hist`` (one column per signal), e.g. ``res.y["S1"][:N + 1]``.
        t : float or array
            Evaluation times, normally in the macro step (a polynomial: other times extrapolate it further).
        H : float, optional
            Macro step size H of the step. Extrapolation (default): the step is [T_N, T_N + H] with
            T_N = ``t_hist[-1]``. ``interpolate=True`` (Gauss-Seidel, a subsystem stepped after the signal's
            source; busch2016 eq. 13): the newest sample is T_{N+1} = ``t_hist[-1]`` and the step is
            [T_{N+1} − H, T_{N+1}]. Default: the last sample spacing.
        ydot_hist : array like ``y_hist``
            Time derivatives of the samples; needed by :class:`Hermite` only.

        With fewer samples than the degree needs, the degree is reduced (start-up), as in the engine.

        With ``smooth=True`` (moshagen §2.2.5) the value is the blend (1 − s(τ)) Ext^{N−1}(t) + s(τ) Ext^N(t) of the
        previous step's polynomial (from ``t_hist[:-1]``, continued) and this step's, τ = (t − T_N)/H; with a single
        sample there is no previous polynomial and the value is unsmoothed.

        Returns
        -------
        ndarray: shape of ``t`` (1-D ``y_hist``) or shape of ``t`` + (m,).
        """
        if self.smooth:
            return self._evaluate_smoothed(t_hist, y_hist, t, H, interpolate, ydot_hist)
        th = np.asarray(t_hist, dtype=float)
        if th.ndim != 1 or th.size < 1:
            raise ValueError(f"t_hist: expected a 1-D array of sample times, got shape {th.shape}")
        if not np.all(np.isfinite(th)) or not np.all(np.diff(th) > 0):
            raise ValueError("t_hist: sample times must be finite and strictly increasing (oldest first)")
        try:
            Y = np.asarray(y_hist, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("y_hist: expected an array of real numbers") from None
        vector = Y.ndim == 1
        Y = Y.reshape(-1, 1) if vector else Y
        if Y.ndim != 2 or Y.shape[0] != th.size:
            raise ValueError(f"y_hist: expected {th.size} rows (one per sample time), got shape {np.shape(y_hist)}")
        if not np.all(np.isfinite(Y)):
            raise ValueError("y_hist: contains NaN or infinite values")
        Yd = None
        if self.kind == _KIND_HERMITE:
            if ydot_hist is None:
                raise ValueError("ydot_hist: the Hermite approximation needs the output derivatives of the samples")
            Yd = np.asarray(ydot_hist, dtype=float).reshape(Y.shape) if np.size(ydot_hist) == Y.size else None
            if Yd is None or not np.all(np.isfinite(Yd)):
                raise ValueError(f"ydot_hist: expected {Y.shape} finite values like y_hist")
        elif ydot_hist is not None:
            raise ValueError(f"ydot_hist: only used by Hermite, not by {self!r}")
        if not isinstance(interpolate, bool):
            raise TypeError(f"interpolate: expected True or False, got {interpolate!r}")
        if H is None:
            if th.size < 2:
                raise ValueError("H: needed when t_hist has a single sample")
            H = th[-1] - th[-2]
        if isinstance(H, bool) or not isinstance(H, numbers.Real) or not np.isfinite(H) or not H > 0:
            raise ValueError(f"H: macro step size must be a positive finite number, got {H!r}")
        H = float(H)
        try:
            tt = np.asarray(t, dtype=float)
        except (TypeError, ValueError):
            raise TypeError("t: expected a real number or an array of them") from None
        if not np.all(np.isfinite(tt)):
            raise ValueError("t: contains NaN or infinite values")
        if interpolate and th.size >= 2 and th[-2] > th[-1] - H * (1 - 1e-12):
            raise ValueError(f"H: with interpolate=True the step [T_N+1 - H, T_N+1] must start at or after the "
                             f"previous sample t_hist[-2] = {th[-2]!r}")
        n = min(th.size, MAXHIST)
        T = th[::-1][:n]                       # newest first, as the C weights expect
        V = Y[::-1][:n]
        TN = T[0] - H if interpolate else T[0]
        W, deg, npts = _core.approx_weights(self.kind, self.k, interpolate, np.ascontiguousarray(T), TN, H, self._nsp)
        c = W[:, 0, :n] @ V                    # (deg+1, m) coefficients of p(s) = sum_m c_m s^m
        if Yd is not None:
            c = c + W[:, 1, :n] @ Yd[::-1][:n]
        s = (tt.reshape(-1) - TN) / H
        out = np.zeros((s.size, Y.shape[1]))
        for m in range(deg, -1, -1):           # Horner
            out = out * s[:, None] + c[m]
        out = out.reshape(tt.shape + (Y.shape[1],))
        return out[..., 0] if vector else out

    def _unsmoothed(self):
        import copy
        a = copy.copy(self)
        a.smooth = False
        return a

    def _evaluate_smoothed(self, t_hist, y_hist, t, H, interpolate, ydot_hist):
        if not isinstance(interpolate, bool) or interpolate:
            raise ValueError("interpolate: evaluate() forms the smoothed input of extrapolation steps only")
        base = self._unsmoothed()
        cur = base.evaluate(t_hist, y_hist, t, H, ydot_hist=ydot_hist)
        th = np.asarray(t_hist, dtype=float)
        if th.ndim != 1 or th.size < 2:
            return cur
        H = th[-1] - th[-2] if H is None else float(H)
        Yd = None if ydot_hist is None else np.asarray(ydot_hist, dtype=float)[:-1]
        prev = base.evaluate(th[:-1], np.asarray(y_hist, dtype=float)[:-1], t, th[-1] - th[-2], ydot_hist=Yd)
        q = smoothstep5((np.asarray(t, dtype=float) - th[-1]) / H)
        if cur.ndim > q.ndim:
            q = q[..., None]
        return prev + q * (cur - prev)

    def __eq__(self, other):
        return type(self) is type(other) and self.spec() == other.spec() and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, self.spec()))


class Lagrange(Approximation):
    """Lagrange polynomial of degree ``k`` (κ in kraft2021, k in busch2016 eq. 11), k = 0..7 (:data:`MAXDEG`).

    Extrapolation through y(T_N), y(T_{N-1}), ..., y(T_{N-k}); under Gauss-Seidel, a subsystem stepped after the
    source of a signal *interpolates* through y(T_{N+1}), ..., y(T_{N+1-k}) (busch2016 eq. 13). Local
    approximation error O(H^{k+1}); global convergence order k+1 (kraft2021 §4.1, moshagen Thm 3.6).

    ``smooth=True``: the quintic smoothing of the switch between the previous and the current polynomial
    (moshagen §2.2.5): on [T_N, T_{N+1}] the input is (1 − s(τ)) Ext^{N−1}(t) + s(τ) Ext^N(t), s(τ) = 10τ³ − 15τ⁴ +
    6τ⁵, C² across the macro points. With k ≥ 1 the smoothed input has degree k + 5 and is evaluated by a
    callback: :class:`cosim.Exact` cannot integrate it (use RK4/Euler substeps or CVODE).
    """

    def __init__(self, k: int = 1, smooth: bool = False):
        self.k = _check_degree(k, MAXDEG, "Lagrange")
        self.smooth = _check_smooth(smooth, "Lagrange")

    def __repr__(self):
        return f"Lagrange(k={self.k}, smooth=True)" if self.smooth else f"Lagrange(k={self.k})"


class ZOH(Lagrange):
    """Zero-order hold: the input stays at its value from the last macro point (Lagrange with k = 0).

    ``smooth=True``: the quintic switch from the previous to the new value (moshagen §2.2.5, Kossel's smoothing),
    u(t) = u_{N−1} + s(τ)(u_N − u_{N−1}), a degree-5 polynomial (integrated exactly by :class:`cosim.Exact`)."""

    def __init__(self, smooth: bool = False):
        super().__init__(0, smooth=_check_smooth(smooth, "ZOH"))

    def __repr__(self):
        return "ZOH(smooth=True)" if self.smooth else "ZOH()"


class ExtrapolatedInterpolation(Approximation):
    """EXTRIPOL (busch2016 §2, eq. 12): continuous "extrapolated interpolation" of degree ``k``.

    Φ_N = P_prev(T_N) and Φ_{N+1} = P_cur(T_{N+1}) are the values of the degree-k Lagrange extrapolants of the
    previous and the current window. ``continuity=0`` (EXTRIPOL-C0) joins them linearly; ``continuity=1``
    (EXTRIPOL-C1) uses the cubic Hermite polynomial through (Φ_N, Φ̇_N, Φ_{N+1}, Φ̇_{N+1}), so the input is
    continuously differentiable across macro points. Uses the outputs at k+2 macro points. Signals that a
    Gauss-Seidel subsystem interpolates use classical Lagrange interpolation of degree k (busch2016 eq. 13).
    """

    def __init__(self, k: int = 1, continuity: int = 1):
        self.k = _check_degree(k, MAXDEG, "ExtrapolatedInterpolation")
        if continuity not in (0, 1) or isinstance(continuity, bool):
            raise ValueError(f"ExtrapolatedInterpolation: continuity must be 0 or 1, got {continuity!r}")
        self.continuity = continuity
        self.kind = _KIND_C1 if continuity == 1 else _KIND_C0

    def __repr__(self):
        return f"ExtrapolatedInterpolation(k={self.k}, continuity={self.continuity})"


class Hermite(Approximation):
    """Hermite extrapolation of degree ``k`` from output values *and* time derivatives (moshagen.md §2.2).

    k = 1 is the Taylor polynomial y(T_N) + ẏ(T_N)(t - T_N) of moshagen eq. (90); k = 2, 3 add the value (and
    derivative) at T_{N-1}. ``mode`` says how the exchanged derivative ẏ(T_N) is computed:

    * ``"consistent"``: after the values at T_N have been exchanged, from the new inputs u(T_N).
    * ``"lagged"``: with the input the subsystem saw at T_N⁻, i.e. the previous interval's approximation at T_N
      (moshagen eq. 90, the paper's own experiments).

    Derivatives come from the model's exact output derivative (LTI: ẏ = C(Ax + Bu) + D u̇) or, for user models,
    from a finite-difference directional derivative.

    ``smooth=True``: the quintic smoothing of the switch (moshagen §2.2.5), as for :class:`Lagrange`.
    """

    def __init__(self, k: int = 1, mode: str = "consistent", smooth: bool = False):
        self.k = _check_degree(k, MAXDEG, "Hermite")
        if mode not in ("consistent", "lagged"):
            raise ValueError(f"Hermite: mode must be 'consistent' or 'lagged', got {mode!r}")
        self.mode = mode
        self.kind = _KIND_HERMITE
        self.smooth = _check_smooth(smooth, "Hermite")

    def __repr__(self):
        return f"Hermite(k={self.k}, mode={self.mode!r}{', smooth=True' if self.smooth else ''})"


class LeastSquares(Approximation):
    """Kraft's least-squares predictor (kraft2021 §2.4.1, §5.1): extrapolation of degree ``k`` (κ) whose predicted
    value comes from a least-squares fit.

    The predicted input u^pre_{N+1} is the value at T_{N+1} of the degree-κ polynomial fitted in the ordinary
    least-squares sense to the outputs at the ``n_points`` (N_sp) newest macro points; the input polynomial on
    [T_N, T_{N+1}] then interpolates the κ newest samples and (T_{N+1}, u^pre_{N+1}) (eq. 2.24). With
    N_sp = κ + 1 the fit interpolates and this is :class:`Lagrange` (κ). More points enlarge the stability region
    (thesis Fig. 5.4: κ = 2, N_sp = 8 allows about 5x the step size of the classic predictor on the Table 5.1
    chain) at the price of a larger error constant; the convergence order stays κ + 1. The fit is unweighted, in
    the centred and scaled time (the thesis does not give its weighting). Gauss-Seidel subsystems that
    interpolate a signal use Lagrange interpolation of degree κ, as for :class:`ExtrapolatedInterpolation`.

    Parameters
    ----------
    k : int
        Degree κ of the fit and of the input polynomial, 0..MAXDEG.
    n_points : int
        N_sp, the macro points of the fit, κ + 1..MAXHIST (8).
    """

    def __init__(self, k: int = 2, n_points: int = 8):
        self.k = _check_degree(k, MAXDEG, "LeastSquares")
        if isinstance(n_points, bool) or not isinstance(n_points, numbers.Integral):
            raise TypeError(f"LeastSquares: n_points must be an int, got {type(n_points).__name__}")
        if not self.k + 1 <= n_points <= MAXHIST:
            raise ValueError(f"LeastSquares: n_points must be in {self.k + 1}..{MAXHIST} for k={self.k}, "
                             f"got {n_points}")
        self.n_points = int(n_points)
        self._nsp = self.n_points
        self.kind = _KIND_LSQ

    def __repr__(self):
        return f"LeastSquares(k={self.k}, n_points={self.n_points})"


def as_approximation(obj, name="approximation") -> Approximation:
    if isinstance(obj, Approximation):
        return obj
    if isinstance(obj, str):
        table = {"zoh": ZOH, "constant": ZOH}
        if obj.lower() in table:
            return table[obj.lower()]()
        raise ValueError(f"{name}: unknown approximation {obj!r}; use cosim.ZOH(), cosim.Lagrange(k), "
                         "cosim.ExtrapolatedInterpolation(k, continuity), cosim.Hermite(k) or "
                         "cosim.LeastSquares(k, n_points)")
    raise TypeError(f"{name}: expected a cosim approximation object, got {type(obj).__name__}")
