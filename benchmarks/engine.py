"""Engine benchmark: master overhead against a plain Python loop, cost per unit as the number of units grows, peak
memory against the result, speed against a plain NumPy loop, cost against the monolithic solve.

Run: .venv/bin/python benchmarks/engine.py   (figures are recorded in benchmarks/README.md)
"""
import time

import numpy as np

import cosim
from cosim import models


def best_of(f, repeat=3):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t0)
    return min(ts), out


def ring(n):
    """n trivial scalar LTI subsystems x_i' = -x_i + u_i, u_i = y_{i-1}."""
    subs = [cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[1.0 if i == 0 else 0.0], name=f"S{i}") for i in range(n)]
    conns = [cosim.connect(f"S{(i - 1) % n}.y[0]", f"S{i}.u[0]", 0.5) for i in range(n)]
    return cosim.CoupledSystem(subs, conns)


def median_of(f, repeat=7):
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def python_loop(n, h):
    """The same arithmetic as cosim on two 1-state units (Jacobi, ZOH, one Euler step per macro step), scalar
    Python, no recording: what a user writes by hand."""
    x1, x2 = 1.0, 0.0
    u1, u2 = 0.5 * x2, 0.5 * x1
    for _ in range(n):
        x1 += h * (-x1 + u1)
        x2 += h * (-x2 + u2)
        u1, u2 = 0.5 * x2, 0.5 * x1
    return x1, x2


def python_loop_recording(n, h):
    """python_loop keeping what cosim records at every macro point (t, x, y, u) in lists."""
    x1, x2 = 1.0, 0.0
    u1, u2 = 0.5 * x2, 0.5 * x1
    T, X, Y, U = [0.0], [(x1, x2)], [(x1, x2)], [(u1, u2)]
    for k in range(n):
        x1 += h * (-x1 + u1)
        x2 += h * (-x2 + u2)
        u1, u2 = 0.5 * x2, 0.5 * x1
        T.append((k + 1) * h)
        X.append((x1, x2))
        Y.append((x1, x2))
        U.append((u1, u2))
    return x1, x2


def interleaved_medians(fs, repeat=15, before=None):
    """Median wall time of each function in fs, the runs interleaved (f1, f2, ..., f1, f2, ...): a slow phase of a
    shared machine then slows every contender alike instead of deciding a ratio. `before` runs untimed before every
    timed run (a cache flush)."""
    ts = [[] for _ in fs]
    for _ in range(repeat):
        for f, t in zip(fs, ts):
            if before is not None:
                before()
            t0 = time.perf_counter()
            f()
            t.append(time.perf_counter() - t0)
    return [float(np.median(t)) for t in ts]


def two_units():
    print("## Two 1-state LTI units, Jacobi, ZOH, Euler (1 micro step), 1e5 macro steps (medians of 15, interleaved)")
    s = ring(2)
    n, H = 100_000, 1e-4

    def run(**kw):
        return cosim.simulate(s, n * H, H, approximation=cosim.ZOH(), solver=cosim.Euler(), **kw)
    contenders = [run, lambda: python_loop(n, H), lambda: run(output_interval=n * H)]  # last: t = 0 and t_end only
    r = run()
    x1, x2 = python_loop(n, H)
    same = abs(r.X[-1, 0] - x1) + abs(r.X[-1, 1] - x2)
    # warm: runs follow runs (a DoE); cold: 64 MB read before every run of either side, so that cosim writes its
    # 5.6 MB of records into memory that is not in any cache (a first run after other work)
    junk = np.ones(8_000_000)
    for label, before in (("warm", None), ("cold caches", junk.sum)):
        t_c, t_py, t_c0 = interleaved_medians(contenders, before=before)
        print(f"[{label}] cosim, every macro point recorded: {1e3 * t_c:.2f} ms = {1e9 * t_c / (2 * n):.1f} ns per "
              f"macro step per unit (target <= 40); plain Python loop, no recording: {1e3 * t_py:.2f} ms: cosim is "
              f"{t_py / t_c:.2f}x faster (target > 1); cosim without recording (output_interval = t_end) "
              f"{1e3 * t_c0:.2f} ms: {t_py / t_c0:.2f}x")
    t_c, t_pyr = interleaved_medians([run, lambda: python_loop_recording(n, H)])
    print(f"plain Python loop recording t, x, y, u in lists {1e3 * t_pyr:.2f} ms; cosim {1e3 * t_c:.2f} ms: "
          f"{t_pyr / t_c:.2f}x faster. Same final states as the loop to {same:.1e}")


def ring_ft(n):
    """n 2-state LTI units in a ring with feed-through (D = 0.3): the consistent update solves a loop of n units."""
    subs = [cosim.LTI([[0.0, 1.0], [-4.0, -0.5]], [[0.0], [1.0]], [[1.0, 0.2]], [[0.3]], x0=[1.0, 0.0], name=f"S{i}")
            for i in range(n)]
    conns = [cosim.connect(f"S{(i - 1) % n}.y[0]", f"S{i}.u[0]", 0.5) for i in range(n)]
    return cosim.CoupledSystem(subs, conns)


