"""Oscillator chains with the adaptive controller and the iterative schemes (kraft2021 §21 T16 implicit and waveform
rows, T21 and T24 scaled down; issue 11). The full-size runs (T16 over t_sim = 0.25 s, T18, T24 over more seeds)
are in benchmarks/chains.py with their figures in benchmarks/README.md."""

import numpy as np
import pytest

import cosim
from cosim.models import oscillator_chain


def _diverges(system, scheme, k, H, T):
    """Fixed-H run of the Table 5.1 chain as in the thesis' §5.1 (CVODE in place of IDA, rtol = atol = 1e-8)."""
    try:
        cosim.simulate(system, t_end=T, H=H, approximation=cosim.Lagrange(k=k), scheme=scheme,
                       solver=cosim.CVODE(rtol=1e-8, atol=1e-8), output_interval=T / 10)
    except (cosim.DivergenceError, cosim.SolverError):
        return True
    return False


# §18.2: fixed-H implicit/waveform runs use the convergence test with rtol = 1e-10, at most 10 corrector steps and
# go on when a step has not converged
IMPLICIT = cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=10, on_failure="continue")
WAVEFORM = cosim.WaveformRelaxation(omega=0.7, tol=1e-10, max_iter=10, on_failure="continue")   # Kraft's ω = 0.3


@pytest.mark.parametrize("scheme,stable,unstable", [(IMPLICIT, 1.25e-4, 5e-4), (WAVEFORM, 5e-5, 1e-4)],
                         ids=["implicit", "waveform"])
def test_T16_critical_macro_step_implicit_and_waveform(scheme, stable, unstable):
    """kraft2021 §21 T16, κ = 2 on the nonlinear Table 5.1 chain: the thesis' limits are H = 2.5e-4 s (implicit) and
    5.0e-5 s (waveform relaxation, ω = 0.3); critical H within a factor 2. Measured here: implicit stable at
    1.25e-4 s and unstable from 2.5e-4 s (CVODE fails at t ≈ 0.005 s), so its critical H lies in [1.25e-4, 2.5e-4):
    within a factor 2 below the thesis. Waveform: stable at 5e-5, unstable at 1e-4 (fails at t ≈ 0.014 s): as the
    thesis. Reduced to t = 0.02 s (the full t_sim = 0.25 s runs are in benchmarks/chains.py)."""
    s = oscillator_chain(preset="table5.1")
    assert not _diverges(s, scheme, 2, stable, 0.02)
    assert _diverges(s, scheme, 2, unstable, 0.02)


def _t21_run(estimator, n_bodies=50, T=1.2e-4):
    rtol = 1e-6   # §18.11: controller atol^pos = 1e-3 rtol, atol^vel = rtol, atol^u = 1e4 rtol
    s = oscillator_chain(preset="table5.9", n_bodies=n_bodies, n_subsystems=10, seed=1)
    sc = cosim.StepControl(estimator=estimator, rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol},
                           k_max=4 if estimator == "exLE" else 5)
    return cosim.simulate(s, t_end=T, H=1e-8, approximation=cosim.Lagrange(k=0), step_control=sc,
                          solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"), last_step="shorten",
                          output_interval=T / 10)


def test_T21_exMD_and_exLE_choose_the_same_mean_step_on_the_impulse_chain():
    """kraft2021 §21 T21 scaled down (Table 5.9 parameters, n_K = 50, n_s = 10, t = 1.2e-4 s: the start and the
    first impulse at t_I = 1e-4 s on every coupling body): exMD ≈ exLE, mean H within 5 % (thesis: both 1.10e-6 s
    over 1 s). Both controllers shrink H at the impulse (the mean H is far below the 1e-6 of the quiet phases)."""
    a, b = _t21_run("exMD"), _t21_run("exLE")
    Ha, Hb = a.stats["mean_H"], b.stats["mean_H"]
    assert abs(Ha / Hb - 1.0) < 0.05, (Ha, Hb)
    for r in (a, b):
        H = np.asarray(r.H)
        assert H.min() < 0.1 * H.max()
        assert r.stats["rejected_steps"] < 0.05 * r.stats["macro_steps"]


