"""CVODE(restart="continuous") (issue 31 part 4): CVODE keeps its BDF history across a macro point where an input
that may jump (Lagrange, ZOH) is continuous there to the solver's tolerance, and under step control (kraft2021
§12.1: the thesis keeps the solver workspace instead of re-initialising). Checked: the same accuracy as the
re-initialising default, far fewer right-hand sides and restarts on the Sec. 4.5 chain at small H (T25's regime
h_mic = H) and under exCV step control, deterministic results, argument validation; warm restarts
(warm_start=True) and restart="never" (the history across every jump, the thesis' IDA)."""
import numpy as np
import pytest

import cosim
from cosim import models
from cosim.models import oscillator_chain


def _cvode(restart, rtol=1e-6, atol=1e-9, **kw):
    return cosim.CVODE(rtol=rtol, atol=atol, linear_solver="band", restart=restart, **kw)


def _counts(r):
    st = r.stats["subsystems"]
    return sum(v["rhs_calls"] for v in st.values()), sum(v["restarts"] for v in st.values())


def _max_err(r, ref):
    return np.max(np.abs(r.X[-1] - ref.X[-1])) / np.max(np.abs(ref.X[-1]))


@pytest.fixture(scope="module")
def chain():
    return oscillator_chain(preset="table4.2", n_bodies=200)


def test_lagrange_input_at_small_H_keeps_the_history(chain):
    """T25's regime h_mic = H with the thesis' Lagrange κ = 1 (Sec. 4.5 chain, n_K = 200, H = 2e-8 s): the input
    jumps by the extrapolation error only, below CVODE's tolerance, so CVODE continues; the re-initialising
    default restarts 2000 times and takes ≈ 7.6 micro steps per macro step (measured 1.6 with history), 4.4x the
    right-hand sides, and is less accurate (restarts at order 1 add their error at every macro point)."""
    H, n = 2e-8, 200
    ref = cosim.simulate_monolithic(chain, n * H, solver=cosim.CVODE(rtol=1e-11, atol=1e-14, linear_solver="band"))
    res = {rs: cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1), solver=_cvode(rs))
           for rs in ("auto", "continuous")}
    (rhs_a, rst_a), (rhs_c, rst_c) = _counts(res["auto"]), _counts(res["continuous"])
    assert rst_a == 10 * n                       # every unit at every macro point
    assert rst_c < 0.1 * rst_a, (rst_c, rst_a)
    assert rhs_c < 0.5 * rhs_a, (rhs_c, rhs_a)
    st = res["continuous"].stats["subsystems"]
    micro = np.mean([H / st[f"S{L}"]["mean_micro_step"] for L in range(1, 11)])
    assert micro < 2.5, micro                    # h_mic near H: the regime where the thesis' idle time is smallest
    assert _max_err(res["continuous"], ref) <= _max_err(res["auto"], ref)


def test_large_jumps_still_restart(chain):
    """At H = 1e-6 s the Lagrange κ = 1 jump moves the state over CVODE's next micro step by 20-1800 times its
    tolerance: every macro point restarts, and the result is the re-initialising one bit for bit (the check only
    adds its two right-hand sides per unit and macro point)."""
    H, n = 1e-6, 20
    a, c = (cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1), solver=_cvode(rs))
            for rs in ("auto", "continuous"))
    (rhs_a, rst_a), (rhs_c, rst_c) = _counts(a), _counts(c)
    assert rst_c == rst_a == 10 * n
    assert np.array_equal(a.X, c.X)
    assert rhs_c == rhs_a + 2 * 10 * (n - 1)


def test_step_control_continues_after_accepted_steps(chain):
    """Under step control (exCV, no comparative integrations) the default re-initialises at every macro point so
    that a repeated step starts like the first attempt; with restart='continuous' only a rolled-back step restarts
    (from the saved t, x). Measured: 2510 against 20493 right-hand sides, error to the monolithic reference
    9.5e-6 against 8.9e-5."""
    T, rtol = 4e-6, 1e-5
    ref = cosim.simulate_monolithic(chain, T, solver=cosim.CVODE(rtol=1e-11, atol=1e-14, linear_solver="band"))
    sc = cosim.StepControl(estimator="exCV", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol})
    res = {rs: cosim.simulate(chain, T, 1e-9, approximation=cosim.Lagrange(k=1), step_control=sc,
                              last_step="shorten", solver=_cvode(rs)) for rs in ("auto", "continuous")}
    (rhs_a, rst_a), (rhs_c, rst_c) = _counts(res["auto"]), _counts(res["continuous"])
    assert rst_a == 10 * res["auto"].stats["macro_steps"]   # a rollback restores the counters too
    assert rst_c <= 10 * (1 + res["continuous"].stats["rejected_steps"]), rst_c
    assert rhs_c < 0.5 * rhs_a, (rhs_c, rhs_a)
    assert _max_err(res["continuous"], ref) <= _max_err(res["auto"], ref)


