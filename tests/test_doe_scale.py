"""A study at scale (issue 28, part 5; issue 30, part 4): runs handed out in batches sized from the measured time
per run, a process pool kept for the next study, the first run's reference computed once in the study's process and
sent to the workers, and the record limit of each run shared by the runs that run at once."""
import os
import sys

import numpy as np
import pandas as pd
import pytest

import cosim
from cosim import doe
from cosim.doe import backends, runner

sim = sys.modules["cosim.simulate"]


def _build(p):
    return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=0.1, H=1e-4, solver=cosim.Exact())


CKS = [1e5, 2e5, 3e5, 4e5]


def _shares(res, ref):
    """How many runs share the record limit with this run, and where it ran."""
    return {"share": sim.concurrent_runs(), "pid": os.getpid(), "env": os.environ.get("COSIM_CONCURRENT_RUNS", "")}


@pytest.mark.parametrize("backend, workers, share", [("serial", None, 1), ("threads", 2, 2), ("processes", 2, 2),
                                                     ("threads", 3, 3)])
def test_parallel_runs_share_the_record_limit(backend, workers, share):
    """Issue 30 part 4: a run of a study with n workers reserves at most 1/n of the record limit (worker processes
    get COSIM_CONCURRENT_RUNS = n, the threads of a pool count their pool); the study's own process keeps its
    environment."""
    before = os.environ.get("COSIM_CONCURRENT_RUNS")
    df = doe.Study(_build, {"ck": CKS}, responses=_shares).run(backend=backend, workers=workers)
    assert (df.share == share).all(), df[["share", "env"]]
    assert os.environ.get("COSIM_CONCURRENT_RUNS") == before
    if backend == "processes":
        assert (df.env == "2").all() and os.getpid() not in set(df.pid)


def test_dask_workers_share_the_record_limit_of_their_host():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        df = doe.Study(_build, {"ck": CKS}, responses=_shares).run(backend=client)
    assert (df.share == 2).all() and (df.env == "2").all()          # 2 worker processes x 1 thread on one host
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        df = doe.Study(_build, {"ck": CKS}, responses=_shares).run(backend=client)
    assert (df.share == 2).all() and (df.pid == os.getpid()).all()   # threads of this process: counted, env kept


def test_a_record_that_fits_one_run_but_not_two_fails_on_two_threads(monkeypatch):
    """The record of one run (1001 points x 11 doubles = 88 kB) fits a limit of 120 kB alone, not half of it."""
    monkeypatch.setattr(sim, "_record_limit", lambda: 120e3)
    alone = doe.Study(_build, {"ck": CKS}, responses=["growth"]).run()
    assert alone.status.isin(["ok", "unstable"]).all()
    two = doe.Study(_build, {"ck": CKS}, responses=["growth"]).run(backend="threads", workers=2)
    assert (two.status == "failed").all()
    assert two.message.str.contains("MemoryError").all() and two.message.str.contains("output_interval").all()


def test_batch_sizes():
    """A given chunksize as it is; otherwise one run per worker first, and no more batches in flight than workers
    until one has come back; then about the target time per batch from the median time per run of the recent
    batches' runs, less towards the end (1/(2 x workers) of what is left) but not under an eighth of the target;
    target 0: one run per batch."""
    fixed = runner.Batches(7, 2, 0.25)
    assert [fixed.next(100) for _ in range(4)] == [7, 7, 7, 7]
    assert fixed.window(4) == 4
    b = runner.Batches(None, 2, 0.25)
    assert b.window(4) == 2                                          # one batch per worker: its size is unknown
    assert [b.next(1000), b.next(999)] == [1, 1]                     # the measurement
    assert b.next(998) == 1                                          # nothing measured yet
    b.observe(1, 0.5)                                                # a slow first run (start-up)
    assert b.window(4) == 4                                          # measured: the backend's window
    b.observe(1, 0.005)
    b.observe(10, 0.05)
    assert b.next(998) == 50                                         # median 5 ms per run -> 0.25 s
    assert b.next(120) == 30                                         # towards the end: 120 / (2 x 2)
    assert b.next(20) == 6                                           # but not under 0.25 s / 8
    assert b.next(5) == 5
    warm = runner.Batches(None, 2, 0.25)                             # the one-run batches of fresh workers are
    [warm.next(1000) for _ in range(2)]                              # slow (20 ms); the first larger batch
    for n, seconds in [(1, 0.02), (1, 0.02), (50, 0.25)]:            # (5 ms per run) outweighs them
        warm.observe(n, seconds)
    assert warm.next(900) == 50
    one = runner.Batches(None, 4, 0.0)
    assert one.window(8) == 8                                        # (nothing to measure)
    one.observe(10, 0.01)
    assert [one.next(100) for _ in range(6)] == [1] * 6


