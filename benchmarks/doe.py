"""DoE study layer benchmark (issue 15): runs/s of Genser's §12.3 run type, the study layer's overhead against a bare
loop over cosim.simulate, and the scaling from 1 to 2 workers with threads and a Dask LocalCluster.

The run: nonlinear DMO + F_ex (genser2020 §10.2-10.3), ΔT = 1 ms, explicit Euler δt = 1e-5, 1 s, responses
ε_mono (saturated at 1) against the monolithic reference (computed once: one system, as in §12.3) and the 20 %
stability rule. Without cosim.PreStep the coupling is ZOH (a proxy of the pre-step run: the same units, micro
steps and responses; the pre-step adds its own per-step cost); the full-size §12.3 times are projected from the
measured runs/s. ``--full`` (or ``--only-full``) runs Genser's studies with the real cosim.PreStep as
examples/genser_doe.py builds them: §12.2 (512 runs) and the rows of §12.3 the pre-step supports today (RLS with
n_a = n_b = 1: 4 410 of 17 640; MOESP: none yet), and projects the thesis's full run counts from the measured rate.

Run: .venv/bin/python benchmarks/doe.py [--runs 200] [--full | --only-full] [--workers 2] [--stride 1]
     .venv/bin/python benchmarks/doe.py --scaling [--runs 200] [--repeats 3]   (processes and Dask, 1 -> 2 workers)
(figures in benchmarks/README.md)
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import tempfile
import time

import cosim
from cosim import doe

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
import genser_doe  # noqa: E402

RLS_RUNS, MOESP_RUNS, TARGET_S = 17640, 7056, 120.0


def build(p):
    return dict(system=genser_doe._nonlinear_dmo(), t_end=1.0, H=1e-3, approximation=cosim.ZOH(),
                solver=cosim.Euler(h=1e-5))


def responses(res, ref):
    return {"eps_mono_sat": doe.eps_mono(res, ref, saturate=1.0), "stable": doe.amplitude_stable(res)}


def cpu():
    t = os.times()
    return t.user + t.system


def bare_loop(n):
    """What a user writes by hand: the reference once, then simulate + responses per run."""
    t0 = time.perf_counter()
    kw = build({"i": 0})
    ref = cosim.simulate_monolithic(kw["system"], 1.0, t_eval=genser_doe.np.linspace(0, 1.0, 1001))
    rows = []
    for i in range(n):
        kw = build({"i": i})
        system = kw.pop("system")
        try:
            res = cosim.simulate(system, **kw)
            status = "ok"
        except (cosim.DivergenceError, cosim.SolverError) as exc:
            res, status = exc.result, type(exc).__name__
        rows.append(dict(responses(res, ref), status=status))
    return time.perf_counter() - t0, rows


def study(n):
    return doe.Study(build, {"i": list(range(n))}, responses=responses, reference=True)


def timed_study(n, **run):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        df = study(n).run(checkpoint=os.path.join(d, "s.sqlite"), **run)
        return time.perf_counter() - t0, df


def dask_time(n, workers, processes, repeats=3):
    """A LocalCluster of ``workers`` single-thread workers: in-process threads (processes=False; the scheduler, the
    client and the workers share one GIL) or worker processes (the workers build the runs from their parameters and
    keep the broadcast reference; only parameters and result rows travel). Best of ``repeats``: (wall, CPU seconds
    of this process: client and scheduler, plus the workers when in-process)."""
    import distributed
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=processes,
                                  dashboard_address=None) as cl, distributed.Client(cl) as client:
        study(4).run(backend=client)                                   # warm-up
        best = (float("inf"), float("inf"), 0.0)
        for _ in range(repeats):
            c0, w0 = cpu(), (sum(client.run(cpu).values()) if processes else 0.0)
            wall = timed_study(n, backend=client)[0]
            w1 = sum(client.run(cpu).values()) if processes else 0.0
            best = min(best, (wall, cpu() - c0, w1 - w0))
        return best


def busy(df, wall, workers):
    """Worker busy fraction: the co-simulations' own time (the rows' wall) over workers x the study's wall time."""
    return float(df["wall"].sum()) / (workers * wall)


def best_of(n, repeats, **run):
    """(wall, CPU of this process, table) of the fastest of ``repeats`` studies of ``n`` runs, after a warm-up."""
    study(4).run(**run)
    best = None
    for _ in range(repeats):
        c0 = cpu()
        wall, df = timed_study(n, **run)
        if best is None or wall < best[0]:
            best = (wall, cpu() - c0, df)
    return best


