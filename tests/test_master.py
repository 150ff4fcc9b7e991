"""The master as an algorithm over generic objects: transactions and rollback, the sparse consistent update, the
continuity of EXTRIPOL inputs at every macro point, user hooks, interrupts and callback exceptions."""
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import cosim
from cosim.simulate import _simulate
from cosim import _core, models
from cosim.approximations import ExtrapolatedInterpolation


def ring(n, d=0.3, gain=0.5, nx=2):
    """n LTI units in a ring with feed-through: u_i = gain * y_{i-1}; y_i = C x_i + d u_i."""
    rng = np.random.default_rng(n)
    subs = []
    for i in range(n):
        A = np.array([[0.0, 1.0], [-4.0 - rng.random(), -0.5]])[:nx, :nx]
        B = np.array([[0.0], [1.0]])[:nx]
        C = np.array([[1.0, 0.2]])[:, :nx]
        subs.append(cosim.LTI(A, B, C, [[d]], x0=rng.standard_normal(nx), name=f"S{i}"))
    conns = [cosim.connect(f"S{(i - 1) % n}.y[0]", f"S{i}.u[0]", gain) for i in range(n)]
    return cosim.CoupledSystem(subs, conns)


ROLLBACK_CASES = [
    ("jacobi", cosim.Lagrange(2), cosim.RK4(substeps=3)),
    ("gauss-seidel", cosim.Lagrange(1), cosim.Exact()),
    # CVODE's multistep history cannot be saved: under a controller that may reject, CVODE re-initialises at every
    # macro point, so the reference without rejections does too (restart="always")
    ("jacobi", ExtrapolatedInterpolation(2, 1), cosim.CVODE(rtol=1e-8, atol=1e-10, restart="always")),
    ("gauss-seidel", cosim.Hermite(1, "consistent"), cosim.CVODE(rtol=1e-8, atol=1e-10, restart="always")),
]


@pytest.mark.parametrize("scheme,approx,solver", ROLLBACK_CASES)
def test_rejected_steps_roll_back_bit_for_bit(scheme, approx, solver):
    """A test controller rejects chosen steps once; after restoring units and coupling history the retried step must
    reproduce the run without rejections exactly (np.array_equal, not approx)."""
    s = models.two_mass_oscillator(ck=1e4, dk=10.0)
    kw = dict(scheme=scheme, approximation=approx, solver=solver)
    ref = cosim.simulate(s, 0.05, 1e-3, **kw)
    rej = _simulate(s, 0.05, 1e-3, reject_steps=[0, 1, 3, 17, 49], **kw)
    assert rej.stats["rejected_steps"] == 5
    assert rej.stats["macro_steps"] == ref.stats["macro_steps"] == 50
    for a, b in ((ref.t, rej.t), (ref.X, rej.X), (ref.Y, rej.Y), (ref.U, rej.U)):
        assert np.array_equal(a, b)


def test_rollback_restores_nonlinear_python_unit():
    """Rollback through a Python-callable unit (its state lives in the stepper, not in Python)."""
    s = models.two_mass_oscillator(ck=1e4, dk=10.0)
    sub1 = s.subsystems[0]
    py1 = cosim.ODE(lambda t, x, u: sub1.A @ x + sub1.B @ u, lambda t, x, u: sub1.C @ x + sub1.D @ u,
                    nx=sub1.nx, nu=sub1.nu, ny=sub1.ny, x0=sub1.x0, name="S1", feedthrough=False,
                    inputs=sub1.inputs, outputs=sub1.outputs)
    sysp = cosim.CoupledSystem([py1, s.subsystems[1]], s.connections)
    kw = dict(approximation=cosim.Lagrange(1), solver=cosim.RK4(substeps=2))
    ref = cosim.simulate(sysp, 0.02, 1e-3, **kw)
    rej = _simulate(sysp, 0.02, 1e-3, reject_steps=[2, 5], **kw)
    assert np.array_equal(ref.X, rej.X) and rej.stats["rejected_steps"] == 2


@pytest.mark.parametrize("n", [3, 50])
def test_sparse_consistent_update_equals_dense(n):
    """The consistent update at every macro point (sparse Newton with KLU) equals the dense solution
    y = (I - D L)^{-1} (C x + D r), u = L y + r, formed from the recorded states."""
    s = ring(n)
    res = cosim.simulate(s, 0.2, 0.01, approximation=cosim.Lagrange(1), solver=cosim.Exact())
    from scipy.linalg import block_diag
    C = block_diag(*[x.C for x in s.subsystems])
    D = block_diag(*[x.D for x in s.subsystems])
    L = s.L
    Y = np.linalg.solve(np.eye(n) - D @ L, (res.X @ C.T + D @ s.r).T).T
    assert np.max(np.abs(res.Y - Y)) <= 1e-12 * max(1.0, np.max(np.abs(Y)))
    assert np.max(np.abs(res.U - (Y @ L.T + s.r))) <= 1e-12 * max(1.0, np.max(np.abs(Y)))