def test_process_pool_is_kept_and_the_reference_computed_once(monkeypatch):
    """Two studies on processes run in the same worker processes (the pool is kept); the reference of a
    one-system study is computed once, in this process, and no worker computes one; the tables equal the serial
    ones (batches sized from the measured time: several runs per batch)."""
    backends._close_idle()                               # a fresh pool: its workers hold only these studies
    seeds = []
    real = runner._seed

    def seed(*args):
        out = real(*args)
        seeds.append(len(out))
        return out

    monkeypatch.setattr(runner, "_seed", seed)

    def responses(res, ref):
        from cosim.doe import runner as r
        return {"eps": doe.eps_mono(res, ref), "pid": os.getpid(),
                "computed": sum(st.computed for st in list(r._plans.values()))}

    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(), t_end=0.05, H=1e-3, solver=cosim.Euler(substeps=p["n"]))

    factors = {"n": list(range(1, 41))}
    serial = doe.Study(build, factors, responses=responses, reference=True).run()
    first = doe.Study(build, factors, responses=responses, reference=True).run(backend="processes", workers=2)
    pool = set(backends._idle[2]._processes)
    second = doe.Study(build, factors, responses=responses, reference=True).run(backend="processes", workers=2)
    assert seeds == [1, 1]
    assert (first.computed == 0).all() and (second.computed == 0).all()
    assert set(backends._idle[2]._processes) == pool and set(first.pid) | set(second.pid) <= pool
    assert os.getpid() not in pool
    for df in (first, second):
        pd.testing.assert_series_equal(df.eps, serial.eps)
        assert np.isfinite(df.eps).all()


def test_local_cluster_quiets_its_own_workers_only():
    """cosim.doe.local_cluster: single-thread worker processes that run under DASK_SETTINGS (no sampling profiler,
    slower monitors), the serial table on it; the Dask settings of this process (the user's) are unchanged."""
    distributed = pytest.importorskip("distributed")
    import dask
    before = {k: dask.config.get(k) for k in doe.DASK_SETTINGS}
    assert before["distributed.worker.profile.enabled"] is True   # Dask's default: the settings are not global
    with doe.local_cluster(2) as cluster, distributed.Client(cluster) as client:
        seen = client.run(lambda: ({k: dask.config.get(k) for k in doe.DASK_SETTINGS}, os.getpid()))
        assert len(seen) == 2 and {pid for _, pid in seen.values()} & {os.getpid()} == set()
        assert all(s == doe.DASK_SETTINGS for s, _ in seen.values())
        assert set(client.nthreads().values()) == {1}
        df = doe.Study(_build, {"ck": CKS}, responses=["growth"]).run(backend=client)
    assert {k: dask.config.get(k) for k in doe.DASK_SETTINGS} == before
    serial = doe.Study(_build, {"ck": CKS}, responses=["growth"]).run()
    pd.testing.assert_frame_equal(df.drop(columns="wall"), serial.drop(columns="wall"))


@pytest.mark.parametrize("kwargs, error, name", [(dict(workers=0), ValueError, "workers"),
                                                 (dict(workers=1.5), TypeError, "workers"),
                                                 (dict(workers=True), TypeError, "workers"),
                                                 (dict(workers=2, processes=False), ValueError, "processes"),
                                                 (dict(workers=2, threads_per_worker=2), ValueError,
                                                  "threads_per_worker")])
def test_local_cluster_refuses_bad_arguments(kwargs, error, name):
    pytest.importorskip("distributed")
    with pytest.raises(error, match=name):
        doe.local_cluster(**kwargs)


def _square(x):
    if x < 0:
        raise ValueError(f"negative: {x}")
    return x * x


def test_dask_sends_batches_together_and_reads_them_together(monkeypatch):
    """The Dask backend submits the batches of one feed in one message (client.map; a submit each reached the
    workers one after the other) and fetches the results of the tasks a wait finds finished in one gather (a
    future.result() per task was a round trip each, 1-27 ms on 16 busy workers, while the workers waited for their
    next batch); a task that failed is read on its own and raises its error."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        backend = backends.Dask(client)
        with monkeypatch.context() as m:
            m.setattr(client, "submit", lambda *a, **k: pytest.fail("a message per task"))
            futures = backend.submit_all(_square, [(1,), (2,), (3,)])
        distributed.wait(futures)
        assert backend.wait(futures, 1.0) == set(futures)
        monkeypatch.setattr(distributed.Future, "result", lambda *a, **k: pytest.fail("a round trip per task"))
        assert [backend.result(f) for f in futures] == [1, 4, 9]
        monkeypatch.undo()
        futures = backend.submit_all(_square, [(4,), (-1,)])
        distributed.wait(futures)
        assert backend.wait(futures, 1.0) == set(futures)
        assert backend.result(futures[0]) == 16
        with pytest.raises(ValueError, match="negative: -1"):
            backend.result(futures[1])
        backend.close()


def test_dask_places_tasks_on_the_workers_named():
    """submit_all(..., where): one message for all, each task held by its worker (who_has); a task whose
    worker is not in the cluster runs on another one (allow_other_workers)."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        backend = backends.Dask(client)
        w1, w2 = sorted(backend.slots)
        assert backend.slots == {w1: 1, w2: 1} and backend.workers == 2 and backend.window == 4
        futures = backend.submit_all(_square, [(1,), (2,), (3,), (4,)], where=[w1, w2, w1, "tcp://10.255.0.1:1"])
        distributed.wait(futures)
        held = client.who_has(futures)
        assert [list(held[f.key]) for f in futures[:3]] == [[w1], [w2], [w1]]
        assert list(held[futures[3].key])[0] in (w1, w2)
        backend.wait(futures, 1.0)
        assert [backend.result(f) for f in futures] == [1, 4, 9, 16]
        cl.scale(3)
        client.wait_for_workers(3, timeout=30)
        backend.refresh()                                                # a worker joined
        assert len(backend.slots) == 3 and backend.workers == 3 and backend.window == 6
        backend.close()


