"""Implicit co-simulation (kraft2021 §6, App. A): interface Jacobians (T3, T22), converged orders (T10), corrector
iterations on a chain (T23), the corrector-failure path and argument checks."""
import math

import numpy as np
import pytest

import cosim
from cosim.schemes import end_basis, interface_jacobian
from chain_util import chain

TABLE_A1 = {0: (1 / 2, 1), 1: (1 / 6, 1 / 2), 2: (1 / 8, 5 / 12), 3: (19 / 180, 3 / 8), 4: (3 / 32, 251 / 720),
            5: (863 / 10080, 95 / 288)}


def single_mass(m=1.0, c=3.0, d=2.0):
    return cosim.LTI([[0, 1], [-c / m, -d / m]], [[0], [1 / m]], np.eye(2), np.zeros((2, 1)), name="S")


@pytest.mark.parametrize("kappa", range(6))
def test_T3_sap_coefficients_are_table_A1(kappa):
    m, H = 2.5, 0.01
    G = interface_jacobian(single_mass(m=m), H, method="sap", kappa=kappa).ravel()
    cpos, cvel = TABLE_A1[kappa]
    assert G[0] == pytest.approx(cpos * H ** 2 / m, rel=1e-12)
    assert G[1] == pytest.approx(cvel * H / m, rel=1e-12)


def test_T3_series_residual_of_the_exact_sensitivity():
    """[DERIVED] m = 1, c = 3, d = 2, H = 0.01, κ = 2: v_λ(H) minus the first three terms of (A.5) = 2.2124e-10."""
    m, c, d, H = 1.0, 3.0, 2.0, 0.01
    v = interface_jacobian(single_mass(m, c, d), H, method="exact", kappa=2).ravel()[1]
    r = v - (5 / 12 * H - 1 / 8 * d * H ** 2 + 7 / 240 * (d * d - c * m) * H ** 3)
    assert r == pytest.approx(2.2124e-10, rel=1e-3)


def test_T3_series_residual_scales_as_H5():
    m, c, d = 1.0, 3.0, 2.0
    Hs = np.array([0.04, 0.02, 0.01])
    res = []
    for H in Hs:
        x = interface_jacobian(single_mass(m, c, d), H, method="exact", kappa=1).ravel()[0]
        res.append(abs(x - (H ** 2 / 6 - d * H ** 3 / 24 + (d * d - c) * H ** 4 / 120)))
    slope = np.polyfit(np.log(Hs), np.log(res), 1)[0]
    assert slope == pytest.approx(5.0, abs=0.2)


@pytest.mark.parametrize("kappa", [0, 1, 2])
def test_T22_fd_equals_exact_on_a_linear_subsystem(kappa):
    S = single_mass()
    for pert in (1e-3, 1.0, 100.0):  # linear: any perturbation
        fd = interface_jacobian(S, 0.05, method="fd", kappa=kappa, perturbation=pert)
        ex = interface_jacobian(S, 0.05, method="exact", kappa=kappa)
        assert np.max(np.abs(fd - ex) / np.abs(ex)) < 1e-6


@pytest.mark.parametrize("kappa,D,expected", [
    (1, 0.1, (0.1, 0.1)), (1, 1, (0.8, 1.1)), (1, 10, (8.0, 10.8)), (1, 100, (88.5, 126.8)),
    (0, 1, (1.1, 1.6)), (0, 100, (127, 230)), (2, 1, (0.7, 1.0)), (2, 100, (81, 110))])
def test_T22_sap_relative_errors(kappa, D, expected):
    """c = 1e7 N/m, m = 1 kg, H = 5e-6 s, damping ratio D: relative error (%) of sap against the exact sensitivity,
    compared with the spec's values to the digits printed there."""
    c, H = 1e7, 5e-6
    S = single_mass(1.0, c, 2 * D * math.sqrt(c))
    ex = interface_jacobian(S, H, method="exact", kappa=kappa).ravel()
    sap = interface_jacobian(S, H, method="sap", kappa=kappa).ravel()
    err = 100 * np.abs(sap - ex) / np.abs(ex)
    digits = [0.5 * 10 ** -(len(str(v).split(".")[1]) if "." in str(v) else 0) for v in expected]
    for e, v, tol in zip(err, expected, digits):
        assert abs(e - v) <= tol + 1e-9, (err, expected)


