"""Command line: `python -m cosim --version` and `python -m cosim run scenario.toml` (examples/*.toml)."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import cosim
from cosim import cli, models

pd = pytest.importorskip("pandas")
EXAMPLES = pathlib.Path(__file__).resolve().parent.parent / "examples"


def _env():
    """The environment of a `python -m cosim` child: this checkout's cosim first (not an installed one)."""
    root = str(EXAMPLES.parent)
    return dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get(
        "PYTHONPATH")])))


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "cosim", *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=_env())


def test_version():
    proc = _run(["--version"], ".")
    assert proc.returncode == 0 and proc.stdout.strip() == f"cosim {cosim.__version__}"
    proc = _run(["--help"], ".")
    assert proc.returncode == 0 and "run" in proc.stdout and "--version" in proc.stdout


def test_run_example_scenario_writes_its_outputs(tmp_path):
    proc = _run(["run", str(EXAMPLES / "two_mass.toml")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"                                   # [output] dir, relative to the current directory
    csv, png, errors = out / "two_mass.csv", out / "two_mass.png", out / "two_mass_errors.csv"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # the same run through the API gives the same numbers
    system = models.two_mass_oscillator(ck=2e5, dk=200.0, coupling="force/displacement")
    res = cosim.simulate(system, 0.2, 1e-3, scheme="gauss-seidel", approximation=cosim.Lagrange(k=1),
                         solver=cosim.CVODE(rtol=1e-10, atol=1e-12), update="consistent")
    table = cosim.read_csv(csv)
    assert list(table.columns) == ["t"] + res.signals
    np.testing.assert_allclose(table["t"].to_numpy(), res.t, rtol=0, atol=0)
    np.testing.assert_allclose(table["S2.F"].to_numpy(), res["S2.F"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(table["S1.x1"].to_numpy(), res["S1.x1"], rtol=1e-12, atol=0)
    err = res.error_to(cosim.simulate_monolithic(system, 0.2, t_eval=res.t))
    etab = pd.read_csv(errors, index_col="signal")
    assert list(etab.index) == res.signals
    assert list(etab.columns) == ["max_abs", "max_rel", "final_abs", "nrmse", "eps_mono"]
    for label in ("S1.x1", "S2.F", "S2.v2"):
        for col in etab.columns:
            assert etab.loc[label, col] == pytest.approx(err["per_signal"][label][col], rel=1e-5)
    assert "S2.F" in proc.stdout and "eps_mono" in proc.stdout and "wrote" in proc.stdout


def test_run_scenario_with_a_python_model_file(tmp_path):
    proc = _run(["run", str(EXAMPLES / "filter_oscillator.toml"), "--out", str(tmp_path / "o")], tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(tmp_path / "o" / "filter_oscillator.csv")
    assert {"filter.xf", "osc.q", "osc.qdot", "osc.force"} <= set(table.columns)
    assert len(table) == 501 and table["t"].iloc[-1] == pytest.approx(5.0)
    errors = pd.read_csv(tmp_path / "o" / "filter_oscillator_errors.csv", index_col="signal")
    assert errors.loc["osc.q", "max_rel"] < 1e-2           # a stable, accurate run (EXTRIPOL-C1 k = 1, H = 10 ms)
    assert (tmp_path / "o" / "filter_oscillator.png").stat().st_size > 10_000


def _scenario(tmp_path, text):
    path = tmp_path / "s.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


BASE = """
[model]
library = "two_mass_oscillator"
[simulation]
t_end = 0.01
H = 1e-3
"""


@pytest.mark.parametrize("text, words", [
    (BASE + "[output]\ncvs = 'x.csv'\n", ["output", "cvs"]),
    (BASE.replace("two_mass_oscillator", "three_mass"), ["model.library", "three_mass"]),
    (BASE.replace("t_end = 0.01", ""), ["simulation.t_end"]),
    (BASE + "approximation = { type = 'spline' }\n", ["simulation.approximation.type", "spline"]),
    (BASE + "solver = { type = 'cvode', rtoll = 1 }\n", ["simulation.solver", "rtoll"]),
    (BASE + "sheme = 'jacobi'\n", ["simulation", "sheme"]),
    (BASE + "[model.params]\nck = -1.0\n", ["ck"]),
    ("[model]\nfile = 'nofile.py'\n[simulation]\nt_end = 1\nH = 0.1\n", ["model.file", "nofile.py"]),
    ("title = 3\n[model\n", ["not valid TOML"]),
])
def test_bad_scenarios_name_the_key(tmp_path, capsys, text, words):
    status = cli.main([_scenario(tmp_path, text), "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert status == 2
    for w in words:
        assert w in err, err


def test_diverging_run_exits_1_and_writes_the_partial_result(tmp_path, capsys):
    text = BASE.replace("t_end = 0.01", "t_end = 1.0").replace("H = 1e-3", "H = 5e-3") + \
        "scheme = 'jacobi'\ndivergence_bound = 1e3\n[model.params]\nck = 2e5\ndk = 200.0\n" \
        "[output]\ncsv = 'r.csv'\npng = ''\nerrors = ''\n"
    status = cli.main([_scenario(tmp_path, text), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 1 and "DivergenceError" in out
    table = pd.read_csv(tmp_path / "r.csv")
    assert 1 < len(table) < 201 and table["t"].iloc[-1] < 1.0
    assert not (tmp_path / "result.png").exists()


# ---------------------------------------------------------------------------------------- safety (issue 28, part 7)
def _one_line_exit_2(capsys, argv):
    status = cli.main(argv)
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err


@pytest.mark.parametrize("output, words", [
    ("csv = '../x.csv'", ["output.csv", "outside the output directory"]),
    ("csv = '{abs}'", ["output.csv", "outside the output directory"]),
    ("png = '../../y.png'", ["output.png", "outside the output directory"]),
    ("errors = 's.toml'", ["output.errors", "input file"]),
    ("csv = 'model.py'", ["output.csv", "input file"]),
    ("csv = 'sub'", ["output.csv", "is a directory"]),
    ("csv = 'a.csv'\nerrors = 'a.csv'", ["output.errors", "is also output.csv"]),
    ("signals = ['S1.x9']", ["output.signals", "S1.x9"]),
])
def test_outputs_stay_inside_the_output_directory(tmp_path, capsys, output, words):
    """The defects: the scenario wrote outside --out and could overwrite its own file; a bad output exited with a
    traceback. Each is now refused before the run with one line and exit 2, and nothing is written."""
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "sub").mkdir()
    (tmp_path / "o" / "model.py").write_text("import cosim\nsystem = cosim.models.two_mass_oscillator()\n")
    text = BASE.replace("library = \"two_mass_oscillator\"", "file = 'model.py'") + "[output]\n" + \
        output.format(abs=str(tmp_path / "abs.csv")) + "\n"
    scenario = tmp_path / "o" / "s.toml"
    scenario.write_text(text)
    before = sorted(p.name for p in tmp_path.rglob("*"))
    err = _one_line_exit_2(capsys, [str(scenario), "--out", str(tmp_path / "o")])
    for w in words:
        assert w in err, err
    if "signals" not in output:
        assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert scenario.read_text() == text


def test_allow_outside_and_output_dir_of_the_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path / ".")
    (tmp_path / "w").mkdir()
    monkeypatch.chdir(tmp_path / "w")
    text = BASE + "[output]\ndir = '../elsewhere'\npng = ''\nerrors = ''\n"
    err = _one_line_exit_2(capsys, [_scenario(tmp_path, text)])
    assert "output.dir" in err and "outside the current directory" in err
    assert not (tmp_path / "elsewhere").exists()
    assert cli.main([_scenario(tmp_path, text), "--allow-outside"]) == 0
    assert (tmp_path / "elsewhere" / "result.csv").exists()
    text = BASE + f"[output]\ncsv = '{tmp_path / 'abs.csv'}'\npng = ''\nerrors = ''\n"
    assert cli.main([_scenario(tmp_path, text), "--out", "o", "--allow-outside"]) == 0
    assert (tmp_path / "abs.csv").exists()


@pytest.mark.parametrize("model, words", [
    ("raise RuntimeError('no licence\\nfor this model')", ["model.file", "raised RuntimeError: no licence for this"]),
    ("import sys\nsys.exit(3)", ["model.file", "raised SystemExit"]),
    ("def build(**p):\n    return 1 / 0", ["model.file: build()", "ZeroDivisionError"]),
])
def test_model_file_that_raises_exits_2_with_one_line(tmp_path, capsys, model, words):
    (tmp_path / "model.py").write_text(model + "\n")
    text = BASE.replace("library = \"two_mass_oscillator\"", "file = 'model.py'")
    err = _one_line_exit_2(capsys, [_scenario(tmp_path, text), "--out", str(tmp_path / "o")])
    for w in words:
        assert w in err, err


def test_docs_say_model_file_runs_python():
    docs = (EXAMPLES.parent / "docs" / "cli.md").read_text()
    assert "runs Python" in docs and "trust" in docs
    assert "EXECUTED as Python" in cli.__doc__
