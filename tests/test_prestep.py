"""Genser's pre-step coupling, FOH/NEPCE baselines (genser2020.md §3-§5, §8, §9; acceptance tests of §18)."""
import math
import warnings

import numpy as np
import pytest

import cosim
from cosim.coupling import input_optimization, prestep_phi
from cosim.models import interface_jacobians, two_mass_oscillator

EULER = cosim.Euler(h=1e-5)


def run(system, H, coupling=None, t_end=0.2, **kw):
    kw.setdefault("update", "simplified")      # genser's units report outputs with their own end-of-step input
    return cosim.simulate(system, t_end=t_end, H=H, solver=EULER, coupling=coupling, last_step="shorten",
                          divergence_growth=math.inf, **kw)


def eps_and_stable(system, H, coupling=None, t_end=0.2):
    try:
        res = run(system, H, coupling, t_end)
    except cosim.DivergenceError:
        return 1.0, False
    ref = cosim.simulate_monolithic(system, t_end=t_end, t_eval=res.t)
    return cosim.metrics.eps_mono(res, ref), cosim.metrics.is_stable(res)


# ------------------------------------------------------------------------------------------- unit level (AT-3/4/14)

def test_at3_phi_matrices_exact_and_quadrature():
    ij = interface_jacobians(two_mass_oscillator(ck=1e5, dk=1e3))
    s1, s2 = ij["S1"], ij["S2"]
    phA, phB, phCD = prestep_phi(s1.dSdy, s1.dSdu, s1.dSdud, 1e-3)
    np.testing.assert_allclose([phA[0, 0], phA[1, 0]], [0.950416930, -98.3367299], rtol=1e-6)
    np.testing.assert_allclose(phB[:, 0], [4.95831e-8, 9.83367e-5], rtol=1e-5)
    np.testing.assert_allclose(phCD[:, 0], [1.65831e-11, 4.95831e-8], rtol=1e-5)
    phA, phB, phCD = prestep_phi(s2.dSdy, s2.dSdu, s2.dSdud, 1e-3)
    np.testing.assert_allclose(phA[0, 0], 4.11211e-5, rtol=1e-5)
    np.testing.assert_allclose(phB[0], [-99005.73, -990.0573], rtol=1e-6)
    np.testing.assert_allclose(phCD[0], [-99.10785, -0.9910785], rtol=1e-6)
    # trapezoidal rule with stepsDiscreteSystemMatrices = 1000 within rel 1e-3 of the exact matrices
    for s in (s1, s2):
        ex = prestep_phi(s.dSdy, s.dSdu, s.dSdud, 1e-3)
        q = prestep_phi(s.dSdy, s.dSdu, s.dSdud, 1e-3, stepsDiscreteSystemMatrices=1000)
        for a, b in zip(ex, q):
            np.testing.assert_allclose(b, a, rtol=1e-3, atol=1e-3 * np.max(np.abs(a)))


@pytest.mark.parametrize("ck, dk, expected", [
    (1e5, 1e3, [-10099.98, -49.5555 + 327.772j, -49.5555 - 327.772j]),
    (2e5, 200, [-1020.005, -10.0465 + 345.697j, -10.0465 - 345.697j])])
def test_at4_global_extrapolation_eigenvalues(ck, dk, expected):
    system = two_mass_oscillator(ck=ck, dk=dk)
    ij = interface_jacobians(system)
    from scipy.linalg import block_diag
    Sy = block_diag(ij["S1"].dSdy, ij["S2"].dSdy)
    Su = block_diag(ij["S1"].dSdu, ij["S2"].dSdu)
    Sd = block_diag(ij["S1"].dSdud, ij["S2"].dSdud)
    L = system.L
    M = np.linalg.solve(np.eye(3) - Sd @ L, Sy + Su @ L)
    ev = np.sort_complex(np.linalg.eigvals(M))
    np.testing.assert_allclose(ev, np.sort_complex(np.array(expected)), rtol=1e-5)


