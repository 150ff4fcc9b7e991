"""Parallel Jacobi units (simulate(threads=n), kraft2021 §16) and the timing instrumentation (timing=True)."""

import numpy as np
import pytest

import cosim
from cosim.models import oscillator_chain


def small_chain():
    return oscillator_chain(preset="table5.3", n_bodies=40, n_subsystems=8, seed=2)


def simulate(*args, **kw):
    """cosim.simulate with its default growth check: the forced chain starts at rest (early amplitudes ~1e-39), which
    the check counts as rest, not as the start of a divergence."""
    return cosim.simulate(*args, **kw)


@pytest.mark.parametrize("approx", [cosim.ZOH(), cosim.Lagrange(k=2)])
def test_threads_give_bit_identical_results(approx):
    s = small_chain()   # nonlinear cut elements: 8 segments + 7 coupling-element units
    runs = [simulate(s, t_end=4e-4, H=2e-6, approximation=approx, solver=cosim.CVODE(rtol=1e-6, atol=1e-9),
                           threads=n) for n in (1, 2, 4)]
    for r in runs[1:]:
        assert np.array_equal(r.t, runs[0].t)
        assert np.array_equal(r.X, runs[0].X) and np.array_equal(r.Y, runs[0].Y) and np.array_equal(r.U, runs[0].U)
        assert r.stats["subsystems"] == runs[0].stats["subsystems"]
    assert np.max(np.abs(runs[0].X)) > 0


@pytest.mark.parametrize("estimator", ["exMD", "exLE"])
def test_estimators_comparative_integrations_on_the_pool_are_bit_identical(estimator):
    """exLE/exMD integrate every monitored unit a second time per macro step (kraft2021 §8.2/8.3); with threads=n
    these run on the scheme's pool: the controller then takes exactly the same steps and the results are equal."""
    s = small_chain()
    runs = [simulate(s, t_end=3e-4, H=1e-7, approximation=cosim.Lagrange(k=0), threads=n, last_step="shorten",
                     step_control=cosim.StepControl(estimator=estimator, rtol=1e-4),
                     solver=cosim.CVODE(rtol=1e-6, atol=1e-9)) for n in (1, 2, 4)]
    assert runs[0].stats["rejected_steps"] > 0 and len(set(np.asarray(runs[0].k).tolist())) > 1
    # §16 κ histogram of an adaptive run: the share of the simulated time per degree
    hist, H, k = runs[0].stats["kappa_histogram"], np.asarray(runs[0].H), np.asarray(runs[0].k)
    assert sum(hist.values()) == pytest.approx(1.0) and set(hist) == set(k.tolist())
    assert hist[int(k[-1])] == pytest.approx(H[k == k[-1]].sum() / H.sum())
    for r in runs[1:]:
        assert np.array_equal(r.t, runs[0].t) and np.array_equal(r.X, runs[0].X) and np.array_equal(r.U, runs[0].U)
        assert np.array_equal(r.H, runs[0].H) and np.array_equal(r.k, runs[0].k)
        assert r.stats["subsystems"] == runs[0].stats["subsystems"]
        assert r.stats["rejected_steps"] == runs[0].stats["rejected_steps"]


@pytest.mark.parametrize("jacobian", ["fd", "sap"])
def test_implicit_corrector_and_perturbed_integrations_on_the_pool_are_bit_identical(jacobian):
    """cosim.Implicit with threads=n: the corrector's integrations of the units and the fd perturbed integrations
    (kraft2021 §6.3) run on a pool; iterations and results are the same for every n."""
    s = small_chain()
    runs = [simulate(s, t_end=2e-4, H=2e-6, approximation=cosim.Lagrange(k=2), threads=n,
                     scheme=cosim.Implicit(jacobian=jacobian, tol=1e-8, max_iter=10, on_failure="continue"),
                     solver=cosim.CVODE(rtol=1e-6, atol=1e-9)) for n in (1, 2, 4)]
    assert runs[0].stats["iterations"] > runs[0].stats["macro_steps"]
    for r in runs[1:]:
        assert np.array_equal(r.X, runs[0].X) and np.array_equal(r.U, runs[0].U) and np.array_equal(r.Y, runs[0].Y)
        assert r.stats["iterations"] == runs[0].stats["iterations"]
        assert np.array_equal(r.stats["iterations_per_step"], runs[0].stats["iterations_per_step"])
        assert r.stats["subsystems"] == runs[0].stats["subsystems"]


