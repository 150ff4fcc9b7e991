"""kraft2021 App. A's numerical examples (spec §13.4, §18.12): the sap interface Jacobian against fd (and the
two-term series sap2) inside the implicit scheme with imMD step and order control, reduced to runs of a few seconds.

Example 1: the lumped-mass steel rod (Table A.3, ``preset="tableA.3"``); Example 2: the asymmetric two-mass
oscillator of Sec. 5.5 (:func:`cosim.models.kraft_asymmetric`); Example 3 at smaller masses (Table A.4 chain; the
m = 1e-2 kg row is tests/test_implicit.py's T23 test); Example 4: the impulse chain of Sec. 5.8 (Table 5.9).
n̄_cor = corrector iterations per macro step (the retried attempts after corrector failures included), as in
tests/test_implicit.py. The full-size sweeps and a figure: benchmarks/sap_examples.py."""
import numpy as np
import pytest

import cosim



def implicit_run(system, t_end, jacobian, rtol, atol, tau, max_iter, H0, solver=None):
    """An imMD run with full step and order control (Lagrange start at κ = 0, kraft2021 §19) and the corrector
    convergence test on the outputs; returns macro steps, n̄_cor and corrector failures (retried with H/4)."""
    r = cosim.simulate(system, t_end, H=H0, solver=solver, approximation=cosim.Lagrange(0), last_step="shorten",
                       divergence_growth=np.inf,
                       step_control=cosim.StepControl(estimator="imMD", rtol=rtol, atol=atol),
                       scheme=cosim.Implicit(jacobian=jacobian, tol=rtol, max_iter=max_iter, convergence="y",
                                             tau=tau))
    st = r.stats
    return dict(steps=st["macro_steps"], n_cor=st["iterations"] / st["macro_steps"], fails=st["corrector_failures"])


# --- Example 1: the steel rod (Table A.3) ---------------------------------------------------------------------------

