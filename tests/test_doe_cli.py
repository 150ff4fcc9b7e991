"""`python -m cosim doe study.toml`: the example study, resume, and errors naming the bad key or factor."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import cosim
from cosim import doe
from cosim.doe.config import load_study

EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _env():
    """The environment of a `python -m cosim` child: this checkout's cosim first (not an installed one)."""
    root = str(EXAMPLES.parent)
    return dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get(
        "PYTHONPATH")])))

SMALL = """
title = "small"
[model]
library = "two_mass_oscillator"
[simulation]
t_end = 0.05
solver = {{ type = "exact" }}
[factors]
{factors}
[responses]
names = ["eps_mono_sat", "stable"]
[run]
backend = "serial"
[output]
dir = "o"
table = "{table}"
"""


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "cosim", "doe", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd, env=_env())


def test_example_study_writes_table_and_anova_and_resumes(tmp_path):
    proc = _run([str(EXAMPLES / "doe_two_mass.toml"), "--no-progress"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "out" / "doe_two_mass.csv", index_col="run")
    anova = pd.read_csv(tmp_path / "out" / "doe_two_mass_anova.csv", index_col="effect")
    assert len(table) == 54 and table.status.isin(["ok", "unstable"]).all()
    assert ((table.status == "unstable") == ~table.stable.astype(bool)).all()    # the status from the verdict
    # issue 30: the status column is the run's verdict; each unstable run has rho(Omega) > 1 at its H
    rhos = table.message[table.status == "unstable"].str.extract(r"rho\(Omega\) = ([0-9.e+-]+) > 1")[0]
    assert rhos.notna().all() and (rhos.astype(float) > 1).all()
    assert list(anova.index) == ["ck", "dk", "H", "approximation", "ck:dk", "ck:H", "ck:approximation", "dk:H",
                                 "dk:approximation", "H:approximation", "Residual"]
    assert anova["percent"].iloc[:-1].sum() == pytest.approx(100.0)
    assert "ANOVA of eps_mono_sat" in proc.stdout
    # the unstable runs: one warning line for the study, none per run and no line of cosim's source
    unstable = int((table.status == "unstable").sum())
    assert unstable > 0 and proc.stderr.count("CouplingInstabilityWarning") == 1
    assert (f"cosim doe: CouplingInstabilityWarning: study: {unstable} of 54 runs unstable: the coupling's verdict "
            "of each is in the message column of the rows with status 'unstable'\n") in proc.stderr
    assert "study.run(" not in proc.stderr
    # one run through the API gives the same response
    row = table[(table.ck == 1e5) & (table.dk == 100.0) & (table.H == 1e-3) & (table.approximation == "zoh")].iloc[0]
    system = cosim.models.two_mass_oscillator(ck=1e5, dk=100.0, coupling="force/displacement")
    res = cosim.simulate(system, 0.2, 1e-3, solver=cosim.Exact(), scheme="jacobi", approximation=cosim.ZOH())
    ref = cosim.simulate_monolithic(system, 0.2, t_eval=res.t)
    assert row.eps_mono_sat == pytest.approx(doe.eps_mono(res, ref, saturate=1.0), rel=1e-14)
    # started again: resumes from the checkpoint with nothing left to run, same table
    again = _run([str(EXAMPLES / "doe_two_mass.toml"), "--no-progress"], tmp_path)
    assert again.returncode == 0, again.stderr
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "out" / "doe_two_mass.csv", index_col="run"), table)


