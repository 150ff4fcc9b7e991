"""A study on a real multi-process Dask cluster (issue 28, part 5): ``dask scheduler`` and two ``dask worker``
processes on loopback, reached through ``Client(address)``; the table (with a checkpoint) equals the serial one."""
import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import cosim
from cosim import doe

distributed = pytest.importorskip("distributed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DASK = os.path.join(os.path.dirname(sys.executable), "dask")


def build(p):
    return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"], dk=p["dk"]), t_end=0.1, H=p["H"],
                solver=cosim.Exact())


FACTORS = {"ck": [1e5, 1e6, 1e7], "dk": [1e2, 1e3], "H": [1e-3, 2e-3]}


def _spawn(args, log):
    # a session of its own: the whole process group is ended at teardown, whatever it started
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.path.dirname(__file__),
                                                                     os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([DASK] + args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _end(procs):
    for p in procs:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for p in procs:
        try:
            p.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(5)


@pytest.fixture
def cluster(tmp_path):
    if not os.path.exists(DASK):
        pytest.skip("the dask command line (dask[distributed]) is not installed")
    info = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "w")
    procs = []
    try:
        procs.append(_spawn(["scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                             "--scheduler-file", str(info)], log))
        deadline = time.monotonic() + 60
        while not info.exists() and time.monotonic() < deadline and procs[0].poll() is None:
            time.sleep(0.1)
        assert info.exists(), (tmp_path / "dask.log").read_text()
        time.sleep(0.2)                                       # the file is written whole before the next check
        address = json.loads(info.read_text())["address"]
        for _ in range(2):
            procs.append(_spawn(["worker", address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard",
                                 "--host", "127.0.0.1"], log))
        yield address
    finally:
        _end(procs)
        log.close()


def test_study_on_a_scheduler_and_two_worker_processes(cluster, tmp_path):
    assert cluster.startswith("tcp://127.0.0.1:")
    serial = doe.Study(build, FACTORS, responses=["eps_mono", "stable", "growth"], reference=True).run()
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        assert len(client.scheduler_info()["workers"]) == 2
        study = doe.Study(build, FACTORS, responses=["eps_mono", "stable", "growth"], reference=True)
        df = study.run(backend=client, checkpoint=tmp_path / "study.sqlite")
        ran_on = set(client.run(os.getpid).values())
    assert len(ran_on) == 2 and os.getpid() not in ran_on       # two worker processes, not this one
    cols = list(FACTORS) + ["eps_mono", "stable", "growth", "status", "message"]
    pd.testing.assert_frame_equal(df[cols], serial[cols])
    # the checkpoint holds the same rows (doe.load gives text columns the string dtype, run() object)
    pd.testing.assert_frame_equal(doe.load(tmp_path / "study.sqlite")[cols], serial[cols], check_dtype=False)
    assert np.isfinite(df.eps_mono[df.status == "ok"]).all()


_FORGOTTEN = []


def build_forgetting(p):
    """``build``, which in each worker process, at its first run, drops what the study put there (its plan, and the
    copy the study sent): the process's next batch is then that of a worker that joined the cluster after the study
    started."""
    if not _FORGOTTEN:
        from cosim.doe import dask_shared, runner
        _FORGOTTEN.append(os.getpid())
        dask_shared.forget()
        runner._plans.clear()
    return build(p)


def _forgot():
    return len(_FORGOTTEN)


def test_a_worker_without_the_study_gets_it_with_its_batch(cluster):
    """A worker process that lacks the study's plan (it joined or restarted after the study put it on the workers)
    refuses its batch, which runs again carrying the plan: the table is the serial one."""
    serial = doe.Study(build, FACTORS, responses=["eps_mono", "stable"], reference=True).run()
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
        df = doe.Study(build_forgetting, FACTORS, responses=["eps_mono", "stable"], reference=True).run(
            backend=client)
        forgot = client.run(_forgot)
    assert sum(forgot.values()) == 2                              # both worker processes dropped it
    cols = list(FACTORS) + ["eps_mono", "stable", "status", "message"]
    pd.testing.assert_frame_equal(df[cols], serial[cols])


STUDY = """
title = "two-mass oscillator on Dask"
[model]
library = "two_mass_oscillator"
[simulation]
t_end = 0.05
solver = { type = "exact" }
[factors]
ck = [1e5, 1e6, 1e7]
H = [1e-3, 2e-3]
[responses]
names = ["eps_mono", "stable"]
reference = true
[run]
backend = "serial"
checkpoint = "study.sqlite"
[output]
dir = "o"
table = "study.csv"
anova = ""
"""


def _cosim_doe(args, cwd):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-m", "cosim", "doe", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=env)


def test_cli_runs_a_study_on_the_cluster_of_a_scheduler_address(cluster, tmp_path):
    """`cosim doe study.toml --scheduler ADDRESS`: the runs go to the cluster's worker processes; the table and
    its checkpoint are written here and equal the serial CLI run's."""
    with distributed.Client(cluster) as client:
        client.wait_for_workers(2, timeout=120)
    (tmp_path / "study.toml").write_text(STUDY)
    serial = _cosim_doe(["study.toml", "--no-progress", "--out", "serial"], tmp_path)
    assert serial.returncode == 0, serial.stderr
    proc = _cosim_doe(["study.toml", "--no-progress", "--out", "dask", "--scheduler", cluster], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"backend dask at {cluster}" in proc.stdout
    a = pd.read_csv(tmp_path / "serial" / "study.csv", index_col="run")
    b = pd.read_csv(tmp_path / "dask" / "study.csv", index_col="run")
    pd.testing.assert_frame_equal(a.drop(columns="wall"), b.drop(columns="wall"))
    assert len(doe.load(tmp_path / "dask" / "study.sqlite")) == 6
    with distributed.Client(cluster) as client:              # the workers ran them (cosim imported there)
        assert all(client.run(lambda: "cosim.doe.runner" in sys.modules).values())


def test_cli_dask_backend_on_a_local_cluster_and_its_errors(tmp_path, monkeypatch, capsys):
    """`--backend dask` starts a local_cluster of --workers processes for the study; a scheduler nobody answers,
    --workers with --scheduler, --scheduler with another backend and a scheduler that is not a string are exit
    code 2 with one line naming the option."""
    from cosim import cli
    (tmp_path / "study.toml").write_text(STUDY)
    proc = _cosim_doe(["study.toml", "--no-progress", "--out", "local", "--backend", "dask", "--workers", "2"],
                      tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "backend dask," in proc.stdout and "6 runs in" in proc.stdout
    assert len(pd.read_csv(tmp_path / "local" / "study.csv")) == 6
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli, "DASK_CONNECT_TIMEOUT", 1)
    nobody = "tcp://127.0.0.1:9"                                # the discard port: no scheduler there
    (tmp_path / "bad.toml").write_text(STUDY.replace('backend = "serial"', 'backend = "dask"\nscheduler = 8786'))
    cases = [(["study.toml", "--scheduler", nobody], f"--scheduler: no Dask scheduler reachable at {nobody!r}"),
             (["study.toml", "--scheduler", nobody, "--workers", "2"], "--workers: the cluster at --scheduler"),
             (["study.toml", "--scheduler", nobody, "--backend", "threads"], "--scheduler: only with --backend dask"),
             (["bad.toml"], "run.scheduler: expected a scheduler address such as 'tcp://HOST:8786', got 8786")]
    for args, message in cases:
        t0 = time.monotonic()
        rc = cli.doe_main([*args, "--no-progress", "--out", "bad"])
        err = capsys.readouterr().err
        assert rc == 2 and err.startswith("cosim doe: ") and message in err and err.count("\n") == 1, (args, err)
        assert time.monotonic() - t0 < 30
    assert not (tmp_path / "bad" / "study.csv").exists()


def test_cli_two_ctrl_c_end_a_dask_study_and_its_local_cluster_within_seconds(tmp_path):
    """`cosim doe --backend dask`, Ctrl-C twice: the study stops, the local cluster is closed (cosim.doe.local_cluster
    holds Ctrl-C off in its close: a second Ctrl-C there left the cluster to a finalizer that waited 10 s at exit),
    exit code 130, no worker process left."""
    import psutil
    (tmp_path / "study.toml").write_text(STUDY.replace("t_end = 0.05", "t_end = 10.0").replace(
        'solver = { type = "exact" }', 'solver = { type = "rk4", substeps = 50 }').replace(
        "H = [1e-3, 2e-3]", "H = [1e-5, 2e-5]").replace("reference = true", "reference = false").replace(
        'names = ["eps_mono", "stable"]', 'names = ["stable"]'))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    proc = subprocess.Popen([sys.executable, "-m", "cosim", "doe", "study.toml", "--no-progress", "--backend", "dask",
                             "--workers", "2"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 120
        workers = []
        while time.monotonic() < deadline and proc.poll() is None and len(workers) < 2:
            workers = [p for p in psutil.Process(proc.pid).children(recursive=True)
                       if "multiprocessing" in " ".join(p.cmdline()) and "resource_tracker" not in " ".join(p.cmdline())]
            time.sleep(0.2)
        time.sleep(8.0)                                    # the workers start, and are inside their first runs
        assert proc.poll() is None, proc.communicate()
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "cosim doe: interrupted" in err, (out, err)
    assert took < 5.0, f"cosim doe exited {took:.1f} s after the second Ctrl-C"
    assert workers and not any(p.is_running() and p.status() != psutil.STATUS_ZOMBIE for p in workers)
    assert "study interrupted:" in err, (out, err)


def build_slow(p):
    try:                                                      # on a Dask worker a run of ~21 ms (a batch of ~1 s
        distributed.get_worker()                              # has ~50 runs); serially (the expected table) fast
        time.sleep(0.02)
    except ValueError:
        pass
    return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=0.02, H=1e-3)


def test_an_adaptive_cluster_grows_during_a_study_and_its_new_workers_hold_the_study():
    """Dask's ``adapt`` asks for workers in proportion to the work in flight over ``target_duration``. A study keeps
    about two batches of ~1 s per worker thread in flight, so with ``target_duration="1s"`` (docs/doe.md) the
    cluster grows while the study runs; a worker that joins gets the study's plan from the study's worker plugin
    as it registers, before it takes a task, so no batch comes back refused (MissingShared: a task error in Dask's
    task stream), not even one that Dask's work stealing moved to it; the table is the serial one."""
    # 600 runs of ~21 ms, mostly asleep: about 13 s on one worker whatever the load, time for workers to start
    study = doe.Study(build_slow, {"ck": np.linspace(1e5, 4e5, 600)}, responses=["growth"])
    with doe.local_cluster(1) as cl, distributed.Client(cl) as client:
        cl.adapt(minimum=1, maximum=3, target_duration="1s", interval="0.2s")
        with distributed.get_task_stream(client) as stream:
            df = study.run(backend=client)
    workers = {r["worker"] for r in stream.data}
    assert len(workers) >= 2, f"the cluster did not grow: {len(stream.data)} tasks on {workers}"
    refused = [r for r in stream.data if r["status"] != "OK"]
    assert refused == [], [repr(pickle.loads(r["exception"])) for r in refused]
    serial = study.run()
    cols = ["ck", "growth", "status", "message"]
    pd.testing.assert_frame_equal(df[cols], serial[cols])