def test_T21_implicit_mean_corrector_iterations():
    """kraft2021 §21 T21: the implicit scheme (κ = 2, fixed H = 1e-7 s as in the thesis' table of §18.11, fd
    Jacobian) needs n̄_cor ≈ 2-3 corrector iterations per macro step, also through the first impulse."""
    s = oscillator_chain(preset="table5.9", n_bodies=50, n_subsystems=10, seed=1)
    T = 1.1e-4
    r = cosim.simulate(s, t_end=T, H=1e-7, approximation=cosim.Lagrange(k=2),
                       solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"),
                       scheme=cosim.Implicit(jacobian="fd", tol=1e-6, max_iter=10, on_failure="continue"),
                       output_interval=T / 10)
    n_cor = r.stats["iterations"] / r.stats["macro_steps"]
    assert 2.0 <= n_cor <= 3.0, n_cor


@pytest.mark.parametrize("seed", [1, 2])
def test_T24_repartitioning_reduces_exCV_macro_steps(seed):
    """kraft2021 §21 T24 (random model, so per seed): the Table 5.5 chain (n_K = 290, coupling-body mass ratio 100)
    against its repartitioned form (ratio 1) with exCV, rtol = 1e-5, atol^u = 1e4 rtol: the macro steps drop by a
    factor in [4, 20] (thesis 8.8 over 1 s). Scaled down to t = 2e-3 s, which contains the first peaks of the
    modified-sine forces (sin^95 with Ω_S ∈ [750, 1000] 1/s), where the step counts are decided; before them both
    forms take about the same steps. More seeds and the counts: benchmarks/chains.py."""
    T, rtol = 2e-3, 1e-5
    steps = []
    for rep in (False, True):
        s = oscillator_chain(preset="table5.5", repartitioned=rep, seed=seed)
        r = cosim.simulate(s, t_end=T, H=1e-7, approximation=cosim.Lagrange(k=0),
                           solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"),
                           step_control=cosim.StepControl(estimator="exCV", rtol=rtol, atol={"u": 1e4 * rtol}),
                           output_interval=T / 10, last_step="shorten")
        steps.append(r.stats["macro_steps"])
    assert 4.0 <= steps[0] / steps[1] <= 20.0, steps


def test_T24_repartitioning_reduces_imCV_macro_steps():
    """T24's imCV row (implicit, fd, convergence on y): the thesis' 708 876 -> 319 041 macro steps over 1 s, a
    reduction of 2.2, accepted in [1.5, 4]. Seed 1, t = 2e-3 s: 1114 -> 484 (2.30; seed 2: 2.79)."""
    T, rtol = 2e-3, 1e-5
    steps = []
    for rep in (False, True):
        s = oscillator_chain(preset="table5.5", repartitioned=rep, seed=1)
        r = cosim.simulate(s, t_end=T, H=1e-7, approximation=cosim.Lagrange(k=0),
                           solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"),
                           scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
                           step_control=cosim.StepControl(estimator="imCV", rtol=rtol, atol={"u": 1e4 * rtol}),
                           output_interval=T / 10, last_step="shorten")
        steps.append(r.stats["macro_steps"])
    assert 1.5 <= steps[0] / steps[1] <= 4.0, steps


def _t21_imMD(t_end, rtol=1e-4, n_bodies=50):
    s = oscillator_chain(preset="table5.9", n_bodies=n_bodies, n_subsystems=10, seed=1)
    sc = cosim.StepControl(estimator="imMD", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol},
                           k_max=5)
    r = cosim.simulate(s, t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=0), step_control=sc,
                       scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
                       solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"), last_step="shorten")
    return s, r