def scaling(n, repeats=3):
    """Processes and Dask (LocalCluster of worker processes): 1 and 2 workers, best of ``repeats`` each, side by
    side; runs/s, speed-up, the main process's CPU per run (the study layer's per-run work in the parent) and the
    workers' busy fraction. Target on 2 cores: 2 workers >= 1.9x one (issue 28)."""
    print(f"scaling, {n} runs, best of {repeats}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    pools = [("processes", lambda w: dict(backend="processes", workers=w), None)]
    try:
        import distributed
        pools.append(("Dask LocalCluster (processes)", None, distributed))
    except ImportError:
        print("Dask: distributed is not installed")
    for name, kw, dist in pools:
        res = {}
        for w in (1, 2):
            if dist is None:
                res[w] = best_of(n, repeats, **kw(w))
            else:
                with dist.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                       dashboard_address=None) as cl, dist.Client(cl) as client:
                    res[w] = best_of(n, repeats, backend=client)
        (t1, c1, df1), (t2, c2, df2) = res[1], res[2]
        print(f"{name}: 1 worker {n / t1:.1f} runs/s (busy {busy(df1, t1, 1):.0%}), 2 workers {n / t2:.1f} runs/s "
              f"(busy {busy(df2, t2, 2):.0%}): speed-up {t1 / t2:.2f}x (target >= 1.9x); parent CPU "
              f"{c2 / n * 1e3:.2f} ms/run; co-simulation {df2['wall'].median() * 1e3:.2f} ms/run (median)")


