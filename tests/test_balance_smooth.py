"""Quintic smoothing of the input switch (moshagen §2.2.5; moshagen.md §2.5 and the smoothing rows of §5):
orders and values on problem M with and without balance correction, C² continuity, the engine's input equals
Approximation.evaluate, rollback, and bad input."""
import numpy as np
import pytest

import cosim
from cosim import models
from cosim.approximations import smoothstep5
from conftest import observed_orders

HS = [0.2 * 2.0**-N for N in range(6)]          # moshagen.md §5: "H = 0.2 -> 0.00625"
M_EXACT = np.array([np.cos(10.0), -np.sin(10.0)])
RK4 = cosim.RK4(substeps=16)                    # Hermite + smoothing has degree 6: no Exact()


def m_error(approx, coupling=None, solver=None, H=0.2):
    res = cosim.simulate(models.mutual_2x2(), 10.0, H, approximation=approx, solver=solver or cosim.Exact(),
                         coupling=coupling)
    return float(np.max(np.abs(res.X[-1] - M_EXACT)))


def test_smoothstep_switch():
    tau = np.linspace(0, 1, 11)
    s = smoothstep5(tau)
    assert s[0] == 0.0 and s[-1] == 1.0 and np.all(np.diff(s) > 0)
    # the degree-5 polynomial through its samples: s' and s'' vanish at both ends
    p = np.polynomial.Polynomial.fit(tau, s, 5).convert()
    np.testing.assert_allclose(p.coef, [0, 0, 0, 10, -15, 6], atol=1e-9)
    for t0 in (0.0, 1.0):
        assert abs(p.deriv(1)(t0)) < 1e-9 and abs(p.deriv(2)(t0)) < 1e-8


def test_zoh_smoothing_values_and_order_one_on_M():
    """moshagen.md §5: P = 0 smoothed, err 5.10 (H = 0.2) -> 5.44e-2 (H = 0.00625), order -> 1, larger constant."""
    errs = [m_error(cosim.ZOH(smooth=True), H=H) for H in HS]
    assert errs[0] == pytest.approx(5.10, rel=2e-3) and errs[-1] == pytest.approx(5.44e-2, rel=2e-3)
    assert abs(np.mean(observed_orders(errs)[-3:]) - 1.0) <= 0.15
    plain = [m_error(cosim.ZOH(), H=H) for H in HS]
    assert all(e > p for e, p in zip(errs, plain))


def test_smoothing_increases_the_cumulative_imbalance():
    """moshagen.md §5: |cumbal| 1.36 smoothed vs 0.34 unsmoothed at H = 0.2 (the paper: smoothing can increase
    the balance error)."""
    cums = []
    for approx in (cosim.ZOH(smooth=True), cosim.ZOH()):
        res = cosim.simulate(models.mutual_2x2(), 10.0, 0.2, approximation=approx, solver=cosim.Exact(),
                             coupling=cosim.BalanceCorrection(connections=[]))
        cums.append(max(abs(v[-1]) for v in res.balance_error.values()))
    assert cums[0] == pytest.approx(1.36, rel=5e-3) and cums[1] == pytest.approx(0.34, rel=5e-3)


@pytest.mark.parametrize("approx,bc,order", [
    (cosim.ZOH(smooth=True), True, 2),
    (cosim.Hermite(1, smooth=True), False, 2),
    (cosim.Hermite(1, smooth=True), True, 3),
])
def test_smoothing_keeps_the_orders(approx, bc, order):
    """moshagen.md §5: smoothed P = 0 + BC order 2, P = 1 order 2, P = 1 + BC order 3 (±0.15 over the last 3)."""
    solver = cosim.Exact() if approx.k == 0 else RK4
    errs = [m_error(approx, cosim.BalanceCorrection() if bc else None, solver, H) for H in HS]
    assert abs(np.mean(observed_orders(errs)[-3:]) - order) <= 0.15


@pytest.mark.parametrize("approx,solver", [(cosim.ZOH(smooth=True), cosim.Exact()),
                                           (cosim.Lagrange(1, smooth=True), RK4)])