def test_at14_lagrange_input_optimization_satisfies_constraint_and_kkt():
    rng = np.random.default_rng(3)
    for n, m in ((1, 2), (2, 4), (1, 3)):
        A, rhs, tgt = rng.normal(size=(n, m)), rng.normal(size=n), rng.normal(size=m)
        x, rank = input_optimization(A, rhs, tgt)
        assert rank == n
        np.testing.assert_allclose(A @ x, rhs, atol=1e-10)
        # KKT system of min |x - tgt|^2 s.t. A x = rhs
        K = np.block([[2 * np.eye(m), A.T], [A, np.zeros((n, n))]])
        sol = np.linalg.solve(K, np.concatenate([2 * tgt, rhs]))
        np.testing.assert_allclose(x, sol[:m], atol=1e-10)
    # overdetermined: least squares; rank deficiency reported
    A, rhs = rng.normal(size=(3, 1)), rng.normal(size=3)
    x, rank = input_optimization(A, rhs, np.zeros(1))
    np.testing.assert_allclose(x, np.linalg.lstsq(A, rhs, rcond=None)[0], rtol=1e-12)
    x, rank = input_optimization(np.array([[1.0, 2.0], [2.0, 4.0]]), [1.0, 2.0], [0.0, 0.0])
    assert rank == 1
    np.testing.assert_allclose(np.array([[1.0, 2.0]]) @ x, [1.0], atol=1e-12)


# -------------------------------------------------------------------------------------- CoupEle closed form (AT-17)

def test_at17_coupele_closed_form_equals_algorithm():
    """One step of the closed-form combined system (spec §13.3, eq. 3.23-3.30) equals one macro step of the
    discrete pre-step with frozen (exact discrete) IJs and LTI subsystems."""
    H = 1e-3
    system = two_mass_oscillator(ck=2e5, dk=200)
    cp = cosim.PreStep(variant="discrete", jacobians="exact", useErrDiffEqu=True, timeLearning=0.0)
    res = cosim.simulate(system, t_end=0.02, H=H, solver=cosim.Exact(), coupling=cp, update="simplified")
    log = res.coupling_log
    from scipy.linalg import block_diag
    subs = system.subsystems
    ij = {}
    for s in subs:
        PhiA, PhiB = cosim.sysid.discretize(s.A, s.B, H)
        d = cosim.sysid.ij_discrete(PhiA, PhiB, s.C, s.D, form="thesis")
        ij[s.name] = (d, PhiA, PhiB)
    Sy = block_diag(*[ij[s.name][0].Sy for s in subs])
    Sum = block_diag(*[ij[s.name][0].Su_minus for s in subs])
    Sup = block_diag(*[ij[s.name][0].Su_plus for s in subs])
    L = system.L
    n, m = L.shape[1], L.shape[0]
    Chat = np.linalg.inv(np.eye(n) - Sup @ L)
    At, Bt, Dt = Sy + Sum @ L, Sum, Sup
    Ehat = Chat @ At                                            # (I - B̂)^-1 Â
    # input optimization as G_yhat yhat + G_y y^k + G_u u^k, per subsystem, stacked
    Gyh, Gy, Gu = np.zeros((m, n)), np.zeros((m, n)), np.zeros((m, m))
    for i, s in enumerate(subs):
        yo, uo = system.out_offset[i], system.in_offset[i]
        E = np.zeros((s.ny, n)); E[:, yo:yo + s.ny] = np.eye(s.ny)
        F = np.zeros((s.nu, m)); F[:, uo:uo + s.nu] = np.eye(s.nu)
        d = ij[s.name][0]
        A = d.Su_plus
        P = np.linalg.pinv(A)
        Li = L[uo:uo + s.nu]
        Gyh[uo:uo + s.nu] = Li + P @ (E - A @ Li)
        Gy[uo:uo + s.nu] = -P @ d.Sy @ E
        Gu[uo:uo + s.nu] = -P @ d.Su_minus @ F
    Mu1 = -Gyh @ Ehat @ Chat @ Bt
    Mu = -Gyh @ Ehat @ Chat @ Dt + Gu
    Md = Gyh @ Ehat @ Chat @ At
    My1 = Gyh @ Ehat @ Chat @ Bt @ L
    My = Gyh @ Ehat @ (np.eye(n) + Chat @ Dt @ L) + Gy
    PA = block_diag(*[ij[s.name][1] for s in subs])
    PB = block_diag(*[ij[s.name][2] for s in subs])
    Cb = block_diag(*[s.C for s in subs])
    Db = block_diag(*[s.D for s in subs])
    nx = PA.shape[0]
    Z = lambda k: np.concatenate([log["u"][k - 2], log["u"][k - 1], log["delta"][k - 1], res.Y[k - 1], res.Y[k],
                                  res.X[k]])
    # rows of phi_A,comb acting on Z^k = (u^{k-1}, u^k, delta^{k-1}, y^{k-1}, y^k, x^k)
    O = np.zeros
    row_u = np.hstack([Mu1, Mu, Md, My1, My, O((m, nx))])
    row_d = np.hstack([-Chat @ Bt, -Chat @ Dt, Chat @ At, Chat @ Bt @ L, Chat @ Dt @ L, O((n, nx))])
    row_x = PA @ np.hstack([O((nx, 2 * m + 3 * n)), np.eye(nx)]) + PB @ row_u
    row_y = Cb @ row_x + Db @ row_u
    Phi = np.vstack([np.hstack([O((m, m)), np.eye(m), O((m, n + 2 * n + nx))]), row_u, row_d,
                     np.hstack([O((n, 2 * m + n + n)), np.eye(n), O((n, nx))]), row_y, row_x])
    for k in (3, 7, 12):
        Z1 = Phi @ Z(k)
        np.testing.assert_allclose(Z1, Z(k + 1), rtol=1e-10, atol=1e-10 * np.max(np.abs(Z(k + 1))))
    assert set(log["phase"][1:]) == {"MBC"}