def test_ring_of_many_units_matches_monolithic():
    """A ring of 300 units with feed-through converges to the exact monolithic solution with the order of Lagrange(2)
    extrapolation with the Kraft start-up (global error O(H^3), kraft2021 §4.3): halving H divides the error by
    about 8."""
    s = ring(300)
    errs = []
    for H in (2e-3, 1e-3):
        res = cosim.simulate(s, 0.1, H, scheme="jacobi", approximation=cosim.Lagrange(2), solver=cosim.Exact(),
                             startup="kraft")
        ref = cosim.simulate_monolithic(s, 0.1, t_eval=res.t)
        errs.append(res.error_to(ref)["max_abs"])
        assert res.stats["newton_iterations"] > 0
    assert errs[1] < 2e-6
    assert 6.0 < errs[0] / errs[1] < 10.0


def test_singular_loop_is_reported():
    """I - D L singular (d * gain = 1 around a two-unit loop): a clear error, not a crash or a wrong result."""
    s = ring(2, d=1.0, gain=1.0)
    with pytest.raises(cosim.SolverError, match="singular") as e:
        cosim.simulate(s, 0.1, 0.01, solver=cosim.Exact())
    assert "ill-posed" in str(e.value)
    assert e.value.result is None or len(e.value.result.t) == 0


def _poly(W, vals, ders=None):
    """Coefficients c_m of p(s) from the weights W[m, 0 | 1, j] and the sample data (newest first)."""
    v = np.zeros(W.shape[2])
    v[:len(vals)] = vals
    d = np.zeros(W.shape[2])
    if ders is not None:
        d[:len(ders)] = ders
    return W[:, 0, :] @ v + W[:, 1, :] @ d


@pytest.mark.parametrize("k", [0, 1, 2, 3])
@pytest.mark.parametrize("continuity", [0, 1])
@pytest.mark.parametrize("grid", ["uniform", "ramp"])
def test_extripol_input_continuous_at_every_macro_point(k, continuity, grid):
    """busch2016 eq. 12: the EXTRIPOL input on [T_N, T_{N+1}] starts where the previous window's ended (C0) with the
    same slope (C1), at every macro point including the start-up ones (N = 1 .. k+2), on a uniform grid and on the
    Kraft start-up ramp (steps 1e-5 H 2^n)."""
    kind = 1 if continuity == 0 else 2
    rng = np.random.default_rng(k)
    H = 0.1
    if grid == "uniform":
        T = [i * H for i in range(12)]
    else:
        T = [0.0]
        n = 0
        while T[-1] < 2 * H:
            T.append(min(T[-1] + 1e-5 * H * 2 ** n, 2 * H))
            n += 1
        T += [2 * H + i * H for i in range(1, 6)]
    y = rng.standard_normal(len(T))
    prev = None
    for N in range(len(T) - 1):
        hist_t = np.array(T[max(0, N - 7):N + 1][::-1])
        hist_y = y[max(0, N - 7):N + 1][::-1]
        h = T[N + 1] - T[N]
        W, deg, npts = _core.approx_weights(kind, k, False, hist_t, T[N], h)
        c = _poly(W, hist_y)
        p0, dp0 = c[0], (c[1] if len(c) > 1 else 0.0) / h      # value and d/dt at T_N
        if prev is None:
            assert p0 == pytest.approx(y[0], abs=1e-14)          # N = 0: the constant y(T_0)
            assert dp0 == 0.0
        else:
            pc, ph = prev
            end = np.polyval(pc[::-1], 1.0)
            dend = np.polyval(np.polyder(pc[::-1]), 1.0) / ph if len(pc) > 1 else 0.0
            assert p0 == pytest.approx(end, rel=1e-9, abs=1e-9)
            if continuity == 1:
                assert dp0 == pytest.approx(dend, rel=1e-7, abs=1e-7 * max(1.0, abs(dend)))
        prev = (c, h)


def test_rejecting_controller_makes_cvode_restart_at_every_macro_point():
    """With steps that may be rolled back, restart="auto" re-initialises at every macro point (a restored unit
    restarts too), and the run with rejections then equals the run without them."""
    s = models.two_mass_oscillator(ck=1e4, dk=10.0)
    kw = dict(approximation=ExtrapolatedInterpolation(2, 1), solver=cosim.CVODE(rtol=1e-8, atol=1e-10))
    plain = _simulate(s, 0.02, 1e-3, reject_steps=[], **kw)
    rej = _simulate(s, 0.02, 1e-3, reject_steps=[3, 7], **kw)
    assert all(st["restarts"] == 20 for st in plain.stats["subsystems"].values())
    assert np.array_equal(plain.X, rej.X)