def test_implicit_reports_the_lowest_failing_unit_for_any_thread_count():
    """S2 and S3 both fail in the predictor's integrations (CVODE's step limit); every thread count reports S2."""
    s = oscillator_chain(6, 3, masses=1.0, stiffness=1.0, x0=0.0, v0=0.0,
                         forces=[dict(kind="harmonic", bodies=[3, 6], amplitude=1.0, omega=1e5)])
    msgs = []
    for n in (1, 2, 3):
        with pytest.raises(cosim.SolverError) as e:
            simulate(s, t_end=1e-2, H=1e-3, solver=cosim.CVODE(max_steps=5), threads=n,
                     approximation=cosim.Lagrange(k=1), scheme=cosim.Implicit(on_failure="continue"))
        msgs.append(str(e.value))
        assert e.value.result is not None
    assert msgs[0] == msgs[1] == msgs[2] and "S2" in msgs[0] and "S3" not in msgs[0], msgs[0]


def test_more_threads_than_units_and_fixed_step_solvers():
    s = oscillator_chain(4, 2, masses=1.0, stiffness=100.0, damping=0.5, x0=[0.1, 0, 0, -0.1])
    a = simulate(s, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=4), threads=1)
    b = simulate(s, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=4), threads=8)
    assert np.array_equal(a.X, b.X)


def test_the_error_of_the_lowest_failing_unit_is_reported_for_any_thread_count():
    """Two units fail in the same macro step; every thread count reports the lower one (S2), as the sequential
    loop does."""
    s = oscillator_chain(6, 3, masses=1.0, stiffness=1.0, x0=0.0, v0=0.0,
                         forces=[dict(kind="harmonic", bodies=[3, 6], amplitude=1e300, omega=1e3)])
    msgs = []
    for n in (1, 2, 3):
        with pytest.raises((cosim.SolverError, cosim.DivergenceError)) as e:
            simulate(s, t_end=1e-2, H=1e-3, solver=cosim.RK4(substeps=1), threads=n, divergence_bound=1e3)
        msgs.append(str(e.value))
        assert e.value.result is not None
    assert msgs[0] == msgs[1] == msgs[2] and "S2" in msgs[0] and "S3" not in msgs[0], msgs[0]


def test_python_units_run_with_threads_serialised_on_the_gil():
    def rhs(t, x, u):
        return np.array([x[1], -x[0] + u[0]])

    def out(t, x, u):
        return np.array([x[0]])

    s1 = cosim.ODE(rhs, out, nx=2, nu=1, ny=1, x0=[1.0, 0.0], name="A", feedthrough=False)
    s2 = cosim.ODE(rhs, out, nx=2, nu=1, ny=1, x0=[0.0, 1.0], name="B", feedthrough=False)
    sys = cosim.CoupledSystem([s1, s2], [cosim.connect("A.y[0]", "B.u[0]", 0.1), cosim.connect("B.y[0]", "A.u[0]", 0.1)])
    a = simulate(sys, t_end=0.5, H=0.05, solver=cosim.RK4(substeps=2), threads=1)
    b = simulate(sys, t_end=0.5, H=0.05, solver=cosim.RK4(substeps=2), threads=2)
    assert np.array_equal(a.X, b.X)


@pytest.mark.parametrize("threads,exc", [(0, ValueError), (-2, ValueError), (2000, ValueError), (1.5, TypeError),
                                         (True, TypeError), ("2", TypeError)])
def test_bad_threads_name_the_argument(threads, exc):
    with pytest.raises(exc, match="threads"):
        simulate(small_chain(), t_end=1e-4, H=1e-5, threads=threads)


def test_threads_need_jacobi():
    with pytest.raises(ValueError, match="threads"):
        simulate(small_chain(), t_end=1e-4, H=1e-5, scheme="gauss-seidel", threads=2)