def test_rejected_steps_restart_and_runs_are_deterministic():
    """A tight exCV tolerance on the two-mass oscillator rejects steps: a repeated step restarts CVODE from the saved
    state, the accepted ones continue where the Lagrange κ = 2 input agrees (measured 416 restarts against 892 of
    the default, 26760 against 41072 right-hand sides), and two runs are identical bit for bit."""
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    sc = cosim.StepControl(estimator="exCV", rtol=1e-6, H_max=1e-2)

    def run(restart):
        return cosim.simulate(s, 0.05, 1e-3, approximation=cosim.Lagrange(k=2), step_control=sc,
                              solver=cosim.CVODE(rtol=1e-10, atol=1e-12, restart=restart))

    r1, r2, ra = run("continuous"), run("continuous"), run("auto")
    assert r1.stats["rejected_steps"] > 0
    (rhs_c, rst_c), (rhs_a, rst_a) = _counts(r1), _counts(ra)
    assert rst_c < 0.6 * rst_a and rhs_c < 0.8 * rhs_a, (rst_c, rst_a, rhs_c, rhs_a)
    assert np.array_equal(r1.X, r2.X) and np.array_equal(r1.t, r2.t)


def test_same_accuracy_as_reinitialising_against_exact_integration():
    """Gauss-Seidel, Lagrange κ = 1 and 2 on the two-mass oscillator (H = 1e-3): the interpolated inputs of the
    second unit agree at about half of the macro points, and the co-simulation with kept history is as close to
    the same co-simulation with exact integration as the re-initialising one (solver error 5.3e-6 both)."""
    tm = models.two_mass_oscillator()
    for ap in (cosim.Lagrange(1), cosim.Lagrange(2)):
        ex = cosim.simulate(tm, 0.05, 1e-3, approximation=ap, scheme="gauss-seidel", solver=cosim.Exact())
        err, rst = {}, {}
        for rs in ("auto", "continuous"):
            r = cosim.simulate(tm, 0.05, 1e-3, approximation=ap, scheme="gauss-seidel",
                               solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart=rs))
            err[rs], rst[rs] = np.max(np.abs(r.X - ex.X)), _counts(r)[1]
        assert rst["continuous"] < 0.7 * rst["auto"], rst
        scale = np.max(np.abs(ex.X))
        assert err["continuous"] <= 1e-6 * scale and err["auto"] <= 1e-6 * scale, err
        assert err["continuous"] <= 1.05 * err["auto"], err


def test_restart_argument_is_checked():
    with pytest.raises(ValueError, match="restart"):
        cosim.CVODE(restart="sometimes")
    with pytest.raises(TypeError, match="warm_start"):
        cosim.CVODE(warm_start=1)
    assert "restart='continuous'" in repr(cosim.CVODE(restart="continuous"))
    assert "warm_start=True" in repr(cosim.CVODE(warm_start=True))
    assert cosim.CVODE(restart="continuous").spec()["continue_agreeing"]
    assert not cosim.CVODE().spec()["continue_agreeing"]
    never = cosim.CVODE(restart="never").spec()
    assert never["continue_agreeing"] and never["continue_jumps"]
    assert not cosim.CVODE(restart="continuous").spec()["continue_jumps"]
    assert not cosim.CVODE().spec()["warm_start"] and cosim.CVODE(warm_start=True).spec()["warm_start"]


def test_comparative_estimators_restart_like_their_side_runs(chain):
    """exMD and exLE integrate every step a second time from T_N (restarted) and compare: kept history in the step
    itself would put the difference between a continued and a restarted integration into the estimate (measured
    on the Table 5.4 chain at rtol = 1e-6: 6472 macro steps instead of 486). So under these estimators the step
    restarts as before, and the run is the re-initialising one bit for bit."""
    rtol = 1e-5
    for est in ("exMD", "exLE"):
        sc = cosim.StepControl(estimator=est, rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol})
        a, c = (cosim.simulate(chain, 2e-6, 1e-9, approximation=cosim.Lagrange(k=1), step_control=sc,
                               last_step="shorten", solver=_cvode(rs)) for rs in ("auto", "continuous"))
        assert np.array_equal(a.X, c.X) and np.array_equal(a.t, c.t), est
        assert _counts(a) == _counts(c), est


def test_dense_output_leaves_the_kept_history_alone(chain):
    """Output points between macro points re-integrate every unit from T_N (a side integration); the integrator
    that holds the step's history is kept aside and resumed, so the trajectory at the macro points is the one
    without dense output, bit for bit, with the same restarts (76 of 1000 macro-point crossings)."""
    H, n = 2e-8, 100
    a, b = (cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1), output_interval=oi,
                           solver=_cvode("continuous")) for oi in (H, H / 4))
    idx = np.searchsorted(b.t, a.t)
    assert len(b.t) == 4 * n + 1 and np.array_equal(b.t[idx], a.t)
    assert np.array_equal(b.X[idx], a.X)
    assert _counts(a)[1] == _counts(b)[1] < 0.2 * 10 * n


