"""cosim.doe checkpoints you can trust (issue 28, parts 1-3): the checkpoint stores the study's definition and
refuses a resume of another one, naming what differs; checkpoint_mode new / resume / overwrite; a foreign file is
refused untouched; a second study on the same file is refused at once; a damaged row is named; failed runs are
rows; continuous H."""
import hashlib
import logging
import sqlite3
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import cosim
from cosim import doe

T_END = 0.05


def _build(p):
    return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=T_END, H=1e-3, solver=cosim.Exact())


def _study(build=_build, responses=("growth",), **kw):
    return doe.Study(build, {"ck": [1e5, 2e5, 3e5, 4e5]}, responses=list(responses), **kw)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_changed_t_end_is_refused_naming_it_and_overwrite_starts_afresh(tmp_path, monkeypatch):
    """The defect: a changed t_end (here a module constant the build reads) resumed the old runs without a word."""
    path = tmp_path / "s.sqlite"
    first = _study().run(checkpoint=path)
    monkeypatch.setattr(sys.modules[__name__], "T_END", 0.02)
    with pytest.raises(doe.StudyError, match=r"belongs to a different study .*options\.t_end: 0\.05 -> 0\.02.*"
                                             r"checkpoint_mode='overwrite'"):
        _study().run(checkpoint=path)
    with pytest.raises(doe.StudyError, match="exists and checkpoint_mode='new'"):
        _study().run(checkpoint=path, checkpoint_mode="new")
    again = _study().run(checkpoint=path, checkpoint_mode="overwrite")
    assert not np.array_equal(again.growth, first.growth)
    assert (doe.load(path).growth.to_numpy() == again.growth.to_numpy()).all()
    pd_again = _study().run(checkpoint=path)                    # the same definition resumes
    assert (pd_again.growth == again.growth).all()


def test_changed_closure_t_end_responses_and_study_id_are_refused(tmp_path):
    path = tmp_path / "s.sqlite"

    def make(t_end):
        def build(p):
            return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=t_end, H=1e-3,
                        solver=cosim.Exact())
        return build

    _study(make(0.05), study_id="a").run(checkpoint=path)
    with pytest.raises(doe.StudyError, match=r"options\.t_end: 0\.05 -> 0\.5"):
        _study(make(0.5), study_id="a").run(checkpoint=path)
    with pytest.raises(doe.StudyError, match=r"responses\.state\.names\[0\]: \"growth\" -> \"stable\""):
        _study(make(0.05), responses=("stable",), study_id="a").run(checkpoint=path)
    with pytest.raises(doe.StudyError, match=r"study_id: \"a\" -> \"b\""):
        _study(make(0.05), study_id="b").run(checkpoint=path)
    with pytest.raises(doe.StudyError, match=r"last_step: \"shorten\" -> \"error\""):
        _study(make(0.05), study_id="a", last_step="error").run(checkpoint=path)
    assert len(_study(make(0.05), study_id="a").run(checkpoint=path)) == 4
    with pytest.raises(ValueError, match="checkpoint_mode: expected one of"):
        _study().run(checkpoint=path, checkpoint_mode="append")


def test_resume_logs_loaded_and_remaining(tmp_path, caplog):
    path = tmp_path / "s.sqlite"
    study = _study()
    study.run(checkpoint=path)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM runs WHERE run >= 1")
    with caplog.at_level(logging.INFO, logger="cosim.doe"):
        study.run(checkpoint=path, progress=True)
    assert "1 runs loaded (0 failed), 3 to run" in caplog.text


@pytest.mark.parametrize("content", ["sqlite", "text"])
def test_foreign_file_is_refused_unmodified(tmp_path, content):
    path = tmp_path / "other.db"
    if content == "sqlite":
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE things (a INTEGER)")
            db.execute("INSERT INTO things VALUES (1)")
        db.close()
    else:
        path.write_text("hello, not a database\n")
    before = _sha(path)
    for mode in ("resume", "overwrite"):
        with pytest.raises(doe.StudyError, match="is not a cosim study checkpoint .*left unchanged"):
            _study().run(checkpoint=path, checkpoint_mode=mode)
    assert _sha(path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]
    if content == "sqlite":
        with sqlite3.connect(path) as db:
            assert db.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        db.close()
    with pytest.raises(doe.StudyError, match="not a cosim study checkpoint"):
        doe.load(path)


