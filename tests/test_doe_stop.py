"""Stopping a study on the process pool (issue 28, part 4): a second Ctrl-C ends it at once, terminating the
workers, with every finished run in the checkpoint; kill -9 of the study's process leaves no worker behind (the
workers watch their parent)."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from cosim import doe

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import os, sys
    import cosim
    from cosim import doe

    checkpoint, marker = sys.argv[1], sys.argv[2]
    PARENT = os.getpid()

    def build(p):
        if os.getpid() != PARENT:               # in a worker: say which process runs this run
            with open(marker, "a") as fh:
                fh.write(f"{os.getpid()}\\n")
        t_end = 0.01 if p["i"] < 2 else 60.0    # two short runs, then runs of tens of seconds
        return dict(system=cosim.models.two_mass_oscillator(), t_end=t_end, H=1e-4, solver=cosim.Euler(substeps=200))

    if __name__ == "__main__":
        study = doe.Study(build, {"i": list(range(8))}, responses=["growth"])
        study.run(backend="processes", workers=2, chunksize=1, checkpoint=checkpoint, commit_interval=0)
""")


def _env():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")])))


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start(tmp_path):
    script, ck, marker = tmp_path / "study.py", tmp_path / "s.sqlite", tmp_path / "workers.txt"
    script.write_text(SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(ck), str(marker)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:       # both workers busy with long runs
        pids = set(marker.read_text().split()) if marker.exists() else set()
        if len(pids) == 2 and ck.exists() and len(doe.load(ck)) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.3)
    return proc, ck, {int(p) for p in marker.read_text().split()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_second_ctrl_c_terminates_the_workers_at_once(tmp_path):
    proc, ck, workers = _start(tmp_path)
    proc.send_signal(signal.SIGINT)
    time.sleep(0.3)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    took = time.monotonic() - t0
    assert proc.returncode != 0 and "KeyboardInterrupt" in err, err
    assert took < 1.0, f"the second Ctrl-C took {took:.2f} s"
    assert sorted(doe.load(ck).index) == [0, 1]                    # every finished run is in the checkpoint
    time.sleep(0.5)
    assert not any(_alive(p) for p in workers)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_study_leaves_no_worker(tmp_path):
    proc, ck, workers = _start(tmp_path)
    assert all(_alive(p) for p in workers)
    proc.kill()
    proc.communicate(timeout=60)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.1)
    assert not any(_alive(p) for p in workers)
    assert sorted(doe.load(ck).index) == [0, 1]
