"""DoE study layer benchmark (issue 15): runs/s of Genser's §12.3 run type, the study layer's overhead against a bare
loop over cosim.simulate, and the scaling from 1 to 2 workers of processes, Dask and threads (issue 28 part 5).

The run: nonlinear DMO + F_ex (genser2020 §10.2-10.3), ΔT = 1 ms, explicit Euler δt = 1e-5, 1 s, responses
ε_mono (saturated at 1) against the monolithic reference (computed once: one system, as in §12.3) and the 20 %
stability rule. Without cosim.PreStep the coupling is ZOH (a proxy of the pre-step run: the same units, micro
steps and responses; the pre-step adds its own per-step cost); the full-size §12.3 times are projected from the
measured runs/s. ``--full`` (or ``--only-full``) runs Genser's studies with the real cosim.PreStep as
examples/genser_doe.py builds them: §12.2 (512 runs) and the rows of §12.3 the pre-step supports today (RLS with
n_a = n_b = 1: 4 410 of 17 640; MOESP: none yet), and projects the thesis's full run counts from the measured rate.

Default: the study layer's per-run overhead (serial study against a bare loop), then 1 and 2 workers of processes,
Dask (a LocalCluster of worker processes with Dask's default settings, and cosim.doe.local_cluster with
DASK_SETTINGS) and threads, interleaved, best of N: runs/s, speed-up, busy fraction, the CPU per run of each kind
of thread (the runs, the workers' other threads, the study layer, the study process's other threads), the share of
CPU that is not the runs' and the speed-up the measured CPU times allow on two free cores (about 60 s on a quiet
machine; QUICK=1: 120 runs per study, best of 2, about 30 s).

On a machine with more cores (the 16-core target of issue 28): ``--counts 1,2,4,8,16`` measures processes,
cosim.doe.local_cluster and threads (``--backends processes,dask`` for fewer) at each count, interleaved, with the
table compared across counts; ``--study rls`` runs every k-th run of Genser's §12.3 RLS pre-step study instead of the
ZOH proxy; ``--ceiling`` adds what independent processes reach (the runs' own slowdown when w run at once bounds
every backend); ``--timeline`` shows where a Dask study's time goes on each worker (Dask's task stream). Both
modes first print the study's fixed start (building it, its definition, the checkpoint, the first reference).
On a machine with few cores, ``--study wait`` runs that wait 10 ms instead of computing: 16 workers need under a
core, so ``--counts 1,16`` measures what the dispatch, the start and the tail cost at 16 workers (the ceiling is
16x); ``--walls K`` prints the wall times of K studies in a row, for an A/B of two checkouts run alternately.

Run: .venv/bin/python benchmarks/doe.py [--runs 300] [--repeats 3] [--full | --only-full] [--workers 2] [--stride 1]
     .venv/bin/python benchmarks/doe.py --counts 1,8,16 --study rls --runs 1764 --repeats 2 --ceiling --timeline
     .venv/bin/python benchmarks/doe.py --counts 16 --study wait --runs 1764 --walls 3 --backends dask
     QUICK=1 .venv/bin/python benchmarks/doe.py
(figures in benchmarks/README.md)
"""
from __future__ import annotations

import argparse
import functools
import os
import pathlib
import re
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]   # this checkout's cosim, here and in the worker processes
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
import cosim  # noqa: E402
import genser_doe  # noqa: E402
from cosim import doe  # noqa: E402

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


def proxy_study(n):
    return doe.Study(build, {"i": list(range(n))}, responses=responses, reference=True)


@functools.lru_cache(maxsize=1)
def _rls_full():
    return genser_doe.make_study("rls")