# ------------------------------------------------------------------------------------------ DMO regression (AT-20..)

def test_at20_zoh_unstable_at_2e5_200_1ms():
    eps, stable = eps_and_stable(two_mass_oscillator(ck=2e5, dk=200), 1e-3)
    assert not stable
    assert eps > 0.5           # [PROTO] 0.77; measured 0.769


@pytest.mark.parametrize("H, bound", [(1e-3, 0.02), (2e-3, 0.02), (3e-3, 0.02), (5e-3, 0.15), (6e-3, 0.15),
                                      (8e-3, 0.15)])
def test_at21_prestep_stable_and_accurate(H, bound):
    eps, stable = eps_and_stable(two_mass_oscillator(ck=2e5, dk=200), H, cosim.PreStep())
    assert stable
    assert eps <= bound       # [PROTO] 0.0072 0.0076 0.012 0.039 0.071 0.12; measured 0.0072 0.0076 0.0122 0.0388 0.0712 0.120


def test_at21_continuous_prestep_matches_prototype_figures():
    """The spec's prototype figures (App. B.1) within 5 % (same interpretation: exact IJs, δ ≡ 0, exact φ)."""
    system = two_mass_oscillator(ck=2e5, dk=200)
    for H, proto in ((1e-3, 0.00718), (2e-3, 0.00759), (5e-3, 0.0388)):
        eps, _ = eps_and_stable(system, H, cosim.PreStep())
        assert abs(eps / proto - 1) < 0.05


def test_at22_prestep_breaks_down_at_10ms():
    eps, stable = eps_and_stable(two_mass_oscillator(ck=2e5, dk=200), 10e-3, cosim.PreStep())
    assert (not stable) or eps > 0.3


def test_at23_zoh_nominal():
    eps, stable = eps_and_stable(two_mass_oscillator(), 1e-3, t_end=0.1)
    assert stable and eps < 0.2          # [PROTO] 0.097; measured 0.0966
    for rho in (1.0, 10.0, 100.0, 1000.0):
        ck, dk = math.sqrt(1e8 * rho), math.sqrt(1e8 / rho)
        for H in (4e-3, 6e-3):
            _, stable = eps_and_stable(two_mass_oscillator(ck=ck, dk=dk), H, t_end=0.2)
            assert not stable


def test_at24_prestep_beats_zoh_at_nominal():
    system = two_mass_oscillator()
    e_pre, _ = eps_and_stable(system, 1e-3, cosim.PreStep(), t_end=0.1)
    e_zoh, _ = eps_and_stable(system, 1e-3, None, t_end=0.1)
    assert e_pre < e_zoh / 5             # [PROTO] 0.0041 vs 0.097


def test_at27_zoh_aliasing_point_runs():
    """ZOH at (2e5, 200), 8 ms may look "stable" by the amplitude rule (aliasing): nothing is asserted about
    stability; it is inaccurate."""
    eps, _ = eps_and_stable(two_mass_oscillator(ck=2e5, dk=200), 8e-3)
    assert eps > 0.3


def test_at28_prestep_force_jumps_at_communication_points():
    """Fig. 3.65: with S2's feed-through the pre-step force jumps at the communication points (the input jumps to
    the coupled output there) while it is smooth within the steps."""
    H = 2e-3
    system = two_mass_oscillator(ck=2e5, dk=200)
    res = cosim.simulate(system, t_end=0.1, H=H, solver=EULER, coupling=cosim.PreStep(), output_interval=1e-4)
    F, t = res["S2.F"], res.t
    k = t / H
    at = np.where(np.isclose(k, np.round(k)))[0]
    at = at[(at > 0) & (at < t.size - 2)]
    inner = np.setdiff1d(np.arange(1, t.size - 2), at)
    jump = np.abs(2 * F[at + 1] - F[at + 2] - F[at])           # kink/jump measure at T^k
    smooth = np.abs(2 * F[inner + 1] - F[inner + 2] - F[inner])
    assert np.median(jump) > 5 * np.median(smooth)