def test_implicit_scheme_is_unchanged():
    """The implicit scheme restarts every corrector iteration from the saved state at T_N (its fd perturbations
    must start alike); the second instance only changes which integrator does it: the run is the one of "auto",
    bit for bit (imMD step control with a rejected step)."""
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    a, c = (cosim.simulate(s, 0.02, 1e-3, approximation=cosim.Lagrange(k=1),
                           scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20),
                           step_control=cosim.StepControl(estimator="imMD", rtol=1e-6),
                           solver=cosim.CVODE(rtol=1e-10, atol=1e-12, restart=rs)) for rs in ("auto", "continuous"))
    assert a.stats["rejected_steps"] > 0
    assert np.array_equal(a.X, c.X) and _counts(a) == _counts(c)


def test_warm_start_begins_restarts_with_the_step_it_had(chain):
    """warm_start=True: a restart at a state CVODE reached itself begins with the step it had there, bounded for the
    order-1 start, instead of CVODE's estimate (which evaluates the right-hand side to find it). On the Sec. 4.5
    chain at H = 2e-8 s with the re-initialising default: the same 2000 restarts, 2.2 right-hand sides fewer per
    restart (measured 37666 against 42075; the micro steps stay ≈ 8 per macro step, as the order-1 start needs
    steps about ten times below the order-3-5 step it had), error to the monolithic reference 2.6e-4 against
    1.8e-4; runs are identical bit for bit. Under exCV step control the restarts after a rollback start warm too:
    the same macro steps and restarts, fewer right-hand sides."""
    H, n = 2e-8, 200
    ref = cosim.simulate_monolithic(chain, n * H, solver=cosim.CVODE(rtol=1e-11, atol=1e-14, linear_solver="band"))

    def run(warm):
        return cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1),
                              solver=_cvode("auto", warm_start=warm))

    cold, warm, again = run(False), run(True), run(True)
    (rhs_c, rst_c), (rhs_w, rst_w) = _counts(cold), _counts(warm)
    assert rst_w == rst_c == 10 * n
    assert rhs_w < rhs_c - 1.5 * rst_w, (rhs_w, rhs_c)
    assert np.array_equal(warm.X, again.X) and _counts(again) == (rhs_w, rst_w)
    assert _max_err(warm, ref) < 2.0 * _max_err(cold, ref), (_max_err(warm, ref), _max_err(cold, ref))

    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    sc = cosim.StepControl(estimator="exCV", rtol=1e-6, H_max=1e-2)
    a, w = (cosim.simulate(s, 0.05, 1e-3, approximation=cosim.Lagrange(k=2), step_control=sc,
                           solver=cosim.CVODE(rtol=1e-10, atol=1e-12, warm_start=ws)) for ws in (False, True))
    assert a.stats["rejected_steps"] > 0
    assert w.stats["macro_steps"] == a.stats["macro_steps"] and _counts(w)[1] == _counts(a)[1]
    assert _counts(w)[0] < _counts(a)[0]


def test_never_keeps_the_history_across_jumps(chain):
    """restart="never" keeps the history across every jump (the thesis' IDA, never re-initialised at fixed H):
    at H = 1e-7 s, where 70 % of the unit steps of "continuous" restart, only the first step does, with 2.4x fewer
    right-hand sides (measured 9762 against 23548) and the same accuracy against the co-simulation with tight
    solver tolerances (4.1e-5 against 5.0e-5). At H = 1e-6 s one jump is too large for the kept history (CVODE's
    error test fails down to its minimum step): that unit restarts from T_N and the run goes on."""
    H, n = 1e-7, 100
    tight = cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1),
                           solver=cosim.CVODE(rtol=1e-10, atol=1e-13, linear_solver="band"))
    never, cont = (cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1), solver=_cvode(rs))
                   for rs in ("never", "continuous"))
    (rhs_n, rst_n), (rhs_c, rst_c) = _counts(never), _counts(cont)
    assert rst_n == 10 and rst_c > 0.5 * 10 * n, (rst_n, rst_c)
    assert rhs_n < 0.5 * rhs_c, (rhs_n, rhs_c)
    assert _max_err(never, tight) <= 1.05 * _max_err(cont, tight), (_max_err(never, tight), _max_err(cont, tight))
    again = cosim.simulate(chain, n * H, H, approximation=cosim.Lagrange(k=1), solver=_cvode("never"))
    assert np.array_equal(never.X, again.X) and _counts(again) == (rhs_n, rst_n)
    big, big2 = (cosim.simulate(chain, 40e-6, 1e-6, approximation=cosim.Lagrange(k=1), solver=_cvode("never"))
                 for _ in range(2))
    assert _counts(big)[1] > 10
    assert np.all(np.isfinite(big.X)) and np.array_equal(big.X, big2.X)