def rls_study(n):
    """Genser's §12.3 RLS pre-step study (examples/genser_doe.py): ``n`` runs spread evenly over its 17 640 (every
    k-th run, all factor levels), as the issue's 16-core figures were measured."""
    full_study = _rls_full()
    stride = max(1, len(full_study) // n)
    return doe.Study(full_study.build, design=full_study.table.iloc[::stride].iloc[:n].reset_index(drop=True),
                     responses=full_study.responses, reference=True)


#: --study wait: the seconds each run waits in its build (not CPU), on top of a short co-simulation
WAIT_S = 0.010


def _waiting_build(seconds, p):
    time.sleep(seconds)
    return dict(build(p), t_end=0.05)


def wait_study(n):
    """Runs that wait ``WAIT_S`` (a sleep in their build) and then co-simulate 50 macro steps (~0.5 ms of CPU): what
    many workers on many cores look like to the study layer and to Dask, on a machine with few cores. The workers
    need almost no CPU, so w workers can reach w x on 2 cores unless the dispatch, the study's start or the tail
    (workers ending apart) costs time: a measure of those alone, with the ideal w x as its ceiling."""
    return doe.Study(functools.partial(_waiting_build, WAIT_S), {"i": list(range(n))}, responses=responses,
                     reference=True)


study = proxy_study          # the study the measurements run (--study)


def timed_study(n, **run):
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        df = study(n).run(checkpoint=os.path.join(d, "s.sqlite"), **run)
        return time.perf_counter() - t0, df


def busy(df, wall, workers):
    """Worker busy fraction: the co-simulations' own time (the rows' wall; --study wait: plus each run's wait) over
    workers x the study's wall time."""
    waits = len(df) * WAIT_S if study is wait_study else 0.0
    return (float(df["wall"].sum()) + waits) / (workers * wall)


def _ticks(path):
    """CPU seconds (user + system) in a /proc stat file; 0 for a process or thread that is gone."""
    try:
        with open(path) as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def worker_cpu(threads):
    """CPU seconds of the worker processes and of their task threads: ``threads`` = {pid: task thread ids}
    (Linux /proc) -> ({pid: seconds}, {(pid, tid): seconds})."""
    procs = {pid: _ticks(f"/proc/{pid}/stat") for pid in threads}
    tasks = {(pid, tid): _ticks(f"/proc/{pid}/task/{tid}/stat") for pid, tids in threads.items() for tid in tids}
    return procs, tasks


def worker_split(before, after):
    """The worker processes' CPU between two :func:`worker_cpu` snapshots, split into their task threads (the
    co-simulations; a task thread that started in between counts from 0) and their other threads (a Dask worker's
    event loop, heartbeats, monitors)."""
    total = sum(after[0].get(pid, 0.0) - t for pid, t in before[0].items())
    runs = sum(t - before[1].get(key, 0.0) for key, t in after[1].items())
    return runs, total - runs


class Processes:
    """backend="processes" with ``workers``: the pool is started by the warm-up study and kept for the next ones."""

    def __init__(self, workers):
        self.workers, self.kw = workers, dict(backend="processes", workers=workers)

    def __enter__(self):
        study(2 * self.workers).run(**self.kw)                       # warm-up: starts the pool
        return self

    def __exit__(self, *exc):
        pass

    def task_threads(self):
        """{pid: [thread ids]} of the threads that run the tasks (a pool process runs them in its main thread)."""
        from cosim.doe import backends
        ex = backends._idle.get(self.workers)
        return {pid: [pid] for pid in (getattr(ex, "_processes", None) or {})}


class Threads(Processes):
    def __init__(self, workers):
        self.workers, self.kw = workers, dict(backend="threads", workers=workers)

    def task_threads(self):
        return {}                                                    # counted in this process


def _dask_task_threads():
    import threading
    return os.getpid(), [t.native_id for t in threading.enumerate() if "Dask-Default-Threads" in t.name]


class DaskCluster(Processes):
    """A LocalCluster of ``workers`` single-thread worker processes, started and warmed up outside the timing: with
    Dask's default settings as a user creates one (``cosim_settings=False``), or cosim.doe.local_cluster (its
    DASK_SETTINGS). Closed after each measurement: an idle cluster's scheduler, nannies and workers take CPU."""

    def __init__(self, workers, cosim_settings):
        self.workers, self.cosim_settings = workers, cosim_settings

    def __enter__(self):
        import distributed
        if self.cosim_settings:
            self.cluster = doe.local_cluster(self.workers)
        else:
            self.cluster = distributed.LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                                    dashboard_address=None)
        self.client = distributed.Client(self.cluster)
        self.kw = dict(backend=self.client)
        study(2 * self.workers).run(**self.kw)
        return self

    def __exit__(self, *exc):
        self.client.close()
        self.cluster.close()

    def task_threads(self):
        return dict(self.client.run(_dask_task_threads).values())