def test_end_basis_is_the_lagrange_basis_of_the_end_node():
    for kappa in range(6):
        c = end_basis(kappa)
        p = np.polynomial.Polynomial(c)
        assert p(1.0) == pytest.approx(1.0)
        for i in range(1, kappa + 1):
            assert abs(p(1.0 - i)) < 1e-12


def _err(sys, res):
    return np.max(np.abs(res.X - sys.solution(res.t)))


@pytest.mark.parametrize("kappa", [0, 1, 2])
def test_T10_converged_implicit_and_waveform_orders(kappa):
    """Converged implicit and WR (kraft's ω = 0.3, i.e. ω = 0.7 here) keep the explicit global order κ+1 and reach
    the same fixed point."""
    sys = cosim.models.precice_oscillator()
    Hs = [0.01, 0.005, 0.0025]
    e_imp, e_wr = [], []
    for H in Hs:
        kw = dict(solver=cosim.Exact(), approximation=cosim.Lagrange(kappa))
        ri = cosim.simulate(sys, 0.5, H, scheme=cosim.Implicit(jacobian="exact", tol=1e-12), **kw)
        rw = cosim.simulate(sys, 0.5, H, scheme=cosim.WaveformRelaxation(omega=0.7, tol=1e-12, max_iter=200), **kw)
        assert np.max(np.abs(ri.X - rw.X)) < 1e-8 * max(1.0, np.max(np.abs(ri.X - sys.solution(ri.t))) * 1e3)
        e_imp.append(_err(sys, ri))
        e_wr.append(_err(sys, rw))
    for e in (e_imp, e_wr):
        slope = np.polyfit(np.log(Hs), np.log(e), 1)[0]
        assert slope == pytest.approx(kappa + 1, abs=0.3)


def test_implicit_jacobians_reach_the_same_fixed_point_and_count_iterations():
    sys = chain(ns=3, nb=2)
    kw = dict(solver=cosim.Exact(), approximation=cosim.Lagrange(2))
    res = {j: cosim.simulate(sys, 0.05, 1e-3, scheme=cosim.Implicit(jacobian=j, tol=1e-10, max_iter=30), **kw)
           for j in ("fd", "sap", "exact")}
    scale = np.max(np.abs(res["exact"].X))
    for j in ("fd", "sap"):
        assert np.max(np.abs(res[j].X - res["exact"].X)) < 1e-7 * scale
    for r in res.values():
        per = r.stats["iterations_per_step"]
        assert len(per) == r.stats["macro_steps"] and per.sum() == r.stats["iterations"] and per.min() >= 1
    # exact Jacobian on a linear system: one Newton step plus the confirming iteration
    assert np.all(res["exact"].stats["iterations_per_step"] == 2)


def test_T23_corrector_iterations_fd_and_sap_on_a_chain():
    """kraft2021 T23: mean corrector iterations with fd ≈ 2-2.5, with sap ≈ 3-4 (moderately damped chain, D = 0.75,
    κ = 2; sap's approximate Jacobian costs the extra iterations)."""
    sys = chain(ns=4, nb=2, d=150.0, dc=150.0)
    kw = dict(solver=cosim.Exact(), approximation=cosim.Lagrange(2))
    mean = {}
    for j in ("fd", "sap"):
        r = cosim.simulate(sys, 0.1, 2e-3, scheme=cosim.Implicit(jacobian=j, tol=1e-8, max_iter=30), **kw)
        mean[j] = r.stats["iterations"] / r.stats["macro_steps"]
    assert 2.0 <= mean["fd"] <= 2.5, mean
    assert 3.0 <= mean["sap"] <= 4.0, mean