def test_T21_imMD_estimate_tracks_the_true_local_error_on_the_impulse_ramp():
    """Why T21's κ does not fall to 0 (issue 31 part 5): on the rising flank of the first impulse (steps ending in
    [9.8e-5, 1e-4] s) the imMD estimate matches the true local error (monolithic CVODE at rtol 1e-12 from the
    co-simulation state at T_N): estimate/true 0.16-6.7, median 1.3; the true errors (WRMS of the coupling bodies'
    states, rtol 1e-4) have median 0.08, near the controller's target 1/Γ = 0.17. So H ≈ 1e-7 s on the ramp is what
    the tolerance needs, not an over-estimate; with it the coupling forces' SDN(2)/SDN(1) stays below 0.2 and
    Listing 3.2 keeps κ = 3 (κ = 0 would need SDN(1) <= SDN(2)/2, i.e. steps ~10x longer, over the whole ramp)."""
    s, r = _t21_imMD(1.0e-4)
    p = s.params
    imp = p["forces"]["impulse"]                    # rows: body (1-based), ΔF_I, t_I, Δt_I, δ_I
    rtol = 1e-4
    mon = {g: np.array([2 * (int(n.split(".")[1][1:]) - 1) + (g == "vel") for n in s.monitor[g]]) for g in ("pos", "vel")}
    atol = {"pos": 1e-3 * rtol, "vel": rtol}
    T = np.concatenate([[0.0], np.cumsum(r.H)])
    ratio, true = [], []
    for n in np.flatnonzero(T[1:] >= 9.8e-5):
        x0 = r.X[n]
        forces = [dict(kind="impulse", bodies=[int(b)], amplitude=a, times=[t - T[n]], duration=d, width=w)
                  for b, a, t, d, w in imp]
        sn = oscillator_chain(preset="table5.9", n_bodies=50, n_subsystems=10, seed=1, x0=x0[0:100:2],
                              v0=x0[1:100:2], forces=forces)
        z = cosim.simulate_monolithic(sn, r.H[n], t_eval=[0.0, r.H[n]], solver=cosim.CVODE(rtol=1e-12, atol=1e-16)).X[-1]
        x1 = r.X[n + 1]
        e = max(np.sqrt(np.mean(((x1[i] - z[i]) / (atol[g] + rtol * np.abs(x1[i]))) ** 2)) for g, i in mon.items())
        true.append(e)
        ratio.append(r.error_estimate[n] / e)
    assert len(ratio) >= 10
    assert 0.5 <= np.median(ratio) <= 2.0, ratio
    assert 0.1 <= min(ratio) and max(ratio) <= 10.0, ratio
    assert 0.02 <= np.median(true) <= 1.0, true


@pytest.mark.xfail(strict=True, reason="kraft2021 §21 T21's imMD row, kappa -> 0 during the impulses, does not reproduce: "
                   "on the Table 5.9 chain (n_K = 50) the controller shrinks H to ~1e-7 s on the impulse ramp and keeps "
                   "kappa = 3 (9 steps, kappa counts [0, 0, 0, 9, 0, 0]); kappa falls to 1-2 after the ramp and over the "
                   "1-ms impulse (t to 1.2e-3 s: no kappa = 0 step). Not an estimator error: on the ramp estimate/true "
                   "local error has median 1.3 (test above), and with H ~ 1e-7 s SDN(2)/SDN(1) < 0.2, so Listing 3.2 "
                   "keeps kappa; kappa = 0 needs steps of ~delta_I = 1e-6 s across the ramp, which the error test at "
                   "rtol 1e-4 does not pass. Same with CVODE rtol 1e-10, n_K = 1000 (benchmarks/chains.py --only 10), "
                   "a chain at rest (kappa = 0 before the impulse, 3 on the ramp) or slowly vibrating (H 6.8e-6 s "
                   "before, 2 rejections, kappa = 3 on the ramp)")