def _kinds():
    kinds = [("processes", Processes)]
    try:
        import distributed  # noqa: F401
        kinds += [("Dask LocalCluster, Dask's defaults", lambda w: DaskCluster(w, False)),
                  ("Dask doe.local_cluster (DASK_SETTINGS)", lambda w: DaskCluster(w, True))]
    except ImportError:
        print("Dask: distributed is not installed")
    return kinds + [("threads", Threads)]


def _measure(pool, n):
    """One study on ``pool`` -> wall, its rows, and CPU seconds: runs (worker task threads), the workers' other
    threads, this process's main thread (the study layer) and its other threads (Dask: client, scheduler,
    nannies; threads: the runs)."""
    threads = pool.task_threads()                    # (asking the workers costs this process CPU: not timed)
    w0, m0, c0 = worker_cpu(threads), time.thread_time(), cpu()
    wall, df = timed_study(n, **pool.kw)
    m1, c1 = time.thread_time(), cpu()
    w1 = worker_cpu({pid: set(tids) | set(pool.task_threads().get(pid, ())) for pid, tids in threads.items()})
    runs, wother = worker_split(w0, w1)
    main = m1 - m0
    return dict(wall=wall, df=df, runs=runs, wother=wother, main=main, pother=c1 - c0 - main)


def scaling(n, repeats):
    """1 and 2 workers of each backend, interleaved (1, 2, 1, 2, ...: a slow phase of the shared machine slows both),
    best of ``repeats``: runs/s, speed-up, the workers' busy fraction (their co-simulation time over workers x
    wall), the CPU per run of each kind of thread at 2 workers (CPU seconds do not depend on the machine's load as
    wall times do) and the speed-up those CPU times allow on two free cores. Target on 2 cores: 2 workers >= 1.9x
    one (issue 28)."""
    print(f"\nscaling, {n} runs per study, 1 and 2 workers interleaved, best of {repeats}")
    print("| backend | 1 worker | 2 workers | speed-up | busy 1 / 2 | CPU/run at 2 workers: runs + workers' other "
          "threads + study layer + parent's other threads | not runs | CPU ceiling on 2 free cores |")
    print("|---|---|---|---|---|---|---|---|")
    for name, kind in _kinds():
        best = {1: None, 2: None}
        for _ in range(repeats):
            for w in (1, 2):
                with kind(w) as pool:    # one cluster at a time: an idle Dask cluster takes CPU too
                    m = _measure(pool, n)
                if best[w] is None or m["wall"] < best[w]["wall"]:
                    best[w] = m
        m1, m2 = best[1], best[2]
        t1, t2 = m1["wall"], m2["wall"]
        b1, b2 = busy(m1["df"], t1, 1), busy(m2["df"], t2, 2)
        total = lambda m: m["runs"] + m["wother"] + m["main"] + m["pother"]   # noqa: E731
        if kind is Threads:   # the runs are threads of this process: its CPU is theirs
            ceiling = 2 * total(m1) / total(m2)
            split = f"{total(m2) / n * 1e3:.3f} ms (all in this process; study layer {m2['main'] / n * 1e3:.3f})"
            extra = "-"
        else:                 # 1 worker: bound by its task thread's CPU per run; 2 workers: by the CPU of 2 cores
            ceiling = 2 * m1["runs"] / total(m2)
            split = " + ".join(f"{m2[k] / n * 1e3:.3f}" for k in ("runs", "wother", "main", "pother")) + \
                f" = {total(m2) / n * 1e3:.3f} ms"
            extra = f"{1 - m2['runs'] / total(m2):.1%}"
        print(f"| {name} | {n / t1:.1f} runs/s | {n / t2:.1f} runs/s | **{t1 / t2:.2f}x** | {b1:.0%} / {b2:.0%} | "
              f"{split} | {extra} | {ceiling:.2f}x |", flush=True)
    print(f"co-simulation {m2['df']['wall'].median() * 1e3:.2f} ms/run (median); target: 2 workers >= 1.9x one for "
          "processes and Dask. CPU/run (Linux /proc): the worker processes' task threads (runs), their other threads, "
          "this process's main thread (the study layer) and its other threads (Dask: client, the LocalCluster's "
          "scheduler and nannies); not runs: the share of all CPU at 2 workers that is not the runs' (at most 5 % for 1.9x); "
          "CPU ceiling: 2 x (task-thread CPU per run, 1 worker) / (all CPU per run, 2 workers)",
          flush=True)


