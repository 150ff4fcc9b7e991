"""A study on a real multi-process Dask cluster (issue 28, part 5): ``dask scheduler`` and two ``dask worker``
processes on loopback, reached through ``Client(address)``; the table (with a checkpoint) equals the serial one."""
import json
import os
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