def test_fd_with_rk4_units_and_nonlinear_units_run():
    sys = cosim.models.two_mass_oscillator(nonlinear=True)
    r = cosim.simulate(sys, 0.01, 1e-4, scheme=cosim.Implicit(jacobian="fd", tol=1e-8, max_iter=20),
                       solver=cosim.RK4(substeps=4), approximation=cosim.Lagrange(1))
    ref = cosim.simulate(sys, 0.01, 1e-5, scheme="jacobi", solver=cosim.RK4(substeps=4), approximation=cosim.Lagrange(1))
    assert r.stats["iterations"] >= r.stats["macro_steps"]
    assert np.max(np.abs(r.X[-1] - ref.X[-1])) < 1e-3 * np.max(np.abs(ref.X))
    r2 = cosim.simulate(sys, 0.01, 1e-4, scheme=cosim.Implicit(jacobian="sap", tol=1e-8, max_iter=30),
                        solver=cosim.RK4(substeps=4), approximation=cosim.Lagrange(1))
    assert np.max(np.abs(r2.X[-1] - r.X[-1])) < 1e-6 * np.max(np.abs(r.X))


def test_convergence_error_carries_the_partial_result():
    sys = chain(ns=4, nb=2, d=1000.0, dc=1000.0)
    with pytest.raises(cosim.ConvergenceError) as ei:
        cosim.simulate(sys, 0.1, 2e-3, scheme=cosim.Implicit(jacobian="sap", tol=1e-10, max_iter=3),
                       solver=cosim.Exact(), approximation=cosim.Lagrange(2))
    e = ei.value
    assert isinstance(e, cosim.SolverError)
    assert "did not converge" in str(e) and "max_iter" in str(e)
    assert e.result is not None and len(e.result.t) >= 1 and e.result.t[-1] < 0.1
    # kraft §5.1: fixed-H runs may go on with the last iterate
    r = cosim.simulate(sys, 0.01, 2e-3, scheme=cosim.Implicit(jacobian="sap", tol=1e-10, max_iter=3,
                                                                on_failure="continue"),
                       solver=cosim.Exact(), approximation=cosim.Lagrange(2))
    assert r.stats["iterations"] == 3 * r.stats["macro_steps"]


@pytest.mark.parametrize("kw,name", [(dict(tol=0.0), "tol"), (dict(tol=-1), "tol"), (dict(max_iter=0), "max_iter"),
                                     (dict(jacobian="newton"), "jacobian"), (dict(tau=1.0), "tau"),
                                     (dict(convergence="z"), "convergence"), (dict(on_failure="x"), "on_failure"),
                                     (dict(perturbation=0.0), "perturbation")])
def test_implicit_bad_arguments(kw, name):
    with pytest.raises(ValueError, match=name):
        cosim.Implicit(**kw)


def test_implicit_needs_lagrange_and_exact_jacobian_of_nonlinear_units_runs():
    sys = cosim.models.precice_oscillator()
    with pytest.raises(ValueError, match="approximation"):
        cosim.simulate(sys, 0.1, 0.01, scheme=cosim.Implicit(), approximation=cosim.Hermite(1))
    # nonlinear units: the sensitivity equations (tests/test_sensitivity.py), no longer an error
    nl = cosim.models.two_mass_oscillator(nonlinear=True)
    kw = dict(solver=cosim.RK4(substeps=2), approximation=cosim.ZOH())
    r = {j: cosim.simulate(nl, 1e-3, 1e-4, scheme=cosim.Implicit(jacobian=j), **kw) for j in ("exact", "fd")}
    assert np.max(np.abs(r["exact"].X - r["fd"].X)) < 1e-8 * np.max(np.abs(r["fd"].X))
    with pytest.raises(TypeError, match="scheme"):
        cosim.simulate(sys, 0.1, 0.01, scheme=3)
