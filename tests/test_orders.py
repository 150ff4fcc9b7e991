"""Convergence orders on the two-mass oscillator with exact subsystem integration (coupling error only).

Global order k+1 for Lagrange k (kraft2021 §4.1), min(k+1, 2) for EXTRIPOL-C0 (busch2016 §5: the linear join caps
the order), k+1 for EXTRIPOL-C1; kraft2021 §21 T9 local/global slopes; kraft2021 App. B feed-through cases."""
import numpy as np
import pytest
from scipy.linalg import expm

import cosim
from cosim import models
from conftest import observed_orders

FD = dict(ck=1e5, dk=1e3, coupling="force/displacement")


def global_errors(system, T, Hs, **kw):
    ref = cosim.simulate_monolithic(system, T, T).X[-1]
    errs = []
    for H in Hs:
        res = cosim.simulate(system, T, H, solver=cosim.Exact(), **kw)
        errs.append(np.max(np.abs(res.X[-1] - ref)) / np.max(np.abs(ref)))
    return np.array(errs)


@pytest.mark.parametrize("k", range(4))
def test_lagrange_global_order_k_plus_1_gauss_seidel_fd(k):
    """F/D, Gauss-Seidel, Exact integrator, Kraft's start-up grid (kraft2021 §4.3 Listing 5.1)."""
    Hs = [2e-4 * 2.0**-n for n in range(5)] if k < 3 else [4e-4 * 2.0**-n for n in range(5)]
    errs = global_errors(models.two_mass_oscillator(**FD), 0.02, Hs, scheme="gauss-seidel",
                         approximation=cosim.Lagrange(k), startup="kraft")
    assert errs[-1] > 1e-11  # still above round-off: the fit measures the coupling error
    assert abs(np.mean(observed_orders(errs)[-2:]) - (k + 1)) <= 0.15


def test_uniform_grid_startup_caps_order():
    """Without Kraft's start-up grid, the reduced degree of the first steps leaves an O(H^2) error: for k = 2, 3
    the measured global order is 2 (this is why `startup="kraft"` exists)."""
    Hs = [2e-4 * 2.0**-n for n in range(4)]
    for k in (2, 3):
        errs = global_errors(models.two_mass_oscillator(**FD), 0.02, Hs, scheme="gauss-seidel",
                             approximation=cosim.Lagrange(k))
        assert abs(np.mean(observed_orders(errs)[-2:]) - 2.0) <= 0.15


@pytest.mark.parametrize("k", range(4))
def test_extripol_c0_global_order_min_k_plus_1_and_2(k):
    Hs = [1e-4 * 2.0**-n for n in range(5)]
    errs = global_errors(models.two_mass_oscillator(**FD), 0.02, Hs, scheme="gauss-seidel",
                         approximation=cosim.ExtrapolatedInterpolation(k, continuity=0), startup="kraft")
    assert abs(np.mean(observed_orders(errs)[-2:]) - min(k + 1, 2)) <= 0.15


@pytest.mark.parametrize("k", range(4))
def test_extripol_c1_global_order_k_plus_1(k):
    Hs = [2e-4 * 2.0**-n for n in range(5)] if k < 3 else [4e-4 * 2.0**-n for n in range(5)]
    errs = global_errors(models.two_mass_oscillator(**FD), 0.02, Hs, scheme="gauss-seidel",
                         approximation=cosim.ExtrapolatedInterpolation(k, continuity=1), startup="kraft")
    assert abs(np.mean(observed_orders(errs)[-2:]) - (k + 1)) <= 0.15


CASES = {
    "a_jacobi_update": dict(scheme="jacobi"),
    "a_gauss_seidel_update": dict(scheme="gauss-seidel"),
    "b_jacobi_no_update": dict(scheme="jacobi", update="simplified"),
    "c_gs_force_driven_first_no_update": dict(scheme="gauss-seidel", update="simplified", order=["S1", "S2"]),
    "d_gs_base_excited_first_no_update": dict(scheme="gauss-seidel", update="simplified", order=["S2", "S1"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("k", range(3))
def test_kraft_appendix_b_feedthrough_cases(case, k):
    """kraft2021 App. B (spec §14) on F/D with feed-through. Cases a and c reproduce (order κ+1). For b and d the
    thesis states order κ; we measure κ+1, as did an independent check (issue 2): the inconsistency of the
    simplified update at T_{N+1} is O(H^{κ+1}) and does not accumulate into a lower global order here.
    Documented deviation; the test asserts what we measure."""
    Hs = [2e-4 * 2.0**-n for n in range(5)]
    errs = global_errors(models.two_mass_oscillator(**FD), 0.02, Hs, approximation=cosim.Lagrange(k),
                         startup="kraft", **CASES[case])
    assert abs(np.mean(observed_orders(errs)[-2:]) - (k + 1)) <= 0.15


def test_simplified_update_differs_from_consistent():
    """The two update variants are really different computations (the order test above is not vacuous)."""
    s = models.two_mass_oscillator(**FD)
    a = cosim.simulate(s, 0.01, 1e-4, approximation=cosim.Lagrange(1), solver=cosim.Exact())
    b = cosim.simulate(s, 0.01, 1e-4, approximation=cosim.Lagrange(1), solver=cosim.Exact(), update="simplified")
    assert np.max(np.abs(a.X - b.X)) > 1e-9


@pytest.mark.parametrize("k", range(4))
def test_kraft_T9_local_and_global_slopes_M1(k):
    """kraft2021 §21 T9: explicit Jacobi FF on model M1 (Table 5.2): local position error order κ+3, local velocity
    κ+2, global κ+1. Local error: co-simulation step against the exact monolithic step from the same state."""
    p = dict(m1=2.0, m2=1.0, c1=1e5, c2=1e3, d1=0.0, d2=0.0)
    M1 = models.two_mass_oscillator(ck=5e3, dk=0.0, coupling="force/force", x0=(-2.0, 100.0, 0.0, -200.0), **p)
    A = models.monolithic_matrix(ck=5e3, dk=0.0, **p)
    T = 0.05
    exact_T = expm(A * T) @ np.array([-2.0, 100.0, 0.0, -200.0])
    Hs = [1e-3 * 2.0**-n for n in range(5)]
    lp, lv, g = [], [], []
    for H in Hs:
        r = cosim.simulate(M1, T, H, scheme="jacobi", approximation=cosim.Lagrange(k), solver=cosim.Exact(),
                           startup="kraft")
        Phi = expm(A * H)
        regular = np.nonzero(r.t[:-1] >= 2 * H * (1 - 1e-9))[0]
        loc = np.abs(r.X[regular + 1] - r.X[regular] @ Phi.T)
        lp.append(loc[:, 0].max())
        lv.append(loc[:, 1].max())
        g.append(np.max(np.abs(r.X[-1] - exact_T)))
    for errs, order in ((lp, k + 3), (lv, k + 2), (g, k + 1)):
        assert abs(np.mean(observed_orders(errs)[-2:]) - order) <= 0.3