@pytest.mark.xfail(reason="AT-28 phase sign: the least-squares time shift of F against the monolithic force at "
                          "ΔT = 2 ms measures τ = -6.9e-6 s (a slight lag, not the thesis's lead)", strict=True)
def test_at28_prestep_force_leads_monolithic():
    system = two_mass_oscillator(ck=2e5, dk=200)
    res = run(system, 2e-3, cosim.PreStep())
    ref = cosim.simulate_monolithic(system, t_end=0.2, H=1e-5)
    Fm = np.interp(res.t, ref.t, ref["S2.F"])
    dFm = np.interp(res.t, ref.t, np.gradient(ref["S2.F"], ref.t))
    tau = np.dot(res["S2.F"] - Fm, dFm) / np.dot(dFm, dFm)
    assert tau > 0


# ------------------------------------------------------------------------------------------- discrete RLS (AT-29/30)

def test_at29_discrete_rls_nonlinear_dmo():
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    cp = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.996, P0=1e4), timeLearning=0.22,
                       timeSwitchphase=0.005, thresholdMbc2sbcCoupling=3.54, thresholdMbcNoInputOpt=0.21,
                       useErrDiffEqu=True)
    res = cosim.simulate(system, t_end=1.0, H=1e-3, solver=EULER, coupling=cp)
    log = res.coupling_log
    assert cosim.metrics.is_stable(res)
    k_learn = int(np.sum(log["t"] < 0.22 - 1e-9))
    assert k_learn == 220
    assert set(log["phase"][:k_learn]) == {"SBC"} and set(log["reason"][:k_learn]) == {"learning"}
    assert np.all(log["phase"][k_learn:] == "MBC")           # [PROTO] 780 MBC steps, 0 modified
    ref = cosim.simulate_monolithic(system, t_end=1.0, t_eval=res.t)
    assert cosim.metrics.eps_mono(res, ref) < 0.05            # [PROTO] 0.0099; measured 0.0103
    a = log["params"]["S2"]["a"][-1, 0]
    assert 0.3 < a < 0.5                                      # [PROTO] 0.410; measured 0.426
    assert np.all(np.isfinite(log["eps_si"][1:]))


def test_at30_moesp_prestep():
    """AT-30: MOESP windows with Table 3.13 (W = 778, n = 1, 0.29 s learning, 0.004 s switch, th 4.22 / 1.72, no EDE)
    on the nonlinear DMO + F_ex: runs stably after learning (qualitative in the spec)."""
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    w = cosim.sysid.MOESPWindow(1, 1, window=778, order=1)
    cp = cosim.PreStep(variant="discrete", jacobians=w, timeLearning=0.29, timeSwitchphase=0.004,
                       thresholdMbc2sbcCoupling=4.22, thresholdMbcNoInputOpt=1.72, useErrDiffEqu=False)
    res = cosim.simulate(system, t_end=1.0, H=1e-3, solver=EULER, coupling=cp)
    log = res.coupling_log
    assert cosim.metrics.is_stable(res)
    k_learn = int(np.sum(log["t"] < 0.29 - 1e-9))
    assert k_learn == 290
    assert set(log["phase"][:k_learn]) == {"SBC"} and set(log["reason"][:k_learn]) == {"learning"}
    assert np.all(log["phase"][k_learn:] == "MBC")              # measured: 710 MBC steps
    ref = cosim.simulate_monolithic(system, t_end=1.0, t_eval=res.t)
    assert cosim.metrics.eps_mono(res, ref) < 0.05                # measured 0.031 (ZOH 0.0048, RLS AT-29 0.0103)
    for name in system.names:
        p = log["params"][name]
        assert np.all(p["order"][k_learn:] == 1)
        assert np.all(np.isfinite(p["Sy"])) and np.all(np.isfinite(p["Su_plus"]))
    assert 0.9 < log["params"]["S2"]["Sy"][-1, 0, 0] < 1.0       # measured 0.940
    assert np.all(np.isfinite(log["eps_si"][k_learn:]))