def test_engine_input_is_the_smoothed_polynomial(approx, solver):
    """Dense output records the input each unit applied: it equals the blend of Approximation.evaluate, on a
    non-uniform grid too (the previous polynomial is re-expanded onto the new step)."""
    grid = np.cumsum([0.0, 0.2, 0.1, 0.25, 0.15, 0.2, 0.1])
    sysm = models.mutual_2x2()
    macro = cosim.simulate(sysm, grid[-1], approximation=approx, solver=solver, grid=grid)
    dense = cosim.simulate(sysm, grid[-1], approximation=approx, solver=solver, grid=grid,
                           t_eval=np.linspace(0, grid[-1], 61))
    ys = macro.y["S1"][:, 0]      # S1's output feeds S2's input (gain 1)
    for N in range(1, len(grid) - 1):
        sel = (dense.t > grid[N] + 1e-12) & (dense.t < grid[N + 1] - 1e-12)
        want = approx.evaluate(grid[:N + 1], ys[:N + 1], dense.t[sel], H=grid[N + 1] - grid[N])
        np.testing.assert_allclose(dense.u["S2"][sel, 0], want, rtol=1e-12, atol=1e-12)
    # continuous across the macro points, with zero slope jump: C2 blend of C-infinity pieces
    t = np.array([grid[3] - 1e-6, grid[3], grid[3] + 1e-6])
    left = approx.evaluate(grid[:3], ys[:3], t[:2], H=grid[3] - grid[2])
    right = approx.evaluate(grid[:4], ys[:4], t[1:], H=grid[4] - grid[3])
    assert left[1] == pytest.approx(right[0], abs=1e-13)
    assert (left[1] - left[0]) / 1e-6 == pytest.approx((right[1] - right[0]) / 1e-6, abs=1e-5)


def test_smoothing_with_rollback_and_balance():
    """ECCO with rejection rolls steps back: the smoothed runs stay deterministic and match a fresh run."""
    truck = models.quarter_truck()
    ecco = cosim.ECCO(power_bonds=[("chassis.v", "chassis.F", "wheel.F", "wheel.v")], rtol=1e-5, atol=1e-5,
                      H_min=1e-5, H_max=1e-2, reject=True)
    kw = dict(approximation=cosim.ZOH(smooth=True), step_control=ecco, solver=cosim.Exact(),
              coupling=cosim.BalanceCorrection())
    a = cosim.simulate(truck, 0.5, 1e-3, **kw)
    b = cosim.simulate(truck, 0.5, 1e-3, **kw)
    np.testing.assert_array_equal(a.X, b.X)
    ref = cosim.simulate_monolithic(truck, 0.5, t_eval=a.t)
    assert np.max(np.abs(a.X - ref.X)) < 1e-2 * np.max(np.abs(ref.X))


def test_bad_input():
    with pytest.raises(TypeError, match="smooth"):
        cosim.ZOH(smooth=1)
    with pytest.raises(TypeError, match="smooth"):
        cosim.Lagrange(1, smooth="yes")
    with pytest.raises(TypeError, match="smooth"):
        cosim.Hermite(1, smooth=None)
    sysm = models.mutual_2x2()
    with pytest.raises(ValueError, match="approximation"):
        cosim.simulate(sysm, 1.0, 0.1, coupling=cosim.NEPCE(base=cosim.ZOH(smooth=True)))
    with pytest.raises(ValueError, match="approximation"):
        cosim.simulate(sysm, 1.0, 0.1, approximation=cosim.Lagrange(1, smooth=True),
                       step_control=cosim.StepControl(estimator="exCV", rtol=1e-3, atol=1e-3))
    with pytest.raises(ValueError, match="Exact"):   # degree 6 needs the evaluation path
        cosim.simulate(sysm, 1.0, 0.1, approximation=cosim.Lagrange(1, smooth=True), solver=cosim.Exact())
    with pytest.raises(ValueError, match="interpolate"):
        cosim.ZOH(smooth=True).evaluate([0.0, 0.1], [1.0, 2.0], 0.15, interpolate=True)
    assert repr(cosim.ZOH(smooth=True)) == "ZOH(smooth=True)" and repr(cosim.ZOH()) == "ZOH()"
    assert cosim.Lagrange(1, smooth=True) != cosim.Lagrange(1)


def test_stability_analysis_refuses_smoothed_approximations():
    s = cosim.models.two_mass_oscillator()
    r = cosim.simulate(s, 0.01, 1e-3, approximation=cosim.ZOH(smooth=True), solver=cosim.RK4(substeps=4))
    with pytest.raises(ValueError, match="smooth"):
        r.spectral_radius()
    with pytest.raises(ValueError, match="smooth"):
        cosim.analysis.spectral_radius(s, 1e-3, approximation=cosim.Lagrange(1, smooth=True))