def scale():
    print("\n## Ring of N 2-state LTI units with feed-through (Exact units, Lagrange k = 1, Jacobi, consistent update)")
    print(f"{'N':>6} {'macro steps':>12} {'wall [s]':>9} {'ns / (step * unit)':>19}")
    per = {}
    for n in (10, 100, 1000):
        s = ring_ft(n)
        steps = 200_000 // n
        H = 1e-3
        t = median_of(lambda: cosim.simulate(s, steps * H, H, approximation=cosim.Lagrange(1), solver=cosim.Exact()),
                      repeat=5)
        per[n] = 1e9 * t / (steps * n)
        print(f"{n:>6} {steps:>12} {t:9.3f} {per[n]:19.1f}")
    print(f"cost per unit at N = 1000 / at N = 10: {per[1000] / per[10]:.2f} (target <= 2)")


def memory():
    import tracemalloc
    print("\n## Peak memory of a 1e6-step run (two 1-state units) against the size of its result arrays")
    s = ring(2)
    tracemalloc.start()
    r = cosim.simulate(s, 1e6 * 1e-4, 1e-4, approximation=cosim.ZOH(), solver=cosim.Euler())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    size = r.t.nbytes + r.X.nbytes + r.Y.nbytes + r.U.nbytes
    print(f"result arrays {size / 1e6:.1f} MB, peak traced {peak / 1e6:.1f} MB: {peak / size:.2f}x (target <= 1.2)")


def overhead():
    print("## Master overhead (trivial scalar LTI subsystems, explicit Euler with 1 micro step, ZOH, Jacobi)")
    print(f"{'subsystems':>10} {'macro steps':>12} {'wall [s]':>9} {'ns / (step * subsystem)':>24}")
    for n in (2, 10, 100):
        s = ring(n)
        steps = 2_000_000 // n
        H = 1e-4
        t, r = best_of(lambda: cosim.simulate(s, steps * H, H, approximation=cosim.ZOH(), solver=cosim.Euler()))
        assert r.stats["macro_steps"] == steps
        print(f"{n:>10} {steps:>12} {t:9.3f} {1e9 * t / (steps * n):24.1f}")
    # the recording of all macro points is included; per-step integration cost is one 1x1 rhs call


def numpy_loop(system, t_end, H, substeps):
    """What a user writes without cosim: Jacobi, linear extrapolation (Lagrange k = 1), RK4 micro steps,
    NumPy matrices per subsystem, exchange u = L y + r after every macro step."""
    subs = system.subsystems
    L, r = system.connection_matrix()
    xs = [s.x0.copy() for s in subs]
    io, oo = system.in_offset, system.out_offset
    y = np.concatenate([s.C @ x + s.D @ np.zeros(s.nu) for s, x in zip(subs, xs)])
    u = L @ y + r
    for _ in range(3):  # consistent start (feed-through)
        y = np.concatenate([s.C @ x + s.D @ u[io[i]:io[i + 1]] for i, (s, x) in enumerate(zip(subs, xs))])
        u = L @ y + r
    u_prev = u.copy()
    n = int(round(t_end / H))
    h = H / substeps
    out = [np.concatenate(xs)]
    for N in range(n):
        slope = (u - u_prev) / H if N > 0 else np.zeros_like(u)
        for i, s in enumerate(subs):
            ui0, sl = u[io[i]:io[i + 1]], slope[io[i]:io[i + 1]]
            x = xs[i]
            for j in range(substeps):
                tau = j * h
                f = lambda tt, xx: s.A @ xx + s.B @ (ui0 + sl * tt)
                k1 = f(tau, x)
                k2 = f(tau + h / 2, x + h / 2 * k1)
                k3 = f(tau + h / 2, x + h / 2 * k2)
                k4 = f(tau + h, x + h * k3)
                x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            xs[i] = x
        # consistent update at T_{N+1} (S2 has feed-through): y1 first, then y2 with u2 = y1
        u_prev = u
        y = np.concatenate([s.C @ x for s, x in zip(subs, xs)])
        u_new = L @ y + r
        y = np.concatenate([s.C @ x + s.D @ u_new[io[i]:io[i + 1]] for i, (s, x) in enumerate(zip(subs, xs))])
        u = L @ y + r
        out.append(np.concatenate(xs))
    return np.array(out)


def against_numpy():
    print("\n## Against a plain NumPy loop (two-mass oscillator F/D, Jacobi, Lagrange k = 1, RK4 with 10 micro steps)")
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    t_end, H = 0.2, 1e-4
    t_np, X_np = best_of(lambda: numpy_loop(s, t_end, H, 10), repeat=1)
    t_c, r = best_of(lambda: cosim.simulate(s, t_end, H, scheme="jacobi", approximation=cosim.Lagrange(1),
                                            solver=cosim.RK4(substeps=10)))
    diff = np.max(np.abs(r.X - X_np)) / np.max(np.abs(X_np))
    print(f"NumPy loop: {t_np:.3f} s   cosim: {t_c * 1e3:.2f} ms   speed-up: {t_np / t_c:.0f}x   "
          f"(same result to {diff:.1e} relative)")