def test_moesp_prestep_ijs_are_the_window_fit():
    """The logged IJs of a step are the standard-form conversion (spec 2.2 [EXT]) of a MOESP window fed with the
    same aligned samples (u^k, y^k), k >= 1 (u^k: the input held over the step ending at T^k)."""
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    cp = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.MOESPWindow(1, 1, window=100, order=1),
                       timeLearning=0.1, timeSwitchphase=0.0)
    res = cosim.simulate(system, t_end=0.06, H=1e-3, solver=EULER, coupling=cp)   # identifies while learning
    log = res.coupling_log
    k = len(log["t"]) - 1                     # the last step's IJs were fitted on samples 1..k
    u_held = log["u"][:k]                     # u^{j+1} = the end value of the input built at T^j (HOLD)
    Y = res.Y[1:k + 1]
    s2 = system.names.index("S2")
    yo, uo = system.out_offset[s2], system.in_offset[s2]
    ny, nu = system.subsystems[s2].ny, system.subsystems[s2].nu
    w = cosim.sysid.MOESPWindow(nu, ny, window=100, order=1)
    w.push(u_held[:, uo:uo + nu], Y[:, yo:yo + ny])
    ij = cosim.sysid.ij_discrete(*(lambda f: (f.A, f.B, f.C, f.D))(w.fit()), form="standard")
    p = log["params"]["S2"]
    np.testing.assert_allclose(p["Sy"][k], ij.Sy, rtol=1e-8)
    np.testing.assert_allclose(p["Su_minus"][k], ij.Su_minus, rtol=1e-8)
    np.testing.assert_allclose(p["Su_plus"][k], ij.Su_plus, rtol=1e-8)


def test_moesp_prestep_bad_arguments():
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    run_ = lambda j: cosim.simulate(system, t_end=0.01, H=1e-3, solver=EULER,
                                    coupling=cosim.PreStep(variant="discrete", jacobians=j))
    with pytest.raises(ValueError, match="jacobians"):       # sizes of S1 (1 input, 2 outputs) do not match
        run_({"S1": cosim.sysid.MOESPWindow(1, 1, 50, order=1), "S2": cosim.sysid.MOESPWindow(2, 1, 50, order=1)})
    with pytest.raises(TypeError, match="jacobians"):
        cosim.PreStep(variant="discrete", jacobians={"S1": cosim.sysid.RLS(2, 1),
                                                     "S2": cosim.sysid.MOESPWindow(2, 1, 50, order=1)})
    with pytest.raises(ValueError, match="order"):           # S2 has one output: order 2 needs block_rows 3
        run_(cosim.sysid.MOESPWindow(1, 1, 50, order=2, block_rows=2))
    with pytest.raises(ValueError, match="window"):          # S1 (1 input, 2 outputs): 6 Hankel rows with r = 2
        run_(cosim.sysid.MOESPWindow(1, 1, 5, order=1, block_rows=2))
    with pytest.raises(ValueError, match="variant"):
        cosim.PreStep(variant="continuous", jacobians=cosim.sysid.MOESPWindow(1, 1, 50, order=1))


@pytest.mark.parametrize("n_a, n_b", [(1, 2), (2, 1), (2, 2)])
def test_rls_higher_orders_in_the_prestep(n_a, n_b):
    """genser §12.3 varies M = n_b, N = n_a in {1, 2}: beyond 1 the IJs come from the Gilbert realization of each
    unit's RLS model (spec 6.3/6.4). AT-29 settings otherwise. Measured ε_mono,global: (1, 2) 0.0096, (2, 1) 0.0099,
    (2, 2) 0.0097 (n_a = n_b = 1: 0.0103)."""
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    cp = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, n_a=n_a, n_b=n_b, lam=0.996, P0=1e4),
                       timeLearning=0.22, timeSwitchphase=0.005, thresholdMbc2sbcCoupling=3.54,
                       thresholdMbcNoInputOpt=0.21, useErrDiffEqu=True)
    res = cosim.simulate(system, t_end=1.0, H=1e-3, solver=EULER, coupling=cp)
    log = res.coupling_log
    assert cosim.metrics.is_stable(res)
    assert np.all(log["phase"][220:] == "MBC")
    ref = cosim.simulate_monolithic(system, t_end=1.0, t_eval=res.t)
    assert cosim.metrics.eps_mono(res, ref) < 0.05
    p = log["params"]["S2"]
    assert p["a"].shape == (len(log["t"]), 1, n_a) and p["b"].shape == (len(log["t"]), 1, 2, n_b)
    assert np.all(np.isfinite(p["a"])) and np.all(np.isfinite(log["eps_si"][1:]))
    assert log["params"]["S1"]["a"].shape == (len(log["t"]), 2, n_a)


def test_identification_failure_falls_back_and_is_logged():
    system = two_mass_oscillator(nonlinear=True, external_force=True)
    cp = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.996, P0=1e300), timeLearning=0.05,
                       timeSwitchphase=0.0)
    res = cosim.simulate(system, t_end=0.05, H=1e-3, solver=EULER, coupling=cp)
    log = res.coupling_log
    assert np.any(log["reason"] == "identification failed")
    assert np.all(log["phase"][log["reason"] == "identification failed"] == "SBC")
    assert np.all(np.isfinite(res.Y))


