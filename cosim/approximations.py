"""Approximations of the coupling variables between macro points (how a subsystem sees its inputs).

All are polynomials on each macro step [T_N, T_{N+1}] built from the exchanged outputs y at past macro points
(busch2016.md §2, kraft2021.md §4, moshagen.md §2.2). Non-equidistant macro grids are supported; while the history
is shorter than the degree needs (start-up), the degree is reduced. ``approximation.evaluate(t_hist, y_hist, t)``
evaluates the polynomial a subsystem sees, with the engine's own weights.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import _check, _core

_KIND_LAGRANGE, _KIND_C0, _KIND_C1, _KIND_HERMITE, _KIND_LSQ, _KIND_ACC, _KIND_ACC_REL = (
    _core.codes["approximation"][n] for n in ("lagrange", "extripol-c0", "extripol-c1", "hermite", "lsq", "acc",
                                              "acc-rel"))
_READS_RATES = (_KIND_HERMITE, _KIND_ACC, _KIND_ACC_REL)   # kinds whose weights read output derivatives
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
    _k2 = 0        # acc-rel: κ_λ
    _omega = 0.0   # acc-rel: ω

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
            Time derivatives of the samples; needed by :class:`Hermite`, :class:`IntegratedAcceleration` and
            :class:`RelaxedAcceleration` only (for the last two the polynomial of each column is the velocity-level
            one: a position integrates its velocity's polynomial in the engine, see their docstrings).

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
        if self.kind in _READS_RATES:
            if ydot_hist is None:
                raise ValueError(f"ydot_hist: {type(self).__name__} needs the output derivatives of the samples")
            Yd = np.asarray(ydot_hist, dtype=float).reshape(Y.shape) if np.size(ydot_hist) == Y.size else None
            if Yd is None or not np.all(np.isfinite(Yd)):
                raise ValueError(f"ydot_hist: expected {Y.shape} finite values like y_hist")
        elif ydot_hist is not None:
            raise ValueError(f"ydot_hist: only used by Hermite and the acceleration predictors, not by {self!r}")
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
        W, deg, npts = _core.approx_weights(self.kind, self.k, interpolate, np.ascontiguousarray(T), TN, H, self._nsp,
                                            self._k2, self._omega)
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
    """Lagrange polynomial of degree ``k`` (κ in kraft2021, k in busch2016 eq. 11), k = 0..7 (``cosim.approximations.MAXDEG``).

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


class IntegratedAcceleration(Approximation):
    """Kraft's *acc* predictor (kraft2021 App. C, after [LLSS17]): extrapolated accelerations of the coupling bodies,
    integrated into their velocity and position polynomials.

    On [T_N, T_{N+1}] the acceleration a of a coupling body is the degree-κ_a Lagrange extrapolant ã(t) through its
    values at T_N, ..., T_{N−κ_a}; the velocity output becomes ṽ(t) = v_N + ∫_{T_N}^t ã dτ and the position output
    x̃(t) = x_N + ∫_{T_N}^t ṽ dτ, both starting from the exchanged states at T_N. The network then substitutes them
    into the coupling law (force/force: λ̃ = c (x̃_2 − x̃_1) + d (ṽ_2 − ṽ_1)) or passes them on as displacement inputs.
    The accelerations are the time derivatives of the velocity outputs, from each unit's model (LTI: ẏ = C (A x +
    B u)).

    ``update=True`` recomputes a_{N+1} from the equations of motion with the updated (consistent) coupling
    variables at T_{N+1}; ``update=False`` keeps the acceleration the unit ended the step with (its input
    polynomial's end value): no access to the equations of motion is needed, the stability region shrinks, the
    convergence order stays (thesis App. C).

    Positions and velocities are paired by ``pairs``; by default the pairs of each :class:`cosim.LTI` are found from
    its matrices (output i is the position of output j when C_i A = C_j, C_i B = 0 and D_i = D_j = 0). An output
    without a pair (a force, a unit without matrices) gets the velocity-level rule: its own derivative samples,
    extrapolated and integrated once.

    Under ``scheme="gauss-seidel"`` a unit stepped later reads the outputs of a unit already at T_{N+1} through
    the interpolating form (our reading; the thesis shows the Gauss-Seidel results, Figs. C.4/C.6, not the rule):
    ã interpolates the accelerations at T_{N+1}, T_N, ..., T_{N−κ_a+1} (the one at T_{N+1} is the rate the unit
    ended the step with) and the polynomials end at the exchanged states, ṽ(t) = v_{N+1} − ∫_t^{T_{N+1}} ã dτ,
    x̃(t) = x_{N+1} − ∫_t^{T_{N+1}} ṽ dτ. With it the d = 0 columns of Figs. C.4/C.6 reproduce but for one entry
    (docs/concepts.md). Not with Kraft's step-size/order control, iterative schemes or coupling methods.
    :func:`cosim.analysis.spectral_radius` analyses both schemes (LTI units without feed-through; the
    accelerations are part of the recurrence).

    Parameters
    ----------
    k : int
        Degree κ_a of the acceleration extrapolant, 0..MAXDEG − 2 (a position polynomial has degree κ_a + 2).
    update : bool
        Recompute the accelerations at T_{N+1} with the updated coupling variables (thesis "u"), or not ("n").
    pairs : dict, optional
        ``{"S1.x1": "S1.v1", ...}``: each position output and the velocity output it integrates (global names
        ``"Subsystem.output"``). Default: found from the LTI subsystems' matrices.
    """

    def __init__(self, k: int = 0, update: bool = True, pairs: dict | None = None):
        self.k = _check_degree(k, MAXDEG - 2, type(self).__name__)
        if not isinstance(update, bool):
            raise TypeError(f"update: expected True or False, got {update!r}")
        self.update = update
        self.pairs = _check_pairs(pairs)
        self.kind = _KIND_ACC

    def _run_options(self, system):
        """The run options beyond (kind, k, nsp): κ_λ, ω, the pairs as integral_of (per global output, the output
        whose polynomial it integrates, −1 none) and the lagged rates of update=False."""
        return dict(approx_k2=self._k2, approx_omega=self._omega,
                    approx_integral_of=integral_of(system, self.pairs), rates_lagged=0 if self.update else 1)

    def __repr__(self):
        return f"IntegratedAcceleration(k={self.k}, update={self.update}{_pairs_repr(self.pairs)})"


