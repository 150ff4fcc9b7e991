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