def scaling_counts(n, repeats, counts, only=None):
    """Processes and cosim.doe.local_cluster at each worker count of ``counts``, threads at the smallest and largest,
    best of ``repeats`` (counts interleaved): runs/s, speed-up against the smallest count of the same backend (1
    worker where ``counts`` has 1), busy fraction,
    the share of all CPU that is not the runs', and whether the table (without the per-run wall) equals the one of
    processes x 1 worker. Target on 16 cores: 16 workers >= 13x one for processes and Dask (issue 28)."""
    kinds = [(name, kind) for name, kind in _kinds() if "Dask's defaults" not in name
             and (only is None or name.split()[0].lower() in only)]
    print(f"\nscaling, {n} runs per study, workers {', '.join(map(str, counts))} interleaved, best of {repeats}; "
          f"{load()}")
    print("| backend | workers | runs/s | speed-up | busy | not runs (share of all CPU) | table identical |")
    print("|---|---|---|---|---|---|---|")
    ref_table = None
    for name, kind in kinds:
        ws = sorted({min(counts), max(counts)}) if kind is Threads else counts
        best, same = {}, {}
        for _ in range(repeats):
            for w in ws:
                with kind(w) as pool:
                    m = _measure(pool, n)
                table = m["df"].drop(columns=["wall"])
                ref_table = table if ref_table is None else ref_table
                same[w] = same.get(w, True) and table.equals(ref_table)     # every repeat, not the best only
                if w not in best or m["wall"] < best[w]["wall"]:
                    best[w] = m
        for w in ws:
            m = best[w]
            total = m["runs"] + m["wother"] + m["main"] + m["pother"]
            other = "-" if kind is Threads else f"{1 - m['runs'] / total:.1%}"
            print(f"| {name} | {w} | {n / m['wall']:.1f} | **{best[ws[0]]['wall'] / m['wall']:.2f}x** | "
                  f"{busy(m['df'], m['wall'], w):.0%} | {other} | {'yes' if same[w] else 'NO'} |", flush=True)
    print(f"co-simulation {best[ws[0]]['df']['wall'].median() * 1e3:.2f} ms/run (median, 1 worker); target on 16 "
          "cores: 16 workers >= 13x one for processes and Dask", flush=True)


def _simulate_only(n, runs):
    """A worker of :func:`ceiling`: co-simulations of runs ``runs`` of the study, nothing else (no study layer, no
    responses); "ready" once warmed up, then waits for "go" on stdin, then prints its time, the sum of its runs'
    times and their number."""
    s = study(n)
    kws = [s.build(s.params(i)) for i in runs]

    def simulate(kw):
        try:
            cosim.simulate(**kw)
        except (cosim.DivergenceError, cosim.SolverError):   # a study's row too: its time counts
            pass

    for kw in kws[:3]:                                                 # warm-up
        simulate(kw)
    print("ready", flush=True)
    sys.stdin.readline()
    t0, each = time.perf_counter(), []
    for kw in kws:
        t = time.perf_counter()
        simulate(kw)
        each.append(time.perf_counter() - t)
    print(f"{time.perf_counter() - t0} {sum(each)} {len(each)}", flush=True)