def test_extripol_c1_cvode_restarts_only_at_the_start():
    """With continuous EXTRIPOL inputs CVODE (restart='auto') keeps its history across every macro point, including
    the start-up ones; with Lagrange inputs it restarts at every macro point."""
    s = models.two_mass_oscillator(ck=1e4, dk=10.0)
    c1 = cosim.simulate(s, 0.05, 1e-3, approximation=ExtrapolatedInterpolation(2, 1),
                        solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart="auto"))
    for st in c1.stats["subsystems"].values():
        assert st["restarts"] == 1
    lag = cosim.simulate(s, 0.05, 1e-3, approximation=cosim.Lagrange(2),
                         solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart="auto"))
    for st in lag.stats["subsystems"].values():
        assert st["restarts"] == 50


def test_step_finished_stops_with_partial_result():
    s = models.two_mass_oscillator()
    seen = []

    def hook(t, partial):
        seen.append((t, len(partial.t)))
        assert partial.t[-1] == t
        return t < 0.0045

    res = cosim.simulate(s, 0.01, 1e-3, step_finished=hook)
    assert res.state == "stopped" and res.success
    assert len(res.t) == 6 and res.t[-1] == pytest.approx(0.005)
    assert [n for _, n in seen] == [2, 3, 4, 5, 6]


def test_step_finished_every_and_none_continues():
    s = models.two_mass_oscillator()
    calls = []
    res = cosim.simulate(s, 0.01, 1e-3, step_finished=lambda t, r: calls.append(t), step_finished_every=3)
    assert res.state == "finished" and len(res.t) == 11
    assert np.allclose(calls, [0.003, 0.006, 0.009])
    with pytest.raises(ValueError, match="step_finished_every"):
        cosim.simulate(s, 0.01, 1e-3, step_finished=print, step_finished_every=0)
    with pytest.raises(TypeError, match="step_finished"):
        cosim.simulate(s, 0.01, 1e-3, step_finished=3)


def test_callback_exceptions_are_chained_or_propagate():
    s = models.two_mass_oscillator()

    def boom(t, r):
        raise ZeroDivisionError("from the hook")
    with pytest.raises(cosim.SolverError) as e:
        cosim.simulate(s, 0.01, 1e-3, step_finished=boom)
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    assert e.value.result is not None and len(e.value.result.t) >= 1

    def interrupt(t, r):
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        cosim.simulate(s, 0.01, 1e-3, step_finished=interrupt)

    sub = s.subsystems[0]

    def rhs(t, x, u):
        if t > 0.003:
            raise SystemExit(3)
        return sub.A @ x + sub.B @ u
    py = cosim.ODE(rhs, lambda t, x, u: sub.C @ x, nx=sub.nx, nu=sub.nu, ny=sub.ny, x0=sub.x0, name="S1",
                   feedthrough=False, inputs=sub.inputs, outputs=sub.outputs)
    sysp = cosim.CoupledSystem([py, s.subsystems[1]], s.connections)
    with pytest.raises(SystemExit):
        cosim.simulate(sysp, 0.01, 1e-3, solver=cosim.RK4())

    def rhs2(t, x, u):
        if t > 0.003:
            raise KeyError("inside rhs")
        return sub.A @ x + sub.B @ u
    py2 = cosim.ODE(rhs2, lambda t, x, u: sub.C @ x, nx=sub.nx, nu=sub.nu, ny=sub.ny, x0=sub.x0, name="S1",
                    feedthrough=False, inputs=sub.inputs, outputs=sub.outputs)
    with pytest.raises(cosim.SolverError) as e:
        cosim.simulate(cosim.CoupledSystem([py2, s.subsystems[1]], s.connections), 0.01, 1e-3, solver=cosim.RK4())
    assert isinstance(e.value.__cause__, KeyError)