def test_modified_and_discrete_exact_variants_run_accurately():
    # (the discrete version with the exact discrete IJs of S2 (pinv of its 1x2 C) diverges at the nominal (1e5, 1e3)
    # for ΔT >= 0.5 ms; it is stable at (2e5, 200))
    system = two_mass_oscillator(ck=2e5, dk=200)
    for cp in (cosim.PreStep(variant="modified"), cosim.PreStep(variant="discrete"),
               cosim.PreStep(useErrDiffEqu=True), cosim.PreStep(useErrDiffEqu=True, optionErrDiffEqu="ex. euler",
                                                                stepsErrDiffEqu=10),
               cosim.PreStep(optionExtrapolation="ex. euler", stepsExtrapolation=1000),
               cosim.PreStep(inputSemantics="hold")):
        eps, stable = eps_and_stable(system, 1e-3, cp, t_end=0.1)
        assert stable and eps < 0.1, cp


def test_discrete_exact_ijs_nominal_divergence_is_the_methods():
    """Item 4 of the follow-up: the discrete pre-step with the exact discrete IJs of the thesis form (2.18-2.20,
    C^+ = pinv of S2's 1x2 output matrix, which drops one of S2's two states, spec 2.1) diverges at the nominal
    (1e5, 1e3) for ΔT >= 0.5 ms. The exact linear map of the algorithm (φ_A,comb of spec 13.3, AT-17) has the same
    spectral radius > 1, so the divergence is the method's with this surrogate, not a coding error.
    Measured ρ(φ_A,comb): nominal 1.027 (0.2 ms), 4.04 (0.5 ms), 8.22 (1 ms); (2e5, 200) 1.000 at 1 ms, 1.37 at 2 ms."""
    from cosim.stability_theory import prestep_closed_loop
    nominal = two_mass_oscillator()
    rho = prestep_closed_loop(nominal, 5e-4).rho
    assert rho > 3.5                                               # measured 4.04
    with pytest.raises(cosim.DivergenceError):
        cosim.simulate(nominal, t_end=0.05, H=5e-4, solver=EULER, coupling=cosim.PreStep(variant="discrete"))
    stiff = two_mass_oscillator(ck=2e5, dk=200)
    assert prestep_closed_loop(stiff, 1e-3).rho < 1 + 1e-6
    assert prestep_closed_loop(stiff, 2e-3).rho > 1.3               # measured 1.37


def test_euler_extrapolation_converges_to_exact():
    system = two_mass_oscillator(ck=2e5, dk=200)
    ex = run(system, 2e-3, cosim.PreStep(), t_end=0.05).Y
    e10 = run(system, 2e-3, cosim.PreStep(optionExtrapolation="ex. euler", stepsExtrapolation=10), t_end=0.05).Y
    e1000 = run(system, 2e-3, cosim.PreStep(optionExtrapolation="ex. euler", stepsExtrapolation=1000),
                t_end=0.05).Y
    assert np.max(np.abs(e1000 - ex)) < 0.1 * np.max(np.abs(e10 - ex))


# ----------------------------------------------------------------------------------------------- baselines (§9)

def test_foh_equals_lagrange_k1():
    system = two_mass_oscillator()
    a = cosim.simulate(system, t_end=0.05, H=1e-3, solver=EULER, coupling=cosim.FOH())
    b = cosim.simulate(system, t_end=0.05, H=1e-3, solver=EULER, approximation=cosim.Lagrange(1))
    np.testing.assert_array_equal(a.Y, b.Y)
    q = cosim.simulate(system, t_end=0.05, H=1e-3, solver=EULER, coupling=cosim.Quadratic())
    c = cosim.simulate(system, t_end=0.05, H=1e-3, solver=EULER, approximation=cosim.Lagrange(2))
    np.testing.assert_array_equal(q.Y, c.Y)


def test_foh_is_linear_extrapolation_on_uniform_grid():
    """u^{k+1} at the end of a step equals L(2 y^k − y^{k−1}) + r (genser §9), checked on the inputs a
    unidirectional system receives (its consumer integrates u exactly)."""
    src = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[0.0]], x0=[1.0], name="A")
    # integrator: x' = u, y = x: x(T^{k+1}) - x(T^k) = ∫ u = H (c0 + c1/2)
    snk = cosim.LTI([[0.0]], [[1.0]], [[1.0]], [[0.0]], x0=[0.0], name="B")
    system = cosim.CoupledSystem([src, snk], [cosim.connect("A.y[0]", "B.u[0]")], inputs_default={"A.u[0]": 0.0})
    H = 0.1
    res = cosim.simulate(system, t_end=1.0, H=H, solver=cosim.Exact(), coupling=cosim.FOH())
    ya, xb = res["A.y[0]"], res["B.x[0]"]
    for k in range(1, 9):
        c0, c1 = ya[k], ya[k] - ya[k - 1]
        assert xb[k + 1] - xb[k] == pytest.approx(H * (c0 + c1 / 2), rel=1e-12)