def ceiling(n, counts, study_name):
    """What the machine allows: w independent processes, each running every w-th of the study's co-simulations in a
    loop (no study layer, no dispatch, no responses), started together. The runs' slowdown (their mean time when w
    run at once over their mean time alone: shared caches, memory bandwidth, clock frequency) bounds every backend:
    ceiling = w x (mean time alone) / (mean time with w). The wall-clock speed-up of the processes is lower where
    their static shares of the runs differ in cost (the study's runs do: a dispatching backend balances them)."""
    import subprocess
    print(f"\nceiling: {n} co-simulations split over w independent processes (no study layer); {load()}")
    print("| processes | runs/s | wall speed-up (static shares) | mean ms/run | ceiling: w x mean alone / mean |")
    print("|---|---|---|---|---|")
    base = None
    for w in counts:
        procs = [subprocess.Popen([sys.executable, __file__, "--simulate-only", ",".join(map(str, range(i, n, w))),
                                   "--study", study_name, "--runs", str(n)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
                 for i in range(w)]
        for p in procs:
            assert p.stdout.readline().strip() == "ready"
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [[float(x) for x in p.stdout.readline().split()] for p in procs]
        wall = time.perf_counter() - t0
        for p in procs:
            p.wait()
        mean = sum(o[1] for o in outs) / sum(o[2] for o in outs)
        base = base or (n / wall, mean)
        print(f"| {w} | {n / wall:.1f} | {n / wall / base[0]:.2f}x | {mean * 1e3:.2f} | **{w * base[1] / mean:.2f}x** |",
              flush=True)


def dask_timeline(n, workers):
    """Where a Dask study's time goes on each worker (Dask's task stream): before its first task (the study's
    start: reference, plan scattered, first dispatch), its tasks (the runs and Dask's per-task work in the task
    thread), the gaps between its tasks (dispatch latency) and after its last task (the tail)."""
    import distributed
    with DaskCluster(workers, True) as pool:
        with distributed.get_task_stream(pool.client) as ts:
            t0 = time.time()
            wall, df = timed_study(n, **pool.kw)
            t1 = time.time()
    per = {}
    for rec in ts.data:
        for ss in rec.get("startstops", ()):
            if ss.get("action") == "compute":
                per.setdefault(rec["worker"], []).append((ss["start"], ss["stop"]))
    if not per:
        print("Dask timeline: no task stream")
        return
    mean = lambda xs: sum(xs) / len(xs)   # noqa: E731
    first = [min(a for a, _ in v) - t0 for v in per.values()]
    tasks = [sum(b - a for a, b in v) for v in per.values()]
    gaps = [sum(max(0.0, a2 - b1) for (_, b1), (a2, _) in zip(sorted(v), sorted(v)[1:])) for v in per.values()]
    tail = [t1 - max(b for _, b in v) for v in per.values()]
    print(f"\nDask timeline, {workers} workers, {n} runs: study {t1 - t0:.3f} s, {len(ts.data)} tasks; per worker "
          f"(min / mean / max): before the first task {min(first):.3f} / {mean(first):.3f} / {max(first):.3f} s, "
          f"tasks {mean(tasks):.3f} s, gaps between tasks {min(gaps):.3f} / {mean(gaps):.3f} / {max(gaps):.3f} s, "
          f"after the last task {min(tail):.3f} / {mean(tail):.3f} / {max(tail):.3f} s (the least: the study's end "
          f"after its last batch); the runs' own time {busy(df, 1.0, workers):.3f} s per worker", flush=True)


def walls(n, workers, k, only=None, divisors=None):
    """The wall times of ``k`` studies in a row on one pool or cluster of ``workers`` (after its warm-up study), per
    backend: run alternately from two checkouts, an A/B of two versions of the library on the same machine.
    ``divisors``: the studies alternate over these values of ``runner.TAIL_DIVISOR`` (the smallest last batch, a
    fraction of the batch target), ``k`` studies each: an A/B of the tail rule within one run."""
    from cosim.doe import runner
    default = runner.TAIL_DIVISOR
    divisors = divisors or [default]
    for name, kind in _kinds():
        if "Dask's defaults" in name or kind is Threads or (only and name.split()[0].lower() not in only):
            continue
        times = {d: [] for d in divisors}
        with kind(workers) as pool:
            try:
                for _ in range(k):
                    for d in divisors:
                        runner.TAIL_DIVISOR = d
                        times[d].append(timed_study(n, **pool.kw)[0])
            finally:
                runner.TAIL_DIVISOR = default
        for d, ts in times.items():
            label = f"{name} (tail divisor {d})" if len(divisors) > 1 else name
            print(f"walls | {label} | {workers} | " + " ".join(f"{t:.3f}" for t in ts), flush=True)


def read_scaling(path):
    """The rows of the scaling tables in a saved output of ``--counts`` -> {backend: [(workers, speed-up, busy)]}."""
    rows = {}
    for line in pathlib.Path(path).read_text().splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and cells[1].isdigit():
            backend = cells[0].split()[0].lower()
            rows.setdefault(backend, []).append((int(cells[1]), float(cells[3].rstrip("x")), float(cells[4].rstrip("%"))))
    return rows


def plot_scaling(paths, out, ax=None):
    """Speed-up over workers from saved outputs of ``--counts`` (benchmarks/results/doe_16cores_*.txt): one line per
    backend and file, the ideal and the issue's 13x target at 16 workers."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    colours = {"processes": "C0", "dask": "C1", "threads": "C2"}
    names = {"dask": "Dask local_cluster"}
    styles = ["o-", "s--", "^:"]
    wmax = 1
    for k, path in enumerate(paths):
        label = pathlib.Path(path).stem.rsplit("_", 1)[-1].replace("call", "call ")
        dated = re.match(r"# (\d{4}-\d\d-\d\d)", pathlib.Path(path).read_text())
        label += f", {dated[1]}" if dated else ""
        for backend, rows in read_scaling(path).items():
            w, speedup, _ = zip(*sorted(rows))
            wmax = max(wmax, *w)
            ax.plot(w, speedup, styles[k % len(styles)], color=colours.get(backend, "k"), ms=5,
                    label=f"{names.get(backend, backend)} ({label})")
    ax.plot([1, wmax], [1, wmax], color="0.6", lw=1, label="ideal")
    ax.plot([wmax], [13], "k*", ms=14, mfc="none", label="target at 16 workers (13x)")
    ax.set(xscale="log", yscale="log", xlabel="workers (one core each)", ylabel="speed-up over 1 worker [-]",
           title="Genser's §12.3 RLS study, 1 764 runs of ~10 ms, 16-core VM")
    ax.set_xticks([1, 2, 4, 8, 16], labels=["1", "2", "4", "8", "16"])
    ax.set_yticks([1, 2, 4, 8, 13, 16], labels=["1", "2", "4", "8", "13", "16"])
    ax.minorticks_off()
    ax.grid(True, color="0.9")
    ax.legend(fontsize="small")
    if fig is not None:
        fig.savefig(out, dpi=110)
        print(f"wrote {out}")
    return ax


def overhead(n, repeats):
    """The study layer against a bare loop over cosim.simulate (1 core), interleaved, best of ``repeats``."""
    t_bare = c_bare = t_ser = c_ser = float("inf")
    for _ in range(repeats):
        c0 = cpu()
        t_bare = min(t_bare, bare_loop(n)[0])
        c1 = cpu()
        t_ser = min(t_ser, timed_study(n)[0])
        c2 = cpu()
        c_bare, c_ser = min(c_bare, c1 - c0), min(c_ser, c2 - c1)
    print(f"bare loop over cosim.simulate (1 core): {t_bare / n * 1e3:.2f} ms/run wall = {n / t_bare:.1f} runs/s; "
          f"CPU {c_bare / n * 1e3:.2f} ms/run")
    print(f"study, serial, SQLite checkpoint:       {t_ser / n * 1e3:.2f} ms/run wall, CPU {c_ser / n * 1e3:.2f} "
          f"ms/run; per-run overhead of the study layer: wall {(t_ser - t_bare) / n * 1e6:+.0f} us "
          f"({(t_ser / t_bare - 1) * 100:+.1f} %), CPU {(c_ser - c_bare) / n * 1e6:+.0f} us "
          f"({(c_ser / c_bare - 1) * 100:+.1f} %; target <= 5 %)", flush=True)
    return n / t_ser


def start(n, repeats):
    """The study's fixed start before its first batch goes out (best of ``repeats``): building the Study (its
    table, the table's hash), its definition (the checkpoint's identity: the runs' parameters, build and responses
    identified by source hash), opening the checkpoint, and the first run's reference, which the study's process
    computes for the worker processes. At 16 workers the whole study lasts 1.7-1.9 s: every 17 ms is 1 %."""
    from cosim.doe import checkpoint, runner
    best = {}
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as d:
            t = [time.perf_counter()]
            s = study(n)
            t.append(time.perf_counter())
            definition = s.definition()
            t.append(time.perf_counter())
            checkpoint.Checkpoint(os.path.join(d, "s.sqlite"), definition, {"n_runs": len(s)}).close()
            t.append(time.perf_counter())
            runner._seed(0, s.params, s.build, s._defaults(), s._ref_options, "start")
            t.append(time.perf_counter())
        for name, a, b in zip(("Study()", "definition", "checkpoint", "reference"), t, t[1:]):
            best[name] = min(best.get(name, float("inf")), b - a)
    print(f"study start, {n} runs, best of {repeats}: " + ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in best.items())
          + f"; {sum(best.values()) * 1e3:.1f} ms in all", flush=True)


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


def load():
    return f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores"


def main(argv=None):
    quick = os.environ.get("QUICK", "") not in ("", "0")
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=120 if quick else 300, help="runs per study")
    ap.add_argument("--repeats", type=int, default=2 if quick else 3, help="best of how many")
    ap.add_argument("--full", action="store_true", help="also Genser's full-size studies (needs cosim.PreStep)")
    ap.add_argument("--only-full", action="store_true", help="only the full-size studies")
    ap.add_argument("--workers", type=int, default=2, help="threads of the full-size studies")
    ap.add_argument("--stride", type=int, default=1, help="full-size studies: run every stride-th run only")
    ap.add_argument("--counts", help="worker counts of a scaling measurement only, e.g. 1,2,4,8,16 (16 cores)")
    ap.add_argument("--study", choices=["proxy", "rls", "wait"], default="proxy",
                    help="--counts: the ZOH proxy run, every k-th run of Genser's §12.3 RLS pre-step study, or runs "
                         "that wait 10 ms (many workers on few cores: the dispatch alone)")
    ap.add_argument("--ceiling", action="store_true", help="--counts: also the independent processes' ceiling")
    ap.add_argument("--backends", help="--counts: only these, e.g. processes,dask (default: with threads)")
    ap.add_argument("--timeline", action="store_true", help="--counts: also where a Dask study's time goes")
    ap.add_argument("--walls", type=int, metavar="K", help="--counts: only the wall times of K studies in a row at "
                    "the largest count (an A/B of two checkouts, run alternately)")
    ap.add_argument("--tail-divisors", help="--walls: alternate the studies over these smallest last batches "
                    "(1/K of the batch target, runner.TAIL_DIVISOR), e.g. 8,16,32")
    ap.add_argument("--plot", nargs="+", metavar="OUTPUT", help="draw the speed-ups of saved --counts outputs")
    ap.add_argument("--plot-out", default=str(ROOT / "docs" / "_static" / "doe_scaling_16cores.png"))
    ap.add_argument("--simulate-only", help=argparse.SUPPRESS)           # a worker of the ceiling measurement
    args = ap.parse_args(argv)
    global study
    study = {"rls": rls_study, "wait": wait_study}.get(args.study, proxy_study)
    if args.plot:
        plot_scaling(args.plot, args.plot_out)
        return 0
    if args.simulate_only:
        return _simulate_only(args.runs, [int(i) for i in args.simulate_only.split(",")])
    if args.counts:
        counts = sorted({int(c) for c in args.counts.split(",")})
        if args.walls:
            walls(args.runs, max(counts), args.walls, args.backends and args.backends.split(","),
                  args.tail_divisors and [int(d) for d in args.tail_divisors.split(",")])
            return 0
        print(f"cosim {cosim.__version__}; study {args.study}; {load()}{' (QUICK=1)' if quick else ''}")
        study(2).run()                                                 # warm-up (imports, caches)
        start(args.runs, 5)
        if args.ceiling:
            ceiling(args.runs, counts, args.study)
        scaling_counts(args.runs, args.repeats, counts, args.backends and args.backends.split(","))
        if args.timeline:
            dask_timeline(args.runs, max(counts))
        return 0
    if args.only_full:
        return full(args.workers, args.stride)
    n = args.runs
    t0 = time.perf_counter()
    print(f"cosim {cosim.__version__}; run: nonlinear DMO + F_ex, ZOH, Euler δt = 1e-5, ΔT = 1 ms, 1 s, one "
          f"reference; {load()}{' (QUICK=1)' if quick else ''}")
    study(2).run()                                                     # warm-up
    start(n, 5)
    rate = overhead(n, args.repeats)
    scaling(n, args.repeats)
    for name, runs in (("§12.3 RLS", RLS_RUNS), ("§12.3 MOESP", MOESP_RUNS)):
        print(f"{name} ({runs} runs), ZOH proxy, serial: {runs / rate:.0f} s (target <= {TARGET_S:.0f} s; divide by "
              "the speed-up for 2 workers)")
    print(f"{load()}; {time.perf_counter() - t0:.0f} s")
    if args.full:
        full(args.workers, args.stride)
    return 0


if __name__ == "__main__":
    sys.exit(main())