class RelaxedAcceleration(IntegratedAcceleration):
    """Kraft's *accRel* predictor (kraft2021 App. C, after [LYL+20]): the :class:`IntegratedAcceleration` value at
    T_{N+1}, relaxed against the classic extrapolant, as the end node of a Lagrange polynomial of degree κ_λ.

    With p_acc the acc polynomial of an output (degree-κ_a accelerations integrated, see
    :class:`IntegratedAcceleration`) and P_κλ the classic extrapolant through T_N, ..., T_{N−κ_λ}::

        ũ_{N+1} = (1 − ω) p_acc(T_{N+1}) + ω P_κλ(T_{N+1})
        p(t) = P_κλ(t; [T_{N−κ_λ+1}, u_{N−κ_λ+1}], ..., [T_N, u_N], [T_{N+1}, ũ_{N+1}])   (as eq. 2.24)

    The thesis does not print the relaxation formula ([LYL+20]'s abstract: "with the predicted, current and previous
    coupling variables ... using a relaxation approach"); this one is **our reconstruction**. It has the thesis's
    optimal parameters: with ω = 1/2 and κ_λ = 0 the constant is the mean of u_N and the acc prediction (one order
    more), with ω = 1/6 and κ_λ = 1 the line's mean matches the step's mean to O(H³) (the 2u_N − u_{N−1} term cancels
    the H²/6 u'' defect of the end value), both when κ_a ≥ κ_λ (thesis App. C). Positions relax the end value of their
    integrated polynomial. Under Gauss-Seidel the acc value of a unit already at T_{N+1} is its exchanged value
    there (:class:`IntegratedAcceleration`), relaxed against the same classic extrapolant through T_N, ....

    Parameters
    ----------
    k : int
        Degree κ_a of the acceleration extrapolant, 0..MAXDEG − 2.
    k_lambda : int
        Degree κ_λ of the relaxed polynomial, 0..MAXHIST − 1.
    omega : float, optional
        Relaxation parameter ω in [0, 1]. Default: the thesis's optimum, 1/2 for κ_λ = 0 and 1/6 for κ_λ ≥ 1.
    update : bool
        Recompute the accelerations at T_{N+1} with the updated coupling variables, or not.
    pairs : dict, optional
        Position → velocity outputs, as for :class:`IntegratedAcceleration`.
    """

    def __init__(self, k: int = 0, k_lambda: int = 0, omega: float | None = None, update: bool = True,
                 pairs: dict | None = None):
        super().__init__(k, update, pairs)
        self.k_lambda = _check_degree(k_lambda, min(MAXDEG, MAXHIST - 1), type(self).__name__ + " k_lambda")
        self.omega = (0.5 if self.k_lambda == 0 else 1.0 / 6.0) if omega is None else \
            _check.real(omega, "omega", minimum=0.0, maximum=1.0)
        self.kind = _KIND_ACC_REL
        self._k2, self._omega = self.k_lambda, self.omega

    def __repr__(self):
        return (f"RelaxedAcceleration(k={self.k}, k_lambda={self.k_lambda}, omega={self.omega!r}, "
                f"update={self.update}{_pairs_repr(self.pairs)})")