def test_nepce_k0_is_zoh():
    system = two_mass_oscillator()
    a = run(system, 1e-3, cosim.NEPCE(K=0.0), t_end=0.05)
    b = run(system, 1e-3, None, t_end=0.05)
    np.testing.assert_array_equal(a.Y, b.Y)


@pytest.mark.parametrize("ck, dk, H, eps_proto", [(1e5, 1e3, 3e-3, 0.105), (2e5, 200, 0.5e-3, 0.091),
                                                  (2e5, 200, 1e-3, 0.22)])
def test_nepce_with_intermediate_values_matches_the_prototype(ck, dk, H, eps_proto):
    """genser2020.md App. B.2 (K = 1, no filter, integral from intermediate values): stable with these ε_mono;
    the units' micro-step traces supply the intermediate values of the coupled outputs."""
    system = two_mass_oscillator(ck=ck, dk=dk)
    e, stable = eps_and_stable(system, H, cosim.NEPCE())
    assert stable and e == pytest.approx(eps_proto, rel=0.05)
    assert run(system, H, cosim.NEPCE(), t_end=0.02).coupling_log["traced_steps"] > 0


@pytest.mark.parametrize("ck, dk, H_nepce_unstable, H_zoh_unstable", [(1e5, 1e3, 4e-3, 3e-3)])
def test_nepce_enlarges_zoh_at_nominal(ck, dk, H_nepce_unstable, H_zoh_unstable):
    """App. B.2: at (1e5, 1e3) ZOH is stable up to 2 ms (ε 0.286) and NEPCE up to 3 ms; both fail one step later."""
    system = two_mass_oscillator(ck=ck, dk=dk)
    e_z, s_z = eps_and_stable(system, 2e-3)
    assert s_z and e_z == pytest.approx(0.286, rel=0.05)
    assert not eps_and_stable(system, H_zoh_unstable)[1]
    assert eps_and_stable(system, H_zoh_unstable, cosim.NEPCE())[1]
    assert not eps_and_stable(system, H_nepce_unstable, cosim.NEPCE())[1]
    assert not eps_and_stable(two_mass_oscillator(ck=2e5, dk=200), 2e-3, cosim.NEPCE())[1]


def test_nepce_correction_is_integral_of_extrapolation_error():
    """Unidirectional source -> integrator: the consumer's input on step k+1 is ZOH + K E_k/H with
    E_k = ∫ (y_c − u) dt over step k, the trapezoidal rule of y_c at the macro points (no unit trace)."""
    src = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[0.0]], x0=[1.0], name="A")
    snk = cosim.LTI([[0.0]], [[1.0]], [[1.0]], [[0.0]], x0=[0.0], name="B")
    system = cosim.CoupledSystem([src, snk], [cosim.connect("A.y[0]", "B.u[0]")], inputs_default={"A.u[0]": 0.0})
    H = 0.1
    res = cosim.simulate(system, t_end=1.0, H=H, solver=cosim.Exact(), coupling=cosim.NEPCE(K=1.0))
    ya, xb = res["A.y[0]"], res["B.x[0]"]
    corr, int_u = 0.0, None
    for k in range(10):
        u = ya[k] + corr
        assert xb[k + 1] - xb[k] == pytest.approx(H * u, rel=1e-12, abs=1e-15)
        E = 0.5 * H * (ya[k] + ya[k + 1]) - H * u
        corr = E / H


# ------------------------------------------------------------------------------------------------------ bad input