def rod_run(n_bodies, damping_ratio, jacobian, t_end=1e-5):
    """Table A.3: imMD, rtol = 1e-5, atol^pos = 1e-3 rtol, atol^vel = rtol, n_cor^max = 10, τ = 0.33."""
    s = cosim.models.oscillator_chain(preset="tableA.3", n_bodies=n_bodies, damping_ratio=damping_ratio)
    rtol = 1e-5
    return implicit_run(s, t_end, jacobian, rtol, {"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}, 0.33, 10, 1e-9)


def similar(a, b):
    """App. A's "similar" / "almost equal" performance: macro steps within 10 %, n̄_cor within 0.1."""
    return abs(a["steps"] / b["steps"] - 1.0) <= 0.10 and abs(a["n_cor"] - b["n_cor"]) <= 0.1


def test_appA_ex1_rod_fd_and_sap_similar_below_1000_masses():
    """Ex. 1 (Fig. A.12): the macro steps grow with n_K (the element stiffness c_i = Eπr²n_K/L) and fd and sap
    perform similarly for n_K < 1000. Reduced: n_K = 20 and 100, D = 1e-3, t = 1e-5 s (the impulse's rise and its
    wave over a quarter of the rod). Measured: 54 and 122 macro steps, n̄_cor 1.83 and 1.86, identical for fd and
    sap."""
    runs = {n: {j: rod_run(n, 1e-3, j) for j in ("fd", "sap")} for n in (20, 100)}
    for n, r in runs.items():
        assert similar(r["sap"], r["fd"]), (n, r)
    assert runs[100]["fd"]["steps"] > 1.5 * runs[20]["fd"]["steps"], runs


def test_appA_ex1_rod_damping_sweep_sap_good_below_D_1_fd_superior_above():
    """Ex. 1 (Fig. A.13, n_K = 100): sap is good for the damping ratio D = d_i/(2√(c_i m_i)) < 1, fd clearly
    superior for higher D. "Clearly superior" read as: sap needs at least 1.5 times fd's macro steps, more so as D
    grows. Measured (t = 1e-5 s): D = 0.3 identical counts (91 steps, n̄_cor 1.82); macro steps fd/sap 104/127
    (ratio 1.2) at D = 3, 121/220 (1.8) at D = 10 (180/457 at D = 30, not run here), n̄_cor 1.9-2.1 for both."""
    runs = {D: {j: rod_run(100, D, j) for j in ("fd", "sap")} for D in (0.3, 3.0, 10.0)}
    assert similar(runs[0.3]["sap"], runs[0.3]["fd"]), runs
    ratio = {D: r["sap"]["steps"] / r["fd"]["steps"] for D, r in runs.items()}
    assert ratio[10.0] >= 1.5 and ratio[10.0] > ratio[3.0] > ratio[0.3], ratio


def test_appA_ex1_rod_two_term_series_no_better_than_sap():
    """Ex. 1: "the two-series-term approximation" (sap2) is no better than sap. At D = 10 and 20 (n_K = 100) it
    needs more macro steps than sap and its corrector fails where sap's never does. Measured (t = 1e-5 s): macro
    steps sap/sap2 220/323 (D = 10) and 338/634 (D = 20), 45 and 133 corrector failures of sap2, none of sap."""
    for D in (10.0, 20.0):
        sap, sap2 = rod_run(100, D, "sap"), rod_run(100, D, "sap2")
        assert sap2["steps"] >= sap["steps"] and sap2["fails"] > sap["fails"] == 0, (D, sap, sap2)


@pytest.mark.xfail(strict=True, reason="kraft2021 App. A Ex. 1: the two-term series is unstable for d_i > 6.38e5 Ns/m "
                   "(D = 25 on the n_K = 100 rod) and fine below. Measured: sap2 has corrector failures from D = 3 on "
                   "(t = 1e-5 s: 45 at D = 10, 133 at D = 20 (d_i = 5.1e5); t = 2e-5 s: 13 at D = 3, 313 at D = 20) and "
                   "finishes at every D up to 60 (D = 30, d_i = 7.7e5, t = 1e-5 s: 201 failures, 975 macro steps "
                   "against sap's 457): the controller's H/4 retries keep it stable; no threshold at 6.38e5")
def test_appA_ex1_rod_two_term_series_unstable_only_above_6_38e5():
    below = rod_run(100, 20.0, "sap2")                  # d_i = 5.1e5 Ns/m
    assert below["fails"] == 0, below
    with pytest.raises(cosim.SolverError):
        rod_run(100, 30.0, "sap2")                      # d_i = 7.7e5 Ns/m


# --- Example 2: the asymmetric two-mass oscillator (Sec. 5.5, Table 5.6) --------------------------------------------

def asymmetric_run(mass_ratio, dc, jacobian, t_end, tau=0.01):
    """Table 5.6 with m2 = 1 kg, m1 = m2/m_r, coupling damping d_c; imMD, rtol = 1e-3, atol^pos = 1e-6,
    atol^vel = 1e-3, n_cor^max = 10; units CVODE with the thesis' IDA tolerances (rtol 1e-6, atol 1e-9)."""
    s = cosim.models.kraft_asymmetric(m1=1.0 / mass_ratio, dc=dc)
    return implicit_run(s, t_end, jacobian, 1e-3, {"pos": 1e-6, "vel": 1e-3, "u": 1e-2}, tau, 10, 1e-6,
                        solver=cosim.CVODE(rtol=1e-6, atol=1e-9))


@pytest.mark.parametrize("dc", [30.0, 100.0])
def test_appA_ex2_sap_needs_about_3_iterations_at_mass_ratio_1e3(dc):
    """Ex. 2 (Fig. A.23, m_r = 1e3, τ = 0.01): n̄_cor ≈ 3 with sap against ≈ 2 with fd, and more convergence
    failures with sap. Bands: fd 2-2.5 (T23's), sap 2.5-3.5. Reduced to t = 0.05 s. Measured: fd 2.01 / 2.07,
    sap 3.01 / 2.92 (d_c = 30 / 100 Ns/m); corrector failures fd 0 / 1, sap 13 / 26."""
    fd, sap = asymmetric_run(1e3, dc, "fd", 0.05), asymmetric_run(1e3, dc, "sap", 0.05)
    assert 2.0 <= fd["n_cor"] <= 2.5 and 2.5 <= sap["n_cor"] <= 3.5, (fd, sap)
    assert sap["fails"] > fd["fails"], (fd, sap)


@pytest.mark.xfail(strict=True, reason="kraft2021 App. A Ex. 2: sap's n̄_cor ≈ 3 'for most damping values' at m_r = 1e3. "
                   "Measured (t = 0.05 s, τ = 0.01): 2.28, 3.01, 2.92, 2.25, 2.16, 2.03, 2.00, 2.00 at d_c = 1e1, 3e1, "
                   "1e2, 3e2, 1e3, 1e4, 1e5, 1e6 Ns/m (fd 2.00-2.10 throughout): about 3 only for d_c = 30-100 "
                   "(coupling damping ratio 0.5-1.6), near fd's 2 for the strongly damped coupling")
def test_appA_ex2_sap_about_3_iterations_for_most_damping_values():
    n_cor = {dc: asymmetric_run(1e3, dc, "sap", 0.05)["n_cor"] for dc in (10.0, 300.0, 1e3)}
    assert all(2.5 <= v <= 3.5 for v in n_cor.values()), n_cor


def test_appA_ex2_sap_needs_far_more_macro_steps_at_mass_ratio_1e6():
    """Ex. 2 (Fig. A.24): at m_r = 1e6 "drastic discrepancy in the number of macro steps" (sap much worse), read as
    at least 3 times fd's. Reduced: t = 2e-3 s, τ = 0.01. Measured: fd/sap 142/840 (d_c = 1 Ns/m) and 193/1590
    (d_c = 10); at d_c = 100 and 1000 the factor falls to 2.8 and 1.5."""
    for dc in (1.0, 10.0):
        fd, sap = asymmetric_run(1e6, dc, "fd", 2e-3), asymmetric_run(1e6, dc, "sap", 2e-3)
        assert sap["steps"] >= 3 * fd["steps"], (dc, fd, sap)


@pytest.mark.parametrize("mass_ratio, t_end", [(1e3, 0.02), (1e6, 1e-3)])
def test_appA_ex2_undamped_coupling_fd_and_sap_similar(mass_ratio, t_end):
    """Ex. 2: undamped coupling (d_c = 0): fd and sap similar "even at very high m_r". Measured (t = 0.05 s at
    m_r = 1e3, 2e-3 s at 1e6): 4364/4419 and 5596/5535 macro steps, n̄_cor 2.01 for both."""
    fd, sap = asymmetric_run(mass_ratio, 0.0, "fd", t_end), asymmetric_run(mass_ratio, 0.0, "sap", t_end)
    assert similar(sap, fd), (fd, sap)


def test_appA_ex2_fd_runs_with_tau_0_33():
    """Ex. 2: fd works with kraft's default τ = 0.33 at m_r >> 1 (m_r = 1e6, d_c = 10 Ns/m, t = 2e-3 s): no
    corrector failure, n̄_cor ≈ 2 (T23 band). Measured 193 macro steps, n̄_cor 1.96."""
    fd = asymmetric_run(1e6, 10.0, "fd", 2e-3, tau=0.33)
    assert fd["fails"] == 0 and 1.9 <= fd["n_cor"] <= 2.5, fd


@pytest.mark.xfail(strict=True, reason="kraft2021 App. A Ex. 2: sap needs τ = 0.01 for stability at m2/m1 >> 1. Measured "
                   "(m_r = 1e6, d_c = 10 Ns/m, t = 2e-3 s): with τ = 0.33 sap finishes (1976 macro steps, n̄_cor 2.20, "
                   "25 corrector failures; τ = 0.01: 1590, 2.92, 59) with the same max|x1| = 0.05 m")
def test_appA_ex2_sap_unstable_with_tau_0_33():
    with pytest.raises(cosim.SolverError):
        asymmetric_run(1e6, 10.0, "sap", 2e-3, tau=0.33)


# --- Example 3 at smaller masses (Table A.4 chain) ------------------------------------------------------------------

def table_a4_run(mass, jacobian, t_end=5e-5):
    """Table A.4 reduced as in tests/test_implicit.py (n_K = 30, n_s = 15, seed 1): imMD, rtol = 1e-4,
    atol^pos = rtol, atol^vel = 1e3 rtol, τ = 0.01, n_cor^max = 5."""
    s = cosim.models.oscillator_chain(preset="tableA.4", n_bodies=30, masses=mass, seed=1)
    rtol = 1e-4
    return implicit_run(s, t_end, jacobian, rtol, {"pos": rtol, "vel": 1e3 * rtol, "u": 1e4 * rtol}, 0.01, 5, 1e-9)


def test_appA_ex3_fd_clearly_better_for_smaller_masses():
    """Ex. 3 (Figs. A.25-A.27): for decreasing m_i fd is clearly better than sap; n̄_cor(fd) ≈ 2. Read as: sap's
    macro steps over fd's grow as m_i falls from 1e-2 to 1e-3 kg and exceed 2 at both. Reduced: t = 5e-5 s.
    Measured: fd/sap macro steps 133/317 (m = 1e-2 kg) and 223/2552 (1e-3 kg); n̄_cor fd 2.02/2.05."""
    runs = {m: {j: table_a4_run(m, j) for j in ("fd", "sap")} for m in (1e-2, 1e-3)}
    ratio = {m: r["sap"]["steps"] / r["fd"]["steps"] for m, r in runs.items()}
    assert 2.0 < ratio[1e-2] < ratio[1e-3], (ratio, runs)
    assert all(2.0 <= r["fd"]["n_cor"] <= 2.5 for r in runs.values()), runs


@pytest.mark.xfail(strict=True, reason="kraft2021 App. A Ex. 3: sap's n̄_cor ≈ 4, only weakly dependent on m_i (T23 band "
                   "3-4). Measured: 3.68 (m = 1e-2 kg), 2.99 (1e-3), 2.32 (1e-4; t = 5e-5 s, 25787 macro steps, not "
                   "run here); at t = 3e-4 s 3.75 and 2.98: it falls with m_i while sap's corrector failures multiply "
                   "(71, 702, 7495 at t = 5e-5 s)")
def test_appA_ex3_sap_about_4_iterations_at_smaller_masses():
    """Both halves of the claim: n̄_cor in the band at m = 1e-2 and 1e-3 kg, and "weakly dependent": the two within
    10 % of each other (the falling trend, -19 % here, is what fails; 2.99 alone sits at the band's edge)."""
    sap = {m: table_a4_run(m, "sap") for m in (1e-2, 1e-3)}
    assert all(3.0 <= r["n_cor"] <= 4.0 for r in sap.values()), sap
    assert abs(sap[1e-3]["n_cor"] / sap[1e-2]["n_cor"] - 1.0) <= 0.10, sap


# --- Example 4: the impulse chain of Sec. 5.8 (Table 5.9) -----------------------------------------------------------

@pytest.mark.parametrize("rtol", [1e-4, 1e-5])
def test_appA_ex4_impulse_chain_fd_and_sap_almost_equal(rtol):
    """Ex. 4 (Figs. A.28, A.29): on the Sec. 5.8 model with imMD, sap and fd take almost equal macro steps and
    corrector iterations. Reduced as T21 (n_K = 50, n_s = 10, seed 1, t = 1.2e-4 s: the start and the first
    impulse on every coupling body), controller atol^pos = 1e-3 rtol, atol^vel = rtol, τ = 0.33. Measured:
    226/226 macro steps, n̄_cor 2.03/2.05 (rtol 1e-4); 325/333, 2.01/2.02 (1e-5). (sap's lower wall time, the
    thesis' other finding, is in benchmarks/sap_examples.py.)"""
    s = cosim.models.oscillator_chain(preset="table5.9", n_bodies=50, n_subsystems=10, seed=1)
    band = cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band")
    fd, sap = (implicit_run(s, 1.2e-4, j, rtol, {"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}, 0.33, 10, 1e-8,
                            solver=band) for j in ("fd", "sap"))
    assert similar(sap, fd), (fd, sap)