def full(workers, stride=1):
    """Genser's studies with the real cosim.PreStep (examples/genser_doe.py): §12.2 (512 runs, exact IJs, continuous)
    and the §12.3 rows today's pre-step supports; the thesis's 17 640 / 7 056 runs projected from the measured
    rate."""
    if not genser_doe.have_prestep():
        print("--full: skipped, cosim.PreStep is not available in this installation")
        return 0
    print(f"full-size studies, backend threads, {workers} workers, load average {os.getloadavg()[0]:.1f}")
    rates = {}
    for name, total in (("12.2", 512), ("rls", RLS_RUNS), ("moesp", MOESP_RUNS)):
        design, why = genser_doe.supported(name, doe.full_factorial(genser_doe.STUDIES[name][0]))
        if len(design) == 0:
            print(f"§{name}: none of the {total} runs is runnable yet ({why})")
            continue
        s = genser_doe.make_study(name)
        if stride > 1:   # every stride-th run of the thesis's design (all factor levels, a fraction of the runs)
            s = doe.Study(s.build, design=s.table.iloc[::stride].reset_index(drop=True), responses=s.responses,
                          reference=True)
            total = len(s)
        with tempfile.TemporaryDirectory() as d:
            t0 = time.perf_counter()
            df = s.run(backend="threads", workers=workers, checkpoint=os.path.join(d, "s.sqlite"), progress=True)
            wall = time.perf_counter() - t0
        rates[name] = len(df) / wall
        print(f"§{name}: {len(df)} of {total} runs in {wall:.1f} s = {rates[name]:.1f} runs/s, median co-simulation "
              f"{df['wall'].median() * 1e3:.1f} ms/run; status {({k: int(v) for k, v in df['status'].value_counts().items()})}")
        if stride > 1:
            full_total = {"12.2": 512, "rls": RLS_RUNS, "moesp": MOESP_RUNS}[name]
            print(f"   every {stride}th run; all {full_total} at this rate: {full_total / rates[name]:.0f} s "
                  f"(target <= {TARGET_S:.0f} s)")
        elif len(df) < total:
            print(f"   left out: {total - len(df)} runs ({why}); all {total} at this rate: {total / rates[name]:.0f} s "
                  f"(target <= {TARGET_S:.0f} s)")
        else:
            print(f"   target <= {TARGET_S:.0f} s: {'met' if wall <= TARGET_S else 'not met'}")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--full", action="store_true", help="Genser's full-size studies (needs cosim.PreStep)")
    ap.add_argument("--only-full", action="store_true", help="only the full-size studies")
    ap.add_argument("--workers", type=int, default=2, help="threads of the full-size studies")
    ap.add_argument("--stride", type=int, default=1, help="full-size studies: run every stride-th run only")
    ap.add_argument("--scaling", action="store_true", help="only the 1 -> 2 worker scaling of processes and Dask")
    ap.add_argument("--repeats", type=int, default=3, help="best of how many (--scaling)")
    args = ap.parse_args(argv)
    n = args.runs
    if args.scaling:
        return scaling(n, args.repeats)
    if args.only_full:
        return full(args.workers, args.stride)
    print(f"cosim {cosim.__version__}, {os.cpu_count()} cores; run: nonlinear DMO + F_ex, ZOH, Euler δt = 1e-5, "
          f"ΔT = 1 ms, 1 s; {n} runs per measurement")
    build({"i": 0})
    study(2).run()                                                     # warm-up
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (wall times need a quiet machine; the "
          "CPU time of this process is less sensitive to the load)")
    t_bare = c_bare = t_ser = c_ser = float("inf")
    for _ in range(3):                                                 # interleaved, best of 3
        c0 = cpu()
        t_bare = min(t_bare, bare_loop(n)[0])
        c1 = cpu()
        t_ser = min(t_ser, timed_study(n)[0])
        c2 = cpu()
        c_bare, c_ser = min(c_bare, c1 - c0), min(c_ser, c2 - c1)
    print(f"bare loop over cosim.simulate (1 core): {t_bare / n * 1e3:.2f} ms/run wall = {n / t_bare:.1f} runs/s; "
          f"CPU {c_bare / n * 1e3:.2f} ms/run")
    print(f"study, serial, SQLite checkpoint:       {t_ser / n * 1e3:.2f} ms/run wall, CPU {c_ser / n * 1e3:.2f} "
          f"ms/run; overhead of the study layer: wall {(t_ser / t_bare - 1) * 100:+.1f} %, CPU "
          f"{(c_ser / c_bare - 1) * 100:+.1f} % = {(c_ser - c_bare) / n * 1e6:.0f} us/run (target <= 5 %)")
    t1 = timed_study(n, backend="threads", workers=1)[0]
    t2 = timed_study(n, backend="threads", workers=2)[0]
    print(f"threads: 1 worker {n / t1:.1f} runs/s, 2 workers {n / t2:.1f} runs/s: scaling {t1 / t2:.2f}x "
          "(target >= 1.7x)")
    try:
        for procs in (False, True):
            (d1, m1, w1), (d2, m2, w2) = dask_time(n, 1, procs), dask_time(n, 2, procs)
            what = "processes" if procs else "threads, in-process"
            print(f"Dask LocalCluster ({what}, default chunksize, best of 3): 1 worker {n / d1:.1f} runs/s, 2 workers "
                  f"{n / d2:.1f} runs/s: scaling {d1 / d2:.2f}x (target >= 1.7x); CPU of the main process "
                  f"{m2 / n * 1e3:.2f} ms/run{'' if procs else ' (incl. the in-process workers)'}")
            if procs:   # load-insensitive ceiling: 1 worker is bound by its own CPU, 2 by the CPU of 2 cores
                c1, c2 = w1 / n, (m2 + w2) / n
                print(f"   CPU per run: workers {w2 / n * 1e3:.2f} ms, main {m2 / n * 1e3:.2f} ms; on 2 free cores "
                      f"at most {2 / c2:.0f} runs/s with 2 workers against {1 / c1:.0f} with 1: <= "
                      f"{2 * c1 / c2:.2f}x")
    except ImportError:
        print("Dask: distributed is not installed")
    rate = n / t2
    ideal = 2 * n / c_ser
    print(f"runs/s of 2 fully used cores from the serial study's CPU time: {ideal:.1f}")
    for name, runs in (("§12.3 RLS", RLS_RUNS), ("§12.3 MOESP", MOESP_RUNS)):
        est, est_cpu = runs / rate, runs / ideal
        print(f"{name} ({runs} runs), ZOH proxy: {est:.0f} s at the measured {rate:.1f} runs/s (2 threads), "
              f"{est_cpu:.0f} s on 2 free cores (target <= {TARGET_S:.0f} s); per-run budget for the target: "
              f"{2 * TARGET_S / runs * 1e3:.1f} ms of one core")
    if args.full:
        full(args.workers, args.stride)
    return 0


if __name__ == "__main__":
    sys.exit(main())