def against_monolithic(target=1e-6):
    print(f"\n## CVODE co-simulation against the monolithic CVODE at equal accuracy (max_rel <= {target:g} against the "
          "exact solution; two-mass F/D, ck = 1e5, dk = 1e3, t_end = 1 s, CVODE BDF and Adams on both sides; best of 3 "
          "per configuration)")
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    exact = cosim.simulate_monolithic(s, 1.0, 1e-4)
    print(f"{'run':<52} {'max_rel error':>13} {'wall [ms]':>10} {'rhs calls':>10}")
    rows = []

    def add(name, f):
        t, r = best_of(f)
        e = r.error_to(exact)["max_rel"]
        calls = sum(v["rhs_calls"] for v in r.stats["subsystems"].values())
        rows.append((name, e, t, calls))
        print(f"{name:<52} {e:13.2e} {1e3 * t:10.1f} {calls:10d}")

    for k in (2, 3):
        for H in (1e-4, 5e-5):
            for tol in (1e-8, 1e-10):
                add(f"co-sim GS Lagrange k={k} H={H:g} rtol={tol:g}",
                    lambda: cosim.simulate(s, 1.0, H, scheme="gauss-seidel", approximation=cosim.Lagrange(k),
                                           solver=cosim.CVODE(rtol=tol, atol=tol * 1e-2), startup="kraft"))
    for method in ("bdf", "adams"):
        for k in (2, 3, 4, 5):
            for H in (2.5e-4, 2e-4, 1e-4, 5e-5):
                for tol in (1e-7, 1e-8):
                    add(f"co-sim Jacobi EXTRIPOL-C1 k={k} H={H:g} {method} rtol={tol:g}",
                        lambda: cosim.simulate(s, 1.0, H, scheme="jacobi",
                                               approximation=cosim.ExtrapolatedInterpolation(k, 1),
                                               solver=cosim.CVODE(rtol=tol, atol=tol * 1e-2, restart="auto",
                                                                  method=method),
                                               startup="kraft"))
    for method in ("bdf", "adams"):
        for tol in (1e-6, 5e-7, 2e-7, 1e-7, 1e-8, 1e-9):
            add(f"monolithic CVODE {method} rtol={tol:g}",
                lambda: cosim.simulate_monolithic(s, 1.0, 1e-4, solver=cosim.CVODE(rtol=tol, atol=tol * 1e-2,
                                                                                     method=method)))
    ok = [row for row in rows if row[1] <= target]
    mono = min((m for m in ok if m[0].startswith("mono")), key=lambda m: m[2])
    for label in ("Lagrange", "EXTRIPOL-C1"):
        co = [row for row in ok if label in row[0]]
        if not co:
            print(f"{label}: no configuration reached {target:g}")
            continue
        best = min(co, key=lambda row: row[2])
        print(f"cheapest {label} at <= {target:g}: {best[0]} {1e3 * best[2]:.1f} ms; cheapest monolithic: {mono[0]} "
              f"{1e3 * mono[2]:.1f} ms; ratio {best[2] / mono[2]:.1f}x")


def smooth_inputs():
    print("\n## CVODE across smooth EXTRIPOL-C1 inputs (two-mass F/D, Jacobi, k = 2, H = 1e-4, t_end = 0.5 s, "
          "rtol = 1e-8)")
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    for restart in ("always", "auto"):
        t, r = best_of(lambda: cosim.simulate(s, 0.5, 1e-4, scheme="jacobi",
                                              approximation=cosim.ExtrapolatedInterpolation(2, 1),
                                              solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart=restart)))
        calls = sum(v["rhs_calls"] for v in r.stats["subsystems"].values())
        print(f"restart={restart:<7} wall {1e3 * t:7.1f} ms   rhs calls {calls:7d}")


def threads_across_runs():
    print("\n## DoE-style runs in Python threads (the GIL is released in the master): 8 runs, two-mass F/D, "
          "CVODE, t_end = 1 s, H = 1e-4")
    from concurrent.futures import ThreadPoolExecutor

    def run(ck):
        s = models.two_mass_oscillator(ck=ck, dk=1e3)
        return cosim.simulate(s, 1.0, 1e-4, approximation=cosim.Lagrange(1), solver=cosim.CVODE(rtol=1e-8)).X[-1]

    cks = np.logspace(4, 5.5, 8)
    t1, a = best_of(lambda: [run(c) for c in cks], repeat=1)

    def pooled():
        with ThreadPoolExecutor(2) as ex:
            return list(ex.map(run, cks))
    t2, b = best_of(pooled, repeat=1)
    same = all(np.array_equal(x, y) for x, y in zip(a, b))
    print(f"serial {t1:.3f} s   2 threads {t2:.3f} s   speed-up {t1 / t2:.2f}x   identical results: {same}")


if __name__ == "__main__":
    two_units()
    scale()
    memory()
    overhead()
    against_numpy()
    against_monolithic()
    smooth_inputs()
    threads_across_runs()