def test_T21_imMD_order_falls_to_zero_during_the_impulse():
    """T21 (imMD, rtol 1e-4): κ ≥ 2 outside the impulses (holds: tested below the ramp) and κ → 0 on the ramp of the
    first impulse (t_I = 1e-4 s, δ_I = 1e-6 s)."""
    rtol, t_end = 1e-4, 1.2e-4
    s = cosim.models.oscillator_chain(preset="table5.9", n_bodies=50, n_subsystems=10, seed=1)
    sc = cosim.StepControl(estimator="imMD", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol},
                           k_max=5)
    r = cosim.simulate(s, t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=0), step_control=sc,
                       scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
                       solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"), last_step="shorten",
                       output_interval=t_end / 10)
    H, k = np.asarray(r.H), np.asarray(r.k, dtype=int)
    te = np.cumsum(H)
    before = (te > 2e-5) & (te <= 1e-4)
    ramp = (te > 1e-4) & (te <= 1.01e-4 * (1 + 1e-12))
    assert np.mean(k[before] >= 2) >= 0.95           # κ ≥ 2 outside the impulse (after the start-up)
    assert ramp.any() and k[ramp].min() == 0          # κ → 0 on the ramp


def _t18_window(estimator, sub_rtol, n_bodies=300, t0=1e-4, T=2e-6):
    """The Table 5.4 chain scaled to n_K = 300, n_s = 30 (10 bodies per unit, as in T18), restarted from its
    monolithic state at t0 (past the first pass of the release front), over a window of T; the controller of T18
    (rtol = 1e-6, atol^pos = 1e-9, atol^vel = 1e-6), the units' CVODE at rtol = sub_rtol, atol = 1e-3 sub_rtol."""
    base = oscillator_chain(preset="table5.4", n_bodies=n_bodies, n_subsystems=n_bodies // 10)
    z = cosim.simulate_monolithic(base, t0, t_eval=[0.0, t0],
                                  solver=cosim.CVODE(rtol=1e-10, atol=1e-14, linear_solver="band")).X[-1]
    s = oscillator_chain(preset="table5.4", n_bodies=n_bodies, n_subsystems=n_bodies // 10, x0=z[0:2 * n_bodies:2],
                         v0=z[1:2 * n_bodies:2])
    rtol = 1e-6
    kw = dict(scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y")) if estimator == "imMD" else {}
    return cosim.simulate(s, t_end=T, H=1e-9, approximation=cosim.Lagrange(k=0), last_step="shorten",
                          step_control=cosim.StepControl(estimator=estimator, rtol=rtol,
                                                         atol={"pos": 1e-9, "vel": 1e-6, "u": 1e4 * rtol}),
                          solver=cosim.CVODE(rtol=sub_rtol, atol=1e-3 * sub_rtol, linear_solver="band"),
                          output_interval=T, **kw)


def test_T18_imMD_steps_follow_the_subsystem_solver_error():
    """Why T18's imMD takes 5x the thesis' macro steps (issue 31 part 5). With the units' CVODE at the thesis'
    subsystem tolerance (rtol 1e-6 = the controller's rtol; CVODE restarts at every macro point), the outputs y of two
    corrector integrations differ by CVODE's own error, which is of the size of the corrector's convergence test
    (tol = 1e-6 on y): its second iterate measures that error, not the Newton update, the rate R comes out >= 0.9 and
    the step fails (corConvFail, r = 0.25). Measured here: 15 of 159 imMD steps are such retries (full size, t0 =
    3e-4: 226 of 932, H ~ 2.5e-9 s); all rejections but one are. With CVODE at rtol 1e-10 none fails, imMD takes 39
    steps, exMD 252, a ratio of 6.5 over this 2 µs window (the thesis' ≈ 15 over t_sim lies in [5, 40]; the full
    size gives 11.7 at t0 = 1e-4, benchmarks/README.md)."""
    loose, tight = _t18_window("imMD", 1e-6), _t18_window("imMD", 1e-10)
    assert loose.stats["corrector_failures"] >= 5
    assert loose.stats["rejected_steps"] - loose.stats["corrector_failures"] <= 1
    assert tight.stats["corrector_failures"] == 0
    assert tight.stats["macro_steps"] < 0.5 * loose.stats["macro_steps"]
    ratio = _t18_window("exMD", 1e-10).stats["macro_steps"] / tight.stats["macro_steps"]
    assert 5.0 <= ratio <= 40.0, ratio