def test_callback_exceptions_of_steppers_and_interface_jacobians_are_chained_or_propagate():
    """As in cosim.simulate: the exception a Python model raised inside cosim.Stepper (do_step, outputs) or
    cosim.schemes.interface_jacobian (fd and exact) is the __cause__ of the SolverError; KeyboardInterrupt and
    SystemExit propagate as themselves."""
    raised = {}

    def rhs(t, x, u):
        if t > 0.005 and "rhs" in raised:
            raise raised["rhs"]
        return np.array([x[1], -x[0] + u[0]])

    def out(t, x, u):
        if "out" in raised:
            raise raised["out"]
        return x[:1]
    py = cosim.ODE(rhs, out, nx=2, nu=1, ny=1, x0=[1.0, 0.0], name="S", feedthrough=False)
    for exc in (KeyError("inside rhs"), KeyboardInterrupt(), SystemExit(3)):
        raised.clear()
        raised["rhs"] = exc
        calls = [lambda: cosim.Stepper(py, cosim.RK4()).do_step(0.0, 0.01, [0.0])]
        calls += [lambda m=m: cosim.schemes.interface_jacobian(py, 0.01, method=m, u=[0.0]) for m in ("fd", "exact")]
        for call in calls:
            if isinstance(exc, Exception):
                with pytest.raises(cosim.SolverError, match="rhs raised KeyError") as e:
                    call()
                assert e.value.__cause__ is exc
            else:
                with pytest.raises(type(exc)):
                    call()
    raised.clear()
    st = cosim.Stepper(py, cosim.RK4())
    st.do_step(0.0, 0.01, [0.0])
    raised["out"] = ZeroDivisionError("inside output")
    with pytest.raises(cosim.SolverError) as e:
        st.output([0.0])
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_sigint_stops_a_long_c_run():
    """Ctrl-C during a long run in C (GIL released) raises KeyboardInterrupt within 1 s."""
    code = textwrap.dedent("""
        import sys, time, cosim
        subs = [cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[1.0], name=f"S{i}") for i in range(10)]
        conns = [cosim.connect(f"S{(i - 1) % 10}.y[0]", f"S{i}.u[0]", 0.5) for i in range(10)]
        s = cosim.CoupledSystem(subs, conns)
        print("start", flush=True)
        t0 = time.perf_counter()
        try:
            cosim.simulate(s, 1000.0, 0.01, solver=cosim.RK4(substeps=20000))
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("interrupted", time.perf_counter(), flush=True)
    """)
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "start"
    time.sleep(1.0)
    sent = time.perf_counter()
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=30)
    words = out.split()
    assert words[0] == "interrupted", out
    assert float(words[1]) - sent < 1.0


def test_record_memory_limit_is_a_clear_error(monkeypatch):
    sim = sys.modules["cosim.simulate"]
    monkeypatch.setattr(sim, "_record_limit", lambda: 1e4)
    with pytest.raises(MemoryError, match="coarser H"):
        cosim.simulate(models.two_mass_oscillator(), 1.0, 1e-3)


def test_timing_is_opt_in():
    s = models.two_mass_oscillator()
    off = cosim.simulate(s, 0.01, 1e-3)
    on = cosim.simulate(s, 0.01, 1e-3, timing=True)
    assert "wall_time" not in off.stats["subsystems"]["S1"]
    assert on.stats["subsystems"]["S1"]["wall_time"] > 0
    assert np.array_equal(off.X, on.X)


def test_large_system_never_forms_dense_L():
    """u = L y + r stays sparse from connect() to the engine: a ring of 2000 units simulates without the dense
    2000 x 2000 matrix ever being formed."""
    s = ring(2000, nx=1)
    a, j, g = s.coupling
    assert len(a) == 2000 and np.all(g == 0.5)
    res = cosim.simulate(s, 0.01, 1e-3, solver=cosim.Exact())
    assert res.X.shape == (11, 2000)
    assert s._L_dense is None
    assert s.L.shape == (2000, 2000) and s.L[1, 0] == 0.5      # formed on request only


def test_feedthrough_without_a_loop_is_solved_in_order_without_newton():
    """u = L y + r with feed-through units whose dependency graph has no cycle (here S2's force reads S1's
    position, S1 has no feed-through) is solved exactly by evaluating the units in dependency order; a ring of
    feed-through units (an algebraic loop) still needs Newton's method."""
    s = models.two_mass_oscillator(feedthrough=True)
    res = cosim.simulate(s, 0.01, 1e-3, solver=cosim.Exact())
    assert res.stats["newton_iterations"] == 0
    L = s.L
    np.testing.assert_allclose(res.U, res.Y @ L.T + s.r, rtol=0, atol=1e-12 * np.max(np.abs(res.Y)))
    ring = cosim.CoupledSystem([cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[0.3]], x0=[1.0], name=f"R{i}")
                                for i in range(4)],
                               [cosim.connect(f"R{(i - 1) % 4}.y[0]", f"R{i}.u[0]", 0.5) for i in range(4)])
    assert cosim.simulate(ring, 0.01, 1e-3, solver=cosim.Exact()).stats["newton_iterations"] > 0
