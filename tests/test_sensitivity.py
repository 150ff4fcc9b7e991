"""Interface Jacobians beyond the first sap term (kraft2021 App. A, spec §13): the two-term series "sap2" (§13.1,
(A.5)) and the exact Jacobian of nonlinear units from their forward sensitivity equations (§13.3, (A.8)), alone and
inside the implicit scheme."""
import math
import warnings

import numpy as np
import pytest

import cosim
from cosim.schemes import end_basis, interface_jacobian
from cosim.subsystem import BuiltinModel

# Table A.1 (C_pos, C_vel) and the third coefficient c2 = ∫ (1 - s)^2 / 2 L^κ(s) ds of the series (A.5):
# x_λ = C_pos H^2/m - c2 d H^3/m^2 + ...,  v_λ = C_vel H/m - C_pos d H^2/m^2 + ...  (κ = 3: spec's [DERIVED] row)
TABLE_A1 = {0: (1 / 2, 1), 1: (1 / 6, 1 / 2), 2: (1 / 8, 5 / 12), 3: (19 / 180, 3 / 8)}
A5_C2 = {0: 1 / 6, 1: 1 / 24, 2: 7 / 240, 3: 17 / 720}


def single_mass(m=1.0, c=3.0, d=2.0):
    return cosim.LTI([[0, 1], [-c / m, -d / m]], [[0], [1 / m]], np.eye(2), np.zeros((2, 1)), name="S")


def nonlinear_mass(D=1.0, C=1e9):
    """kraft2021 Table A.2 (A.6)/(A.7): m = 1 kg, c = 1e7 N/m, d = 1 Ns/m, C = 1e9 N/m^3, D (varied) Ns^3/m^3."""
    return BuiltinModel("kraft_mass", [1.0, 1e7, 1.0, C, D, 3.0, 3.0, 1.0, 0.0, 0.0], nx=2, nu=1, ny=2, name="M",
                        feedthrough=False)


def central_difference(S, H, kappa, x, coefs, solver, d):
    """(y(T+H; p + d ℓ e_a) - y(T+H; p - d ℓ e_a)) / 2d per input a: the fd Jacobian from the base p - d ℓ e_a
    with the perturbation 2d."""
    ell = end_basis(kappa)
    G = np.zeros((S.ny, S.nu))
    for a in range(S.nu):
        base = np.array(coefs, dtype=float)
        base[:ell.size, a] -= d * ell
        G[:, a] = interface_jacobian(S, H, method="fd", kappa=kappa, x=x, coefs=base, solver=solver,
                                     perturbation=2 * d)[:, a]
    return G


# --- two-term sap (§13.1/13.2) ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kappa", range(4))
def test_sap2_adds_the_second_term_of_series_A5(kappa):
    """sap2 = Table A.1's first term plus the damping term of (A.5): -c2 d H^3/m^2 on x_λ, -C_pos d H^2/m^2 on v_λ."""
    m, c, d, H = 2.5, 3.0, 4.0, 0.01
    S = single_mass(m, c, d)
    sap = interface_jacobian(S, H, method="sap", kappa=kappa).ravel()
    sap2 = interface_jacobian(S, H, method="sap2", kappa=kappa).ravel()
    cpos, cvel = TABLE_A1[kappa]
    assert sap2[0] == pytest.approx(cpos * H ** 2 / m - A5_C2[kappa] * d * H ** 3 / m ** 2, rel=1e-12)
    assert sap2[1] == pytest.approx(cvel * H / m - cpos * d * H ** 2 / m ** 2, rel=1e-12)
    assert sap[1] == pytest.approx(cvel * H / m, rel=1e-12)