def test_second_process_on_the_same_checkpoint_is_refused_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    holder = textwrap.dedent(f"""
        import sys, time
        from cosim.doe.checkpoint import Checkpoint
        ck = Checkpoint({str(path)!r}, {{"x": 1}})
        print("holding", flush=True)
        sys.stdin.readline()
        ck.close()
    """)
    proc = subprocess.Popen([sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "holding"
        with pytest.raises(doe.StudyError, match="is in use by another running study"):
            _study().run(checkpoint=path)
    finally:
        proc.communicate("\n", timeout=60)
    assert proc.returncode == 0
    with pytest.raises(doe.StudyError, match="belongs to a different study"):   # released: checked, not locked
        _study().run(checkpoint=path)
    with pytest.raises(doe.StudyError, match="in use"):     # two studies in one process too
        from cosim.doe.checkpoint import Checkpoint
        ck = Checkpoint(tmp_path / "t.sqlite", {"x": 1})
        try:
            Checkpoint(tmp_path / "t.sqlite", {"x": 1})
        finally:
            ck.close()


def test_damaged_row_is_named(tmp_path):
    path = tmp_path / "s.sqlite"
    study = _study()
    study.run(checkpoint=path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE runs SET responses = '{\"growth\": 1.0' WHERE run = 2")
    db.close()
    with pytest.raises(doe.StudyError, match=r"run 2 is damaged .*responses.*DELETE FROM runs WHERE run = 2"):
        study.run(checkpoint=path)
    with pytest.raises(doe.StudyError, match="run 2 is damaged"):
        doe.load(path)
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM runs WHERE run = 2")
    db.close()
    assert (study.run(checkpoint=path).status == "ok").all()


def test_old_checkpoint_without_definition_is_refused(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute("CREATE TABLE runs (run INTEGER PRIMARY KEY, params TEXT NOT NULL, status TEXT NOT NULL, "
                   "message TEXT NOT NULL, wall REAL, responses TEXT NOT NULL, finished REAL NOT NULL)")
        db.executemany("INSERT INTO meta VALUES (?, ?)", [("schema", "1"), ("table_hash", "x")])
    db.close()
    with pytest.raises(doe.StudyError, match="older cosim .*checkpoint_mode='overwrite'"):
        _study().run(checkpoint=path)
    assert len(_study().run(checkpoint=path, checkpoint_mode="overwrite")) == 4


# ---------------------------------------------------------------------------------------------- failed runs
def _sometimes(p):
    if p["ck"] in (2e5, 4e5):
        raise ZeroDivisionError(f"no model for ck={p['ck']}")
    return _build(p)


@pytest.mark.parametrize("backend", ["serial", "threads", "processes"])
def test_failed_runs_are_rows_and_no_finished_run_is_dropped(tmp_path, backend, caplog):
    """The defect: one raising build stopped the study (and dropped finished runs with threads); now each is a
    row with status "failed", and a resume does not retry them unless asked."""
    path = tmp_path / "s.sqlite"
    with caplog.at_level(logging.INFO, logger="cosim.doe"):
        df = _study(_sometimes).run(backend=backend, workers=None if backend == "serial" else 2, checkpoint=path)
    assert list(df.status) == ["ok", "failed", "ok", "failed"]
    assert df.message[1] == "build raised ZeroDivisionError: no model for ck=200000.0"
    assert np.isnan(df.wall[1]) and df.growth[[0, 2]].notna().all()
    assert sorted(doe.load(path).index) == [0, 1, 2, 3]
    assert "2 of 4 runs failed" in caplog.text and "retry_failed=True" in caplog.text
    again = _study(_sometimes).run(checkpoint=path)
    assert list(again.status) == list(df.status)


def test_a_finished_run_is_committed_while_longer_runs_go_on(tmp_path):
    """A finished run is committed within its commit_interval even when no other run finishes for a long time:
    it waited uncommitted for the next run to finish (here the whole of the long runs; a kill -9 meanwhile would
    have cost it). Two short runs, then two runs of seconds on two threads: the checkpoint, read from another
    connection meanwhile, must hold exactly the two short runs for a while."""
    import threading
    import time

    def build(p):
        t_end = 0.01 if p["ck"] < 3e5 else 10.0
        return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=t_end, H=1e-3,
                    solver=cosim.Euler(h=1e-7))

    path, seen, done = tmp_path / "s.sqlite", [], threading.Event()

    def watch():
        while not done.is_set():
            try:
                seen.append(tuple(sorted(doe.load(path).index)))
            except doe.StudyError:                  # not created yet
                pass
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        df = _study(build).run(backend="threads", workers=2, chunksize=1, checkpoint=path, commit_interval=0.05)
    finally:
        done.set()
        watcher.join()
    assert list(df.status) == ["ok"] * 4
    assert seen.count((0, 1)) >= 10, sorted(set(seen))      # >= 0.2 s with both short runs and nothing else


def test_responses_that_raise_on_the_process_pool_are_failed_rows():
    def responses(res, ref):
        if res.system.params["ck"] == 3e5:
            raise KeyError("no such signal")
        return {"g": float(res.growth)}

    df = doe.Study(_build, {"ck": [1e5, 2e5, 3e5, 4e5]}, responses=responses).run(backend="processes", workers=2)
    assert list(df.status) == ["ok", "ok", "failed", "ok"]
    assert df.message[2] == "responses raised KeyError: 'no such signal'"


# ---------------------------------------------------------------------------------------------- continuous H
def test_lhs_over_h_ck_dk_shortens_the_last_step():
    """The defect: H as a continuous factor failed on the first run ("t_end is not a multiple of H"). By default a
    study shortens the last macro step; each run equals cosim.simulate(last_step="shorten") and its reference."""
    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"], dk=p["dk"]), t_end=0.05, H=p["H"],
                    solver=cosim.Exact(), approximation=cosim.Lagrange(k=1))

    factors = {"H": doe.Range(1e-4, 2e-3, log=True), "ck": doe.Range(1e4, 1e6, log=True), "dk": doe.Range(10, 1e3)}
    study = doe.Study(build, factors, design="lhs", n=12, seed=7, responses=["eps_mono", "macro_steps"],
                      reference=True)
    df = study.run(backend="threads", workers=2)
    assert (df.status == "ok").all() and df.eps_mono.notna().all()
    assert any(abs(0.05 / h - round(0.05 / h)) > 1e-6 for h in df.H)      # the design has non-dividing H
    row = df.iloc[3]
    kw = build(study.params(3))
    res = cosim.simulate(kw.pop("system"), last_step="shorten", **kw)
    ref = cosim.simulate_monolithic(res.system, 0.05, t_eval=res.t)
    assert res.t[-1] == 0.05 and row.macro_steps == len(res.t) - 1
    assert row.eps_mono == doe.eps_mono(res, ref)
    strict = doe.Study(build, factors, design="lhs", n=12, seed=7, responses=["macro_steps"], last_step="error").run()
    bad = strict[strict.status == "failed"]
    assert len(bad) >= 1 and bad.message.str.contains("is not a multiple of H").all()
    with pytest.raises(ValueError, match="last_step"):
        doe.Study(build, factors, design="lhs", n=2, last_step="grid")


def test_continuous_t_end_factor():
    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(), t_end=p["t_end"], H=1e-3, solver=cosim.Exact())

    df = doe.Study(build, {"t_end": doe.Range(0.01, 0.02)}, design="lhs", n=5, seed=1,
                   responses=["macro_steps"]).run()
    assert df.status.isin(["ok", "unstable"]).all()       # every run ended (10-20 ms: not a period of the rule)
    np.testing.assert_array_equal(df.macro_steps, np.ceil(df.t_end / 1e-3 - 1e-9).astype(int))


def test_design_size_is_checked_before_it_is_built():
    """The defect: a design of 1e10 runs failed with MemoryError."""
    big = {f"f{i}": list(range(10)) for i in range(10)}
    with pytest.raises(ValueError, match=r"design: the full factorial \(10 f0 x .*\) has 10000000000 runs, more "
                                         "than max_runs = 1000000"):
        doe.Study(_build, big)
    with pytest.raises(ValueError, match="the Latin hypercube has 2000 runs, more than max_runs = 1000"):
        doe.Study(_build, {"x": doe.Range(0, 1)}, design="lhs", n=2000, max_runs=1000)
    with pytest.raises(ValueError, match="the Saltelli sample has 48 runs"):
        doe.Study(_build, {"x": doe.Range(0, 1), "y": doe.Range(0, 1)}, design="sobol", n=8, max_runs=40)
    assert len(doe.Study(_build, {"x": doe.Range(0, 1)}, design="lhs", n=1000, max_runs=1000)) == 1000


def _module_from(path, text, monkeypatch):
    import importlib.util
    path.write_text(textwrap.dedent(text))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)     # where inspect finds a class's file
    spec.loader.exec_module(module)
    return module


def test_class_source_read_once_per_class_and_differs_when_redefined(tmp_path, monkeypatch):
    from cosim.doe import identity
    calls = []
    getsource = identity.inspect.getsource
    monkeypatch.setattr(identity.inspect, "getsource", lambda obj: calls.append(obj) or getsource(obj))
    a = _module_from(tmp_path / "build_a.py", """
        class Build:
            def __call__(self, p):
                return p
        """, monkeypatch)
    first = identity.describe(a.Build())
    again = identity.describe(a.Build())
    assert first == again and first["source_sha256"] is not None
    assert calls.count(a.Build) == 1          # the module is parsed once per class, not once per study
    b = _module_from(tmp_path / "build_b.py", """
        class Build:
            def __call__(self, p):
                return dict(p, t_end=1.0)
        """, monkeypatch)
    assert identity.describe(b.Build())["source_sha256"] != first["source_sha256"]