@pytest.mark.parametrize("threads", [1, 2])
def test_timing_breakdown(threads):
    s = small_chain()
    r = simulate(s, t_end=4e-4, H=2e-6, approximation=cosim.Lagrange(k=1), threads=threads, timing=True,
                       solver=cosim.CVODE(rtol=1e-6, atol=1e-9))
    tm = r.stats["timing"]
    assert tm["threads"] == threads and len(tm["thread_idle_time"]) == threads
    for name in s.names:
        st = r.stats["subsystems"][name]
        for key in ("solver_time", "idle_time", "save_time", "interface_time"):
            assert st[key] >= 0.0, (name, key)
        assert st["interface_time"] == tm["interface_time"]
        assert st["mean_micro_step"] is None if name.startswith("K") else st["mean_micro_step"] > 0
    # eq. 4.5: T^solv = max_L sum_N T_{L,N}; every unit's solver + idle time is the same sum_N max_L T_{L,N}
    solv = [r.stats["subsystems"][n]["solver_time"] for n in s.names]
    tot = [r.stats["subsystems"][n]["solver_time"] + r.stats["subsystems"][n]["idle_time"] for n in s.names]
    assert np.allclose(tot, tot[0], rtol=1e-9, atol=1e-12)
    assert tm["solver_time"] == max(solv)
    assert np.isclose(tm["idle_time"], tot[0] - max(solv), rtol=1e-9, atol=1e-12)
    assert 0.0 <= tm["idle_fraction"] <= 1.0
    assert tm["scheme_time"] > 0 and tm["interface_time"] > 0
    assert r.stats["mean_H"] == pytest.approx(2e-6) and r.stats["kappa_histogram"] == {1: 1.0}


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_cpu_clock_timing(threads):
    """The same eq. 4.5 sums with the CPU clock of the thread that ran each unit (CLOCK_THREAD_CPUTIME_ID): every
    unit's CPU time + CPU idle time is the same Σ_N max_L CPU_{L,N}; the threads cannot have used more CPU time than
    the scheme's wall time on each of them."""
    s = small_chain()
    r = simulate(s, t_end=4e-4, H=2e-6, approximation=cosim.Lagrange(k=1), threads=threads, timing=True,
                 solver=cosim.CVODE(rtol=1e-6, atol=1e-9))
    tm, st = r.stats["timing"], r.stats["subsystems"]
    cpu = np.array([st[n]["cpu_time"] for n in s.names])
    tot = np.array([st[n]["cpu_time"] + st[n]["cpu_idle_time"] for n in s.names])
    assert np.all(cpu >= 0.0) and cpu[0] > 0.0
    assert cpu.sum() <= tm["scheme_time"] * threads * (1 + 1e-6) + 1e-4     # clock granularity
    assert np.allclose(tot, tot[0], rtol=1e-9, atol=1e-12)
    assert tm["cpu_solver_time"] == cpu.max()
    assert np.isclose(tm["cpu_idle_time"], tot[0] - cpu.max(), rtol=1e-9, atol=1e-12)
    assert 0.0 <= tm["cpu_idle_fraction"] < 1.0
    assert "unit_cpu_time" not in tm


def test_timing_off_has_no_clocks():
    r = simulate(small_chain(), t_end=1e-4, H=1e-5)
    assert "timing" not in r.stats and "idle_time" not in r.stats["subsystems"]["S1"]


def test_plot_timing():
    import matplotlib
    matplotlib.use("Agg")
    r = simulate(small_chain(), t_end=2e-4, H=1e-5, threads=2, timing=True)
    ax = cosim.plot.timing(r)
    assert ax.figure.axes[0] is ax
    assert len(ax.patches) >= 3 * len(r.system.names)      # stacked bars: solver, idle, save, interface
    assert {t.get_text() for t in ax.get_legend().get_texts()} >= {"solver", "solver (idle)", "interface"}
    with pytest.raises(ValueError, match="timing"):
        cosim.plot.timing(simulate(small_chain(), t_end=1e-4, H=1e-5))


# --- which thread steps which unit (parallel/assign.h, parallel/pool.h; docs/chains.md "Threads") ---------------

def _max_load(cost, owner, n):
    return max(np.bincount(owner, weights=cost, minlength=n))


def test_assign_units_is_longest_processing_time_first():
    from cosim import _core
    # by hand: 5 -> w0, 3 -> w1, 2 -> w2, then the 1s to the least loaded (ties: the lower worker)
    assert _core.assign_units([5.0, 1, 1, 1, 1, 3, 2], 3).tolist() == [0, 2, 1, 2, 1, 1, 2]
    rng = np.random.default_rng(4)
    for count, n in ((64, 16), (15, 2), (7, 3), (3, 8), (1000, 7)):
        cost = rng.lognormal(size=count)
        owner = _core.assign_units(cost, n)
        assert owner.shape == (count,) and owner.min() >= 0 and owner.max() < n
        assert np.array_equal(owner, _core.assign_units(cost, n))       # deterministic
        # Graham's bound: at most 4/3 of the optimum, which is at least max(mean load, largest unit)
        assert _max_load(cost, owner, n) <= 4 / 3 * max(cost.sum() / n, cost.max()) * (1 + 1e-12)
        # the rule written out: largest first (ties: lower index) to the least loaded worker (ties: lower worker)
        load, ref = [0.0] * n, np.empty(count, dtype=int)
        for i in sorted(range(count), key=lambda i: (-cost[i], i)):
            k = min(range(n), key=lambda k: (load[k], k))
            ref[i], load[k] = k, load[k] + cost[i]
        assert np.array_equal(owner, ref)
    equal = _core.assign_units(np.ones(64), 16)
    assert np.bincount(equal).tolist() == [4] * 16
    assert _core.assign_units(np.empty(0), 4).shape == (0,)