@pytest.mark.parametrize("kappa", [0, 1, 2])
def test_sap2_error_is_one_power_of_H_smaller_than_sap(kappa):
    """Against the exact LTI Jacobian: sap leaves O(H^3) on x_λ and O(H^2) on v_λ, the two-term series O(H^4) and
    O(H^3) (the first omitted term of (A.5)), and is the closer one at every H here."""
    S = single_mass(1.0, 3.0, 2.0)
    Hs = np.array([0.04, 0.02, 0.01])
    e1, e2 = [], []
    for H in Hs:
        ex = interface_jacobian(S, H, method="exact", kappa=kappa).ravel()
        e1.append(np.abs(interface_jacobian(S, H, method="sap", kappa=kappa).ravel() - ex))
        e2.append(np.abs(interface_jacobian(S, H, method="sap2", kappa=kappa).ravel() - ex))
    e1, e2 = np.array(e1), np.array(e2)
    assert np.all(e2 < 0.1 * e1)
    slope = lambda e: np.polyfit(np.log(Hs), np.log(e), 1)[0]
    assert slope(e1[:, 0]) == pytest.approx(3.0, abs=0.15) and slope(e1[:, 1]) == pytest.approx(2.0, abs=0.15)
    assert slope(e2[:, 0]) == pytest.approx(4.0, abs=0.15) and slope(e2[:, 1]) == pytest.approx(3.0, abs=0.15)


@pytest.mark.parametrize("kappa", [0, 1, 2])
def test_sap2_turns_the_sign_of_v_lambda_at_high_damping(kappa):
    """§13.4 Ex. 1: the two-term series is no better and goes unstable at high damping: its v_λ = (C_vel - C_pos
    dH/m) H/m changes sign for dH/m > C_vel/C_pos (2, 3, 10/3 for κ = 0, 1, 2), where the exact v_λ and sap stay
    positive, so a Newton step with it moves the wrong way. c = 1e7 N/m, m = 1 kg, H = 5e-6 s, dH/m = 4."""
    cpos, cvel = TABLE_A1[kappa]
    H, m = 5e-6, 1.0
    d = 4.0 * m / H
    S = single_mass(m, 1e7, d)
    ex = interface_jacobian(S, H, method="exact", kappa=kappa).ravel()[1]
    sap = interface_jacobian(S, H, method="sap", kappa=kappa).ravel()[1]
    sap2 = interface_jacobian(S, H, method="sap2", kappa=kappa).ravel()[1]
    assert ex > 0 and sap > 0 and sap2 < 0
    assert sap2 == pytest.approx((cvel - cpos * 4.0) * H / m, rel=1e-12)


def test_sap2_on_the_moderately_damped_chain():
    """The T23 chain (D = 0.75, κ = 2): the second term recovers most of the iterations sap loses against fd.
    Measured: fd 2.0, sap2 2.4, sap 3.5 corrector iterations per step."""
    from chain_util import chain
    sys = chain(ns=4, nb=2, d=150.0, dc=150.0)
    mean = {}
    for j in ("fd", "sap", "sap2"):
        r = cosim.simulate(sys, 0.1, 2e-3, scheme=cosim.Implicit(jacobian=j, tol=1e-8, max_iter=30),
                           solver=cosim.Exact(), approximation=cosim.Lagrange(2))
        mean[j] = r.stats["iterations"] / r.stats["macro_steps"]
    assert mean["fd"] <= mean["sap2"] < mean["sap"], mean


# --- the sensitivity ODE of nonlinear units (§13.3) ---------------------------------------------------------------

@pytest.mark.parametrize("D", [1.0, 1e3, 1e5])
def test_exact_jacobian_of_the_nonlinear_single_mass_equals_central_differences(D):
    """(A.8) integrated with the unit's RK4 along the trajectory of a ramp input equals a central difference of the
    unit's window map (Δ = 100 N: the response is linear in λ to far below the round-off of x) to 1e-6 relative, for
    the Table A.2 mass with nonlinear damping D up to 1e5 Ns^3/m^3 where sap (constant states) is off by 100 %."""
    S, H, kappa = nonlinear_mass(D), 5e-6, 1
    x, coefs = np.array([1e-3, 5.0]), np.array([[100.0], [30.0]])
    rk4 = cosim.RK4(substeps=50)
    ex = interface_jacobian(S, H, method="exact", kappa=kappa, x=x, coefs=coefs, solver=rk4)
    cd = central_difference(S, H, kappa, x, coefs, rk4, 100.0)
    assert np.max(np.abs(ex - cd) / np.abs(cd)) < 1e-6
    # CVODE integrates the same equations (its own error control on the scaled sensitivities; rtol below 1e-10 is
    # raised to 1e-10 for them) and meets a converged RK4 (500 micro steps; 50 leave 5e-6 at D = 1e5)
    fine = interface_jacobian(S, H, method="exact", kappa=kappa, x=x, coefs=coefs, solver=cosim.RK4(substeps=500))
    for rtol in (1e-10, 1e-12):
        cv = interface_jacobian(S, H, method="exact", kappa=kappa, x=x, coefs=coefs,
                                solver=cosim.CVODE(rtol=rtol, atol=1e-16))
        assert np.max(np.abs(cv - fine) / np.abs(fine)) < 1e-7
    sap = interface_jacobian(S, H, method="sap", kappa=kappa, x=x, coefs=coefs, solver=rk4)
    if D >= 1e5:
        assert np.max(np.abs(sap - cd) / np.abs(cd)) > 0.5


