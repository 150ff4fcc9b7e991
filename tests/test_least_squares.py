"""Kraft's least-squares predictor (kraft2021 §2.4.1, §5.1; spec §7 "Alternative predictor", §21 T16) and the
coupling polynomials of degree up to 7 (κ <= 6 under step control, spec §20 item 1)."""
import numpy as np
import pytest

import cosim
from cosim import _core
from cosim import stability as an
from cosim.approximations import MAXDEG, MAXHIST, LeastSquares
from cosim.models import oscillator_chain, two_mass_oscillator

from test_analysis import one_step_check


def _weights_poly(approx, T, y, TN, H):
    """Coefficients in s = (t - TN)/H of the input polynomial from the engine's weights."""
    kind, k, nsp = approx.spec()
    W, deg, npts = _core.approx_weights(kind, k, False, np.asarray(T, float), TN, H, nsp)
    return W[:, 0, :len(T)] @ np.asarray(y, float), npts


@pytest.mark.parametrize("k,n", [(0, 4), (1, 5), (2, 8), (3, 6)])
def test_prediction_is_the_least_squares_fit_and_the_k_newest_samples_are_interpolated(k, n):
    rng = np.random.default_rng(k + 10 * n)
    H = 0.7
    T = -H * np.arange(n) * (1 + 0.2 * rng.random(n))      # newest first, non-equidistant
    T[0] = 0.0
    T = np.sort(T)[::-1]
    y = rng.normal(size=n)
    c, npts = _weights_poly(LeastSquares(k, n), T, y, 0.0, H)
    assert npts == n and len(c) == k + 1
    pred = np.polyval(np.polyfit(T, y, k), H)               # NumPy's own least-squares fit at T_{N+1}
    assert abs(np.polyval(c[::-1], 1.0) - pred) < 1e-10 * max(1.0, abs(pred))
    for j in range(k):                                       # interpolates y(T_N), ..., y(T_{N-k+1}) (eq. 2.24)
        assert abs(np.polyval(c[::-1], T[j] / H) - y[j]) < 1e-10


def test_with_k_plus_one_points_it_is_lagrange_extrapolation():
    t = np.linspace(0.0, 0.9, 10)
    y = np.sin(3 * t)
    for k in range(0, 5):
        a = LeastSquares(k, k + 1).evaluate(t, y, np.linspace(0.9, 1.0, 7))
        b = cosim.Lagrange(k).evaluate(t, y, np.linspace(0.9, 1.0, 7))
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


def test_polynomials_of_degree_k_are_reproduced_and_start_up_reduces_the_degree():
    t = np.linspace(0.0, 0.7, 8)
    p = np.array([0.5, -1.0, 2.0])                           # degree 2
    out = LeastSquares(2, 8).evaluate(t, np.polyval(p, t), [0.75, 0.8])
    np.testing.assert_allclose(out, np.polyval(p, [0.75, 0.8]), atol=1e-12)
    # two samples only: degree 1 through both (the Lagrange start-up of the engine)
    out = LeastSquares(2, 8).evaluate(t[:2], np.polyval(p, t[:2]), [0.2])
    lin = np.polyval(np.polyfit(t[:2], np.polyval(p, t[:2]), 1), 0.2)
    np.testing.assert_allclose(out, lin, atol=1e-12)


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="n_points"):
        LeastSquares(2, 2)
    with pytest.raises(ValueError, match="n_points"):
        LeastSquares(2, MAXHIST + 1)
    with pytest.raises(TypeError, match="n_points"):
        LeastSquares(2, 8.0)
    with pytest.raises(TypeError, match="n_points"):
        LeastSquares(2, True)
    with pytest.raises(ValueError, match="k must be in"):
        LeastSquares(MAXDEG + 1, 8)
    assert LeastSquares(2, 8) == LeastSquares(2, 8) and LeastSquares(2, 8) != LeastSquares(2, 7)
    assert repr(LeastSquares(1, 6)) == "LeastSquares(k=1, n_points=6)"


@pytest.mark.parametrize("scheme", ["jacobi", "gauss-seidel"])
def test_stability_analysis_is_the_engine_step(scheme):
    """Ω X_N + g of the analysis (built from the same weights) is the engine's macro step, also with the eight
    samples of the least-squares fit in the history."""
    system = two_mass_oscillator(ck=1e5, dk=1e3)
    assert one_step_check(system, 2e-4, scheme, LeastSquares(2, 8)) < 1e-10