def test_thesis_names_are_aliases_of_the_snake_case_parameters():
    """genser2020's reference names (cosim.coupling.THESIS_NAMES) give the same options as cosim's names, without a
    warning; both at once is an error; the attributes answer to both names."""
    from cosim.coupling import THESIS_NAMES
    values = dict(useErrDiffEqu=True, optionErrDiffEqu="ex. euler", stepsErrDiffEqu=3, optionExtrapolation="ex. euler",
                  stepsExtrapolation=2, stepsDiscreteSystemMatrices=10, timeLearning=0.1, timeSwitchphase=0.01,
                  thresholdMbc2sbcCoupling=2.0, thresholdMbcNoInputOpt=0.5, inputSemantics="hold", sbcMethod="foh")
    assert set(values) == set(THESIS_NAMES)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        old = cosim.PreStep(variant="discrete", **values)
    new = cosim.PreStep(variant="discrete", **{THESIS_NAMES[k]: v for k, v in values.items()})
    a, b = (p._options(two_mass_oscillator(), 1e-3, 0.01) for p in (old, new))
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    for k in values:
        assert getattr(old, k) == getattr(new, THESIS_NAMES[k]) == getattr(new, k)
    with pytest.raises(TypeError, match="learning_time"):
        cosim.PreStep(learning_time=0.1, timeLearning=0.1)
    with pytest.raises(TypeError, match="timeLearnin"):
        cosim.PreStep(timeLearnin=0.1)
    assert np.array_equal(prestep_phi(-np.eye(1), np.eye(1), np.eye(1), 1e-3, 7)[0],
                          prestep_phi(-np.eye(1), np.eye(1), np.eye(1), 1e-3, stepsDiscreteSystemMatrices=7)[0])


def test_bad_input_names_the_argument():
    with pytest.raises(ValueError, match="variant"):
        cosim.PreStep(variant="implicit")
    with pytest.raises(ValueError, match="thresholdMbcNoInputOpt"):
        cosim.PreStep(thresholdMbc2sbcCoupling=0.1, thresholdMbcNoInputOpt=0.5)
    with pytest.raises(ValueError, match="timeLearning"):
        cosim.PreStep(timeLearning=-0.1)
    with pytest.raises(ValueError, match="jacobians"):
        cosim.PreStep(jacobians="identified")
    with pytest.raises(ValueError, match="jacobians"):
        cosim.simulate(two_mass_oscillator(nonlinear=True), t_end=0.01, H=1e-3, solver=EULER,
                       coupling=cosim.PreStep())
    with pytest.raises(ValueError, match="jacobians"):
        cosim.simulate(two_mass_oscillator(), t_end=0.01, H=1e-3, solver=EULER,
                       coupling=cosim.PreStep(variant="discrete", jacobians={"S1": cosim.sysid.RLS(1, 1),
                                                                             "S2": cosim.sysid.RLS(1, 2)}))
    with pytest.raises(ValueError, match="jacobians"):
        cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, n_a=2, n_b=0))   # n_a, n_b > 1 are supported; n_b = 0 is not
    with pytest.raises(ValueError, match="variant"):
        cosim.PreStep(variant="continuous", jacobians=cosim.sysid.RLS(1, 1))
    with pytest.raises(ValueError, match="approximation"):
        cosim.simulate(two_mass_oscillator(), t_end=0.01, H=1e-3, solver=EULER, coupling=cosim.PreStep(),
                       approximation=cosim.ZOH())
    with pytest.raises(ValueError, match="scheme"):
        cosim.simulate(two_mass_oscillator(), t_end=0.01, H=1e-3, solver=EULER, coupling=cosim.PreStep(),
                       scheme="gauss-seidel")
    with pytest.raises(TypeError, match="coupling"):
        cosim.simulate(two_mass_oscillator(), t_end=0.01, H=1e-3, solver=EULER, coupling="prestep")
    with pytest.raises(ValueError, match="inputSemantics"):
        cosim.PreStep(variant="discrete", inputSemantics="ramp")
    with pytest.raises(TypeError, match="useErrDiffEqu"):
        cosim.PreStep(useErrDiffEqu="yes")
    with pytest.raises(ValueError, match="K"):
        cosim.NEPCE(K=math.nan)
    with pytest.raises(ValueError, match="filter"):
        cosim.NEPCE(filter=-1.0)
    with pytest.raises(ValueError, match="target"):
        input_optimization(np.ones((1, 2)), [1.0], [1.0])
    with pytest.raises(ValueError, match="dSdy"):
        prestep_phi(np.ones((2, 3)), np.ones((2, 1)), np.ones((2, 1)), 1e-3)


def test_prestep_run_is_deterministic_and_log_complete():
    system = two_mass_oscillator(ck=2e5, dk=200)
    a = run(system, 1e-3, cosim.PreStep(), t_end=0.02)
    b = run(system, 1e-3, cosim.PreStep(), t_end=0.02)
    np.testing.assert_array_equal(a.Y, b.Y)
    log = a.coupling_log
    assert len(log["phase"]) == 20 and set(log["phase"]) == {"MBC"}
    assert log["u"].shape == (20, 3) and np.all(log["rank"] == 1)