class _Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_placement_gives_the_next_batch_to_the_worker_free_first_and_ends_them_together():
    """Placement (Dask, once the time per run is known): up to two batches per thread in flight, each to the worker
    with room that is free first; towards the end a batch takes its worker only until all would end, were the runs
    left shared out evenly; workers that join are used, workers that left are not."""
    clock, p = _Clock(), 1 / 128                                      # (binary fractions: exact sums)
    pl = runner.Placement({"a": 1, "b": 1, "c": 2}, clock=clock)
    picks = []
    while (w := pl.pick(p)) is not None:
        picks.append(w)
        pl.bind(len(picks), w, pl.placed(w, 16))                        # batches of 0.125 s of one thread
    # c (2 threads) is free again after 0.0625 s, a and b after 0.125 s; ties: the emptier queue
    assert picks == ["a", "b", "c", "c", "a", "b", "c", "c"]
    assert [pl.free_at(w, p) for w in "abc"] == [0.25, 0.25, 0.25]
    clock.t = 0.125
    pl.done(7)                                                           # c's third batch came back first
    assert [e[0] for e in pl.queued["c"]] == [16, 16, 16] and pl.since["c"] == 0.125
    assert pl.pick(p) == "c"                                             # a and b have no room
    for f in (3, 4, 8):
        pl.done(f)
    assert pl.queued["c"] == [] and pl.free_at("c", p) == 0.125
    # a and b: busy until 0.25 s; c: free. 32 runs left (0.25 s of one thread) over 4 threads: all would end at
    # 0.125 + (0.125 + 0.125 + 0.25) / 4 = 0.25 s: a and b need no more, c's two threads 0.125 s each (32 runs)
    assert pl.fill("c", p, 32) == 32 and pl.fill("a", p, 32) == 0
    sizes = runner.Batches(None, 4, 1.0)
    sizes.observe(10, 0.1)
    assert sizes.next(40) == 12                                          # 40 / (2 x 4) is under the floor (1 s / 8)
    assert sizes.next(400, fill=7) == 7 and sizes.next(400, fill=-3) == 1 and sizes.next(400, fill=10 ** 6) == 50
    pl.update({"b": 1, "c": 2, "d": 1})                                  # a left, d joined (free now)
    picks = []
    for _ in range(4):
        picks.append(pl.pick(p))
        pl.placed(picks[-1], 16)
    assert picks == ["c", "d", "c", "d"]                                 # never a; b has no room


class _Placing(backends.Serial):
    """A serial backend that places batches (as Dask does): it records where each went; a third worker joins at the
    second refresh of the workers."""
    batch_seconds = 0.05
    workers, window = 2, 4

    def __init__(self):
        self.slots, self.where, self.refreshed = {"w1": 1, "w2": 1}, [], 0

    def refresh(self):
        self.refreshed += 1
        if self.refreshed == 2:
            self.slots, self.workers, self.window = {"w1": 1, "w2": 1, "w3": 1}, 3, 6

    def submit_all(self, fn, calls, where=None):
        self.where.append(list(where or [None] * len(calls)))
        return super().submit_all(fn, calls)


def test_a_study_places_its_batches_and_uses_workers_that_join(monkeypatch):
    """With a backend that places batches, the study's table is the serial one; the first batches are one run per
    worker, every batch has a worker, and a worker that joined (seen at a refresh of the workers) gets batches."""
    monkeypatch.setattr(runner.Placement, "REFRESH", 0.0)
    study = doe.Study(_build, {"ck": np.linspace(1e5, 4e5, 40)}, responses=["growth"])
    backend, rows = _Placing(), {}
    runner.execute(pending=list(range(40)), params=study.params, build=study.build, responses=study.responses,
                   reference=None, backend=backend, checkpoint=None, progress=None, chunksize=None, rows=rows,
                   defaults=study._defaults())
    assert backend.where[0] == [None, None] and backend.refreshed > 2   # one run per worker, wherever
    placed = sum(backend.where[1:], [])
    assert None not in placed and {"w1", "w2", "w3"} == set(placed)
    serial = study.run()
    assert sorted(rows) == list(range(40))
    assert [rows[r]["responses"]["growth"] for r in range(40)] == serial["growth"].tolist()