def test_long_run_growth_matches_rho():
    system = two_mass_oscillator(ck=1e6, dk=10.0)
    approx, H = LeastSquares(1, 6), 3.0e-3
    rho = an.spectral_radius(system, H, "jacobi", approx)
    assert rho > 1.02
    n = 300
    res = cosim.simulate(system, t_end=n * H, H=H, approximation=approx, solver=cosim.Exact(),
                         divergence_bound=np.inf, divergence_growth=np.inf)
    norm = np.linalg.norm(res.X, axis=1)
    steps = np.arange(len(norm))
    sel = steps >= n // 3
    growth = np.exp(np.polyfit(steps[sel], np.log(norm[sel]), 1)[0])
    assert abs(growth - rho) < 0.05 * abs(rho - 1), (growth, rho)


def test_order_is_that_of_the_classic_predictor_and_the_error_grows_with_n_points():
    """kraft2021 §5.1 (Fig. 5.4 right): the error increases with N_sp, the convergence order is unchanged. On the
    two-mass oscillator (force/displacement, with feedthrough) the classic Lagrange(κ) predictor converges with
    order 2 for κ = 1 and 2; the least-squares predictor must have the same order."""
    system = two_mass_oscillator(ck=1e5, dk=1e3)
    ref = cosim.simulate_monolithic(system, 0.05, solver=cosim.Exact())
    Hs = np.array([1e-4, 5e-5, 2.5e-5])

    def errors(approx):
        return np.array([np.max(np.abs(cosim.simulate(system, 0.05, H, approximation=approx,
                                                      solver=cosim.Exact()).X[-1] - ref.X[-1])) for H in Hs])

    for k in (1, 2):
        classic = errors(cosim.Lagrange(k))
        prev = classic
        for n in (k + 2, 6, 8):
            err = errors(LeastSquares(k, n))
            slope, slope_classic = (np.polyfit(np.log(Hs), np.log(e), 1)[0] for e in (err, classic))
            assert abs(slope - slope_classic) < 0.15, (k, n, slope, slope_classic)
            assert np.all(err > prev), (k, n, err, prev)
            prev = err


def _diverges(approx, H, T=0.03):
    try:
        cosim.simulate(oscillator_chain(preset="table5.1"), t_end=T, H=H, approximation=approx,
                       solver=cosim.CVODE(rtol=1e-8, atol=1e-8), output_interval=T / 10)
    except (cosim.DivergenceError, cosim.SolverError):
        return True
    return False


def test_T16_least_squares_predictor_allows_about_5x_the_classic_step():
    """kraft2021 §21 T16, LSQ row: on the nonlinear Table 5.1 chain with κ = 2, N_sp = 8 the stable H is about 5x
    that of the classic predictor (thesis: 5e-5 s), with a factor-2 tolerance: the ratio of the critical steps must
    lie in 2.5..10. Asserted brackets (t = 0.03 s; the stable ones also hold to t = 0.12 s): classic stable at
    1.5e-5 s and unstable at 2e-5 s, least squares stable at 5e-5 s and unstable at 6e-5 s, so the ratio of the
    critical steps is 2.5..4."""
    lsq = LeastSquares(2, 8)
    assert not _diverges(cosim.Lagrange(2), 1.5e-5)
    assert _diverges(cosim.Lagrange(2), 2e-5)
    assert not _diverges(lsq, 5e-5)
    assert _diverges(lsq, 6e-5)


def test_degrees_up_to_seven_reproduce_polynomials_and_step_control_reaches_kappa_6():
    t = np.linspace(0.0, 0.7, 8)
    for k in (6, 7):
        p = np.arange(1.0, k + 2.0)
        out = cosim.Lagrange(k).evaluate(t, np.polyval(p, t), [0.75])
        np.testing.assert_allclose(out, np.polyval(p, [0.75]), rtol=1e-9)
    system = two_mass_oscillator(ck=1e5, dk=1e3)
    for est in ("exMD", "exLE"):
        sc = cosim.StepControl(est, rtol=1e-8, k_max=6)
        res = cosim.simulate(system, 0.02, 1e-4, approximation=cosim.Lagrange(6), step_control=sc,
                             solver=cosim.Exact())
        assert res.success and max(res.k) == 6, (est, sorted(set(res.k)))
    assert cosim.StepControl("exMD").k_max == 5 and cosim.StepControl("exLE").k_max == 4