def _check_pairs(pairs):
    if pairs is None:
        return None
    if not isinstance(pairs, dict):
        raise TypeError(f"pairs: expected a dict {{position output: velocity output}}, got {type(pairs).__name__}")
    for pos, vel in pairs.items():
        if not isinstance(pos, str) or not isinstance(vel, str):
            raise TypeError(f"pairs: names must be strings 'Subsystem.output', got {pos!r}: {vel!r}")
        if pos == vel:
            raise ValueError(f"pairs: {pos!r} cannot integrate itself")
    if set(pairs) & set(pairs.values()):
        raise ValueError(f"pairs: a velocity output cannot itself be a position ({sorted(set(pairs) & set(pairs.values()))})")
    return dict(pairs)


def _pairs_repr(pairs):
    return "" if pairs is None else f", pairs={pairs!r}"


def _lti_pairs(sub):
    """Local (position, velocity) output index pairs of an LTI subsystem: ẏ_i = C_i (A x + B u) is output j exactly
    when C_i A = C_j, C_i B = 0 and D_i = D_j = 0."""
    A, B, C, D = sub.A, sub.B, sub.C, sub.D
    CA, CB = C @ A, C @ B
    out = []
    for i in range(sub.ny):
        if not np.any(C[i]) or np.any(CB[i]) or np.any(D[i]):
            continue
        scale = np.max(np.abs(CA[i]))
        for j in range(sub.ny):
            if j != i and not np.any(D[j]) and np.any(C[j]) and np.allclose(CA[i], C[j], rtol=1e-12,
                                                                            atol=1e-14 * scale):
                out.append((i, j))
                break
    return out


def integral_of(system, pairs=None) -> np.ndarray:
    """Per global output of ``system`` (a :class:`cosim.CoupledSystem`), the index of the velocity output whose
    polynomial it integrates under :class:`IntegratedAcceleration` / :class:`RelaxedAcceleration`, or −1.

    ``pairs``: ``{"S1.x1": "S1.v1"}`` by name; None: the pairs of the LTI subsystems found from their matrices."""
    ny = sum(s.ny for s in system.subsystems)
    out = np.full(ny, -1, dtype=np.int64)
    if pairs is None:
        off = 0
        for sub in system.subsystems:
            if getattr(sub, "is_lti", False):
                for i, j in _lti_pairs(sub):
                    out[off + i] = off + j
            off += sub.ny
    else:
        owner = np.repeat(np.arange(len(system.subsystems)), [s.ny for s in system.subsystems])
        for pos, vel in _check_pairs(pairs).items():
            i, j = system._global_index(pos, "y"), system._global_index(vel, "y")
            if owner[i] != owner[j]:   # a body's position and velocity come from one unit (Gauss-Seidel reads them so)
                raise ValueError(f"pairs: {pos!r} and {vel!r} are outputs of different subsystems")
            out[i] = j
    for i in np.flatnonzero(out >= 0):
        if out[out[i]] >= 0:
            raise ValueError(f"pairs: output {system.signal_names('y')[out[i]]} is a velocity and a position")
    return out


def as_approximation(obj, name="approximation") -> Approximation:
    if isinstance(obj, Approximation):
        return obj
    if isinstance(obj, str):
        table = {"zoh": ZOH, "constant": ZOH}
        if obj.lower() in table:
            return table[obj.lower()]()
        raise ValueError(f"{name}: unknown approximation {obj!r}; use cosim.ZOH(), cosim.Lagrange(k), "
                         "cosim.ExtrapolatedInterpolation(k, continuity), cosim.Hermite(k) or "
                         "cosim.LeastSquares(k, n_points), cosim.IntegratedAcceleration(k) or "
                         "cosim.RelaxedAcceleration(k, k_lambda)")
    raise TypeError(f"{name}: expected a cosim approximation object, got {type(obj).__name__}")