def test_exact_jacobian_of_a_feedthrough_unit_with_two_inputs():
    """genser's nonlinear base-excited mass (inputs x1, v1; output the coupling force, feed-through): every column
    against central differences (this also checks that fd perturbs one input at a time)."""
    S2 = cosim.models.two_mass_oscillator(nonlinear=True).subsystems[1]
    H, kappa, rk4 = 1e-4, 1, cosim.RK4(substeps=4)
    x, coefs = np.array([0.001, 0.5]), np.array([[0.1, 0.0], [-0.001, -2.0]])
    ex = interface_jacobian(S2, H, method="exact", kappa=kappa, x=x, coefs=coefs, solver=rk4)
    cd = central_difference(S2, H, kappa, x, coefs, rk4, 1e-5)
    assert np.max(np.abs(ex - cd) / np.abs(cd)) < 1e-6


def test_exact_jacobian_in_the_implicit_scheme_on_nonlinear_units():
    """kraft's M2 (cubic and 7th-power elements, a stateless nonlinear cut element; κ = 2, H = 4e-4 s, tol 1e-11):
    the exact Jacobian, renewed at every corrector iterate, reaches fd's fixed point with fewer corrector iterations
    than fd and sap. Measured (RK4, h = 1e-5 s): exact 2.74, fd 2.98, sap 3.24 per step."""
    sys = cosim.models.kraft_two_mass("M2")
    res = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for j in ("fd", "sap", "exact"):
            res[j] = cosim.simulate(sys, 0.02, 4e-4, scheme=cosim.Implicit(jacobian=j, tol=1e-11, max_iter=30),
                                    solver=cosim.RK4(h=1e-5), approximation=cosim.Lagrange(2))
    mean = {j: r.stats["iterations"] / r.stats["macro_steps"] for j, r in res.items()}
    assert mean["exact"] < mean["fd"] < mean["sap"], mean
    assert res["exact"].stats["iterations_per_step"].max() <= res["fd"].stats["iterations_per_step"].max()
    scale = np.max(np.abs(res["fd"].X))
    assert np.max(np.abs(res["exact"].X - res["fd"].X)) < 1e-9 * scale


def test_exact_jacobian_with_cvode_units_and_genser_nonlinear_coupling():
    sys = cosim.models.two_mass_oscillator(nonlinear=True)
    kw = dict(solver=cosim.CVODE(rtol=1e-10, atol=1e-12), approximation=cosim.Lagrange(1))
    r = {j: cosim.simulate(sys, 0.005, 1e-4, scheme=cosim.Implicit(jacobian=j, tol=1e-10, max_iter=30), **kw)
         for j in ("fd", "exact")}
    assert np.max(np.abs(r["exact"].X - r["fd"].X)) < 1e-8 * np.max(np.abs(r["fd"].X))
    assert r["exact"].stats["iterations"] <= r["fd"].stats["iterations"] * 1.1


def test_interface_jacobian_input_arguments():
    S = single_mass()
    with pytest.raises(ValueError, match="coefs"):
        interface_jacobian(S, 0.01, u=[1.0], coefs=[[1.0]])
    with pytest.raises(ValueError, match="coefs"):
        interface_jacobian(S, 0.01, coefs=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="coefs"):
        interface_jacobian(S, 0.01, coefs=np.zeros((9, 1)))
    with pytest.raises(ValueError, match="coefs"):
        interface_jacobian(S, 0.01, coefs=[[np.nan]])
    with pytest.raises(ValueError, match="method"):
        interface_jacobian(S, 0.01, method="sap3")
    # an LTI unit's exact Jacobian does not depend on the input
    a = interface_jacobian(S, 0.01, kappa=2, coefs=[[1.0], [2.0], [3.0]])
    b = interface_jacobian(S, 0.01, kappa=2)
    assert np.array_equal(a, b)