@pytest.mark.parametrize("cost,n,exc", [([1.0, -1.0], 2, ValueError), ([1.0, np.nan], 2, ValueError),
                                        ([1.0], 0, ValueError), ([[1.0]], 2, ValueError)])
def test_assign_units_names_bad_arguments(cost, n, exc):
    from cosim import _core
    with pytest.raises(exc, match="cost|workers"):
        _core.assign_units(cost, n)


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_pool_runs_every_item_exactly_once_and_balances_by_measured_cost(threads):
    """Items of unequal cost (busy waits of the thread CPU clock); 140 runs re-balance the lists by the measured cost
    (before runs 1, 2, 4, ..., 64, 128) while workers take items from each other's lists: every item runs once per
    run, and the final lists are within LPT's bound of the true costs."""
    from cosim import _core
    cost = np.r_[np.full(12, 2e-5), np.full(4, 1.5e-4), [4e-4]]
    r = _core.pool_check(cost, threads, 140)
    assert r["ran"].tolist() == [140] * len(cost)
    if threads > 1:
        assert r["balances"] >= 1
        assert _max_load(cost, r["owner"], threads) <= 4 / 3 * max(cost.sum() / threads, cost.max()) * 1.05
    else:
        assert r["balances"] == 0 and r["stolen"].tolist() == [0]


def test_thread_timing_gives_serial_fraction_and_balance():
    """timing=True with threads: the serial part of the master, the units per thread, and cpu_parallelism (the
    units' CPU time over the critical path of the plan's lists), with results equal to threads=1."""
    s = small_chain()
    kw = dict(t_end=4e-4, H=2e-6, approximation=cosim.Lagrange(k=1), solver=cosim.CVODE(rtol=1e-6, atol=1e-9),
              timing=True)
    runs = {n: simulate(s, threads=n, **kw) for n in (1, 3)}
    assert np.array_equal(runs[1].X, runs[3].X) and np.array_equal(runs[1].U, runs[3].U)
    for n, r in runs.items():
        tm = r.stats["timing"]
        assert tm["run_time"] >= tm["scheme_time"] > 0 and 0.0 <= tm["serial_fraction"] < 1.0
        assert np.isclose(tm["serial_time"], tm["run_time"] - tm["scheme_time"])
        assert sum(tm["thread_units"]) == len(s.names) and len(tm["thread_busy_time"]) == n
        assert 1.0 - 1e-9 <= tm["cpu_parallelism"] <= n + 1e-9
        assert sum(tm["thread_busy_time"]) > 0 and min(tm["thread_busy_time"]) >= 0   # a sleepy thread's list
        assert min(tm["thread_stolen_units"]) >= 0                                   # may all be taken
    assert runs[1].stats["timing"]["cpu_parallelism"] == pytest.approx(1.0)
    assert runs[1].stats["timing"]["thread_stolen_units"] == [0]


@pytest.mark.parametrize("threads", [2, 8])
def test_pool_start_and_barrier_never_lose_a_wake_up(threads):
    """Many runs of units that do nothing: workers and caller switch between spinning and sleeping all the time
    (8 threads on fewer cores sleep, 2 may spin); every run hands out every item once and returns."""
    from cosim import _core
    r = _core.pool_check(np.zeros(16), threads, 3000)
    assert r["ran"].tolist() == [3000] * 16


def test_pool_check_names_bad_arguments():
    from cosim import _core
    with pytest.raises(ValueError, match="threads"):
        _core.pool_check(np.zeros(4), 0, 10)
    with pytest.raises(ValueError, match="runs"):
        _core.pool_check(np.zeros(4), 2, -1)
    with pytest.raises(ValueError, match="cost"):
        _core.pool_check(np.full(4, 1.0), 2, 1)
