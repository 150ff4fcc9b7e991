"""A study stopped by SIGINT (Ctrl-C) after some runs and resumed has every run exactly once."""
import collections
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cosim import doe

N_RUNS = 480   # long enough (about 2.5 s of work on two workers) that SIGINT lands mid-study with batches of ~0.25 s

SCRIPT = textwrap.dedent(f"""
    import os, sys
    import cosim
    from cosim import doe

    backend, checkpoint, log = sys.argv[1], sys.argv[2], sys.argv[3]

    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=0.1, H=1e-4,
                    solver=cosim.Euler(substeps=40))

    def responses(res, ref):
        with open(log, "a") as fh:              # one line per finished run (the run's ck identifies it)
            fh.write(repr(res.system.params["ck"]) + "\\n")
        return {{"growth": res.growth}}

    if __name__ == "__main__":                  # (worker processes import this file)
        study = doe.Study(build, {{"ck": [1e5 + i for i in range({N_RUNS})]}}, responses=responses)
        df = study.run(backend=backend, workers=None if backend == "serial" else 2, checkpoint=checkpoint)
        print("done", len(df))
""")


def _env():
    """This checkout's cosim first in the child (the script's folder comes first on its path, not the checkout)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))


def _finished(path):
    try:
        return len(doe.load(path))
    except doe.StudyError:
        return 0


@pytest.mark.parametrize("backend", ["threads", "serial", "processes"])
def test_sigint_then_resume_runs_everything_exactly_once(tmp_path, backend):
    script, ck, log = tmp_path / "study.py", tmp_path / "study.sqlite", tmp_path / "runs.log"
    script.write_text(SCRIPT)
    cmd = [sys.executable, str(script), backend, str(ck), str(log)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 120
    while (not ck.exists() or _finished(ck) < 5) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, f"the study ended before the interrupt: {proc.communicate()}"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err and "study interrupted" in err, (out, err)
    first = _finished(ck)
    assert 5 <= first < N_RUNS
    before = collections.Counter(log.read_text().split())
    assert len(before) == first and max(before.values()) == 1         # every finished run is in the checkpoint
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 0 and f"done {N_RUNS}" in res.stdout, res.stderr
    counts = collections.Counter(log.read_text().split())
    assert len(counts) == N_RUNS and set(counts.values()) == {1}      # every run exactly once over both processes
    df = doe.load(ck)
    assert sorted(df.index) == list(range(N_RUNS)) and (df.status == "ok").all()


def test_kill_9_loses_at_most_the_batches_in_flight(tmp_path):
    """kill -9 of a processes study (batches sized from the measured run time): the checkpoint holds only runs that
    ran; a resume runs the rest, and the table holds every run exactly once."""
    script, ck, log = tmp_path / "study.py", tmp_path / "study.sqlite", tmp_path / "runs.log"
    script.write_text(SCRIPT)
    cmd = [sys.executable, str(script), "processes", str(ck), str(log)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 120
    while (not ck.exists() or _finished(ck) < 5) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, f"the study ended before the kill: {proc.communicate()}"
    proc.kill()
    proc.communicate(timeout=60)
    time.sleep(1.5)                                # the workers see their parent gone (twice a second) and end
    kept = doe.load(ck)
    assert 5 <= len(kept) < N_RUNS
    ran = collections.Counter(log.read_text().split())
    ck_of = {float(k) for k in ran}
    assert {1e5 + i for i in kept.index} <= ck_of                   # nothing recorded that did not run
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=_env())
    assert res.returncode == 0 and f"done {N_RUNS}" in res.stdout, res.stderr
    df = doe.load(ck)
    assert sorted(df.index) == list(range(N_RUNS)) and (df.status == "ok").all()
    counts = collections.Counter(log.read_text().split())
    assert len(counts) == N_RUNS
    again = [k for k, v in counts.items() if v > 1]                 # lost with the batches in flight, run again
    assert all(float(k) not in {1e5 + i for i in kept.index} for k in again)