def test_serial_from_the_command_line_ignores_the_files_pool_size(tmp_path):
    """The example's [run] workers = 2 sizes its thread pool; --backend serial (no pool) runs without it instead of
    failing with "the serial backend runs one run at a time"; --workers with serial is still refused."""
    proc = _run([str(EXAMPLES / "doe_two_mass.toml"), "--no-progress", "--backend", "serial"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "backend serial" in proc.stdout and "54 runs in" in proc.stdout
    proc = _run([str(EXAMPLES / "doe_two_mass.toml"), "--no-progress", "--backend", "serial", "--workers", "2",
                 "--out", str(tmp_path / "o2")], tmp_path)
    assert proc.returncode == 2 and "workers: the serial backend runs one run at a time" in proc.stderr


def test_parquet_output_and_factor_routes(tmp_path):
    pytest.importorskip("pyarrow")
    f = tmp_path / "s.toml"
    f.write_text(SMALL.format(factors='"model.ck" = [1e5, 2e5]\nH = [1e-3, 5e-3]\n'
                              'solver = ["exact", "rk4 substeps=4"]', table="s.parquet"))
    proc = _run([str(f), "--no-progress", "--backend", "threads", "--workers", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    df = pd.read_parquet(tmp_path / "o" / "s.parquet")
    assert len(df) == 8 and set(df["solver"]) == {"exact", "rk4 substeps=4"}
    study, _, _, _ = load_study(f)
    kw = study.build({"model.ck": 2e5, "H": 1e-3, "solver": "rk4 substeps=4"})
    assert kw["system"].params["ck"] == 2e5 and kw["H"] == 1e-3
    assert isinstance(kw["solver"], cosim.RK4) and kw["solver"].substeps == 4


@pytest.mark.parametrize("factors, message", [
    ("foo = [1, 2]", "factors.foo: unknown name 'foo'"),
    ("ck = []", r"factors\['ck'\]: no levels"),
    ("ck = [1e5, nan]", r"factors\['ck'\]: level nan is not finite"),
    ('"model.H" = [1.0]', "factors.model.H: 'H' is not a parameter of the model"),
    ('approximation = ["spline"]', "unknown approximation 'spline'"),
])
def test_bad_factors_are_named(tmp_path, factors, message):
    f = tmp_path / "s.toml"
    f.write_text(SMALL.format(factors=factors + "\nH = [1e-3]" if "H" not in factors else factors, table="s.csv"))
    proc = _run([str(f), "--no-progress"], tmp_path)
    assert proc.returncode == 2
    import re
    assert re.search(message, proc.stderr), proc.stderr


def test_bad_sections_are_named(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text(SMALL.format(factors="ck = [1e5]\nH = [1e-3]", table="s.csv") + "[extra]\n")
    assert "study: unknown key(s) ['extra']" in _run([str(f)], tmp_path).stderr
    f.write_text(SMALL.format(factors="ck = [1e5]\nH = [1e-3]", table="s.csv").replace("[run]", "[run]\nthreads = 2"))
    assert "run: unknown key(s) ['threads']" in _run([str(f)], tmp_path).stderr
    f.write_text(SMALL.format(factors="ck = [1e5]", table="s.csv"))
    assert "simulation.H: missing" in _run([str(f)], tmp_path).stderr
    f.write_text(SMALL.format(factors="ck = [1e5]\nH = [1e-3]", table="s.txt"))
    assert "output.table: expected a .csv or .parquet" in _run([str(f)], tmp_path).stderr


def test_changed_study_file_is_refused_naming_what_differs(tmp_path):
    """The defect: t_end changed in the study file, rerun into the same folder: "54 runs in 0.01 s" and the old
    numbers. Now the resume is refused naming simulation's t_end (exit 2); --checkpoint-mode overwrite starts afresh;
    a resume of the same file says how many runs it loaded."""
    f = tmp_path / "s.toml"
    text = SMALL.format(factors="ck = [1e5, 2e5]\nH = [1e-3, 3e-3]", table="s.csv").replace(
        "[run]", "[run]\ncheckpoint = \"s.sqlite\"")
    f.write_text(text)
    first = _run([str(f), "--no-progress"], tmp_path)
    assert first.returncode == 0, first.stderr
    old = pd.read_csv(tmp_path / "o" / "s.csv", index_col="run")
    again = _run([str(f), "--no-progress"], tmp_path)
    assert again.returncode == 0 and "4 runs loaded (0 failed), 0 to run" in again.stdout, again.stdout
    f.write_text(text.replace("t_end = 0.05", "t_end = 0.03"))
    proc = _run([str(f), "--no-progress"], tmp_path)
    assert proc.returncode == 2 and "belongs to a different study" in proc.stderr, proc.stderr
    assert "options.t_end: 0.05 -> 0.03" in proc.stderr and "--checkpoint-mode overwrite" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "o" / "s.csv", index_col="run"), old)   # untouched
    proc = _run([str(f), "--no-progress", "--checkpoint-mode", "overwrite"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    new = pd.read_csv(tmp_path / "o" / "s.csv", index_col="run")
    assert not np.array_equal(new.eps_mono_sat, old.eps_mono_sat)
    # H = 3 ms does not divide t_end = 0.03 ... or 0.05: the study shortens the last step (no failed runs)
    assert (new.status == "ok").all()


@pytest.mark.parametrize("edit, words", [
    (("table = \"s.csv\"", "table = \"../x.csv\""), ["output.table", "outside the output directory"]),
    (("table = \"s.csv\"", "table = \"{abs}\""), ["output.table", "outside the output directory"]),
    (("[run]", "[run]\ncheckpoint = \"../../x.sqlite\""), ["run.checkpoint", "outside the output directory"]),
    (("table = \"s.csv\"", "table = \"s.csv\"\nanova = \"s.csv\""), ["output.anova", "is also output.table"]),
    (("dir = \"o\"", "dir = \"../o\""), ["output.dir", "outside the current directory"]),
    (("ck = [1e5]", "ck = {low = 1e5, high = 2e5}"),
     [r"factors['ck']: a Range needs a sampled design"]),
    (("[design]", "[design]\ntype = \"lhs\"\nn = 20000000"), ["Latin hypercube has 20000000 runs", "max_runs"]),
])
def test_bad_study_files_exit_2_with_one_line_and_write_nothing(tmp_path, edit, words):
    """The defects: outputs outside --out, a traceback with exit 1, MemoryError for a huge design."""
    work = tmp_path / "w"
    work.mkdir()
    f = work / "s.toml"
    text = SMALL.format(factors="ck = [1e5]\nH = [1e-3]", table="s.csv") + "[design]\n"
    f.write_text(text.replace(*edit).replace("{abs}", str(tmp_path / "abs.csv")))
    proc = _run([str(f), "--no-progress"], work)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for w in words:
        assert w in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["s.toml", "w"]


def test_study_output_cannot_overwrite_the_study_file_and_max_runs_flag(tmp_path):
    f = tmp_path / "s.toml"
    text = SMALL.format(factors="ck = [1e5, 2e5]\nH = [1e-3]", table="s.csv").replace("anova", "x")
    f.write_text(text.replace("table = \"s.csv\"", "table = \"s.csv\"\nanova = \"s.toml\""))
    proc = _run([str(f), "--no-progress", "--out", str(tmp_path)], tmp_path)
    assert proc.returncode == 2 and "output.anova" in proc.stderr and "input file" in proc.stderr, proc.stderr
    assert "anova = \"s.toml\"" in f.read_text()
    f.write_text(text)
    proc = _run([str(f), "--no-progress", "--max-runs", "1"], tmp_path)
    assert proc.returncode == 2 and "has 2 runs, more than max_runs = 1" in proc.stderr, proc.stderr


def test_study_model_file_that_raises_exits_2(tmp_path):
    (tmp_path / "m.py").write_text("raise ImportError('no module named fancy')\n")
    f = tmp_path / "s.toml"
    f.write_text(SMALL.format(factors="ck = [1e5]\nH = [1e-3]", table="s.csv").replace(
        "library = \"two_mass_oscillator\"", "file = \"m.py\""))
    proc = _run([str(f), "--no-progress"], tmp_path)
    assert proc.returncode == 2 and "model.file" in proc.stderr and "raised ImportError" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_missing_doe_extra_is_one_line_naming_it(tmp_path, monkeypatch, capsys):
    # A core-only install: one module of the [doe] extra cannot be found. The CLI says which extra to install, in one
    # line, instead of a traceback from importing cosim.doe (make wheel-check runs it for real in a core-only venv).
    from cosim import _extras, cli
    monkeypatch.setitem(_extras.EXTRAS, "doe", _extras.EXTRAS["doe"] + ("cosim_no_such_module",))
    study = tmp_path / "s.toml"
    study.write_text("")
    assert cli.doe_main([str(study), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and 'pip install "cosim[doe]"' in err and "cosim_no_such_module" in err, err
    assert not (tmp_path / "o").exists()


LONG = """
[model]
library = "two_mass_oscillator"
[simulation]
H = 1e-3
solver = { type = "euler", h = 1e-6 }
[factors]
t_end = [0.01, 600.0]                # two short runs, then runs of minutes
approximation = ["zoh", "lagrange k=1"]
[responses]
names = ["growth"]
[run]
checkpoint = "s.sqlite"
[output]
dir = "o"
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_ctrl_c_of_a_dask_study_stops_its_runs_before_the_cluster_closes(tmp_path):
    """Ctrl-C in a terminal during `cosim doe --backend dask` (SIGINT to the process group, the cluster's worker
    processes included): the finished runs are in the checkpoint, exit code 130, and nothing from Dask is printed.
    Before: each worker died with a KeyboardInterrupt traceback and its nanny waited 4 s to kill it; closing the
    cluster with tasks still executing logged a warning per task ("Async instruction for <Task cancelled ...>");
    a task whose runs were stopped raised, and its worker logged "Compute Failed"."""
    pytest.importorskip("distributed")
    import signal
    import time
    (tmp_path / "s.toml").write_text(LONG)
    proc = subprocess.Popen([sys.executable, "-m", "cosim", "doe", "s.toml", "--backend", "dask", "--workers", "2",
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmp_path, env=_env(), start_new_session=True)
    ck, deadline = tmp_path / "o" / "s.sqlite", time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:      # the short runs written: the long ones run
        try:
            if len(doe.load(ck)) >= 2:
                break
        except doe.StudyError:                                       # not there yet
            pass
        time.sleep(0.05)
    assert proc.poll() is None, proc.communicate()
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)               # as a terminal's Ctrl-C: to the workers too
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130, out
    assert "study interrupted: 2 of 4 runs" in out and "cosim doe: interrupted" in out
    assert "distributed." not in out and "Traceback" not in out and "Error" not in out, out  # no line of Dask's
    assert sorted(doe.load(ck).index) == [0, 1]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_ctrl_c_while_cosim_doe_exits_keeps_exit_code_130(tmp_path):
    """A second Ctrl-C just after `cosim doe` has handled the first (it printed "interrupted" and is exiting) killed
    the process with SIGINT (exit code -2): Python resets its handlers while it shuts down. The command now ignores
    Ctrl-C once it has been interrupted."""
    pytest.importorskip("distributed")
    import signal
    import time
    (tmp_path / "s.toml").write_text(LONG)
    proc = subprocess.Popen([sys.executable, "-m", "cosim", "doe", "s.toml", "--backend", "dask", "--workers", "2",
                             "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=tmp_path, env=dict(_env(), PYTHONUNBUFFERED="1"))
    ck, deadline = tmp_path / "o" / "s.sqlite", time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:      # the long runs are running
        try:
            if len(doe.load(ck)) >= 2:
                break
        except doe.StudyError:
            pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if "cosim doe: interrupted" in line:
            for _ in range(5):                  # Ctrl-C again, while it exits
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)
                time.sleep(0.01)
    assert proc.wait(timeout=60) == 130, "".join(lines)
