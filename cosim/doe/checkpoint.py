"""Checkpoint of a study in SQLite (stdlib ``sqlite3``): one row per finished run, committed as runs finish.

Tables: ``meta`` (key, value: the parameter table's hash, factor names, number of runs, design) and ``runs`` (run,
params, status, message, wall, responses; JSON for params and responses). The database runs in WAL mode with
``synchronous=NORMAL``: a committed row survives a crash or a kill of the process (not a power loss), and a commit
costs microseconds, not an fsync. Finished runs are committed in groups, at most ``commit_interval`` seconds after
they finish (default 0.05 s; 0 commits every run as it arrives): a transaction per run costs about 0.1 ms of a
cache-cold CPU after each co-simulation, more than the rest of the study layer. The group is committed at the end of
the study, on Ctrl-C and on a study error, so only a hard crash or a kill of the main process can cost the runs of
the last ``commit_interval`` seconds (they run again on resume; each run is in the table once, the run number is the
primary key). A study resumed from the file skips the runs it holds; a file written by a study with another
parameter table is refused.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time

import pandas as pd

from .errors import StudyError

SCHEMA = 1


class Checkpoint:
    """An open checkpoint file for the study whose table hashes to ``table_hash``."""

    def __init__(self, path, table_hash, factors, n_runs, design="table", extra=None, commit_interval=0.0):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"checkpoint: expected a file name, got {type(path).__name__}")
        if (isinstance(commit_interval, bool) or not isinstance(commit_interval, (int, float))
                or not 0 <= commit_interval < float("inf")):
            raise ValueError(f"commit_interval: expected seconds >= 0, got {commit_interval!r}")
        self.commit_interval = float(commit_interval)
        self._pending = []
        self._last = time.monotonic()
        self.path = os.fspath(path)
        d = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(d):
            raise StudyError(f"checkpoint: the directory {d} does not exist")
        try:
            self.db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            self.db.execute("CREATE TABLE IF NOT EXISTS runs (run INTEGER PRIMARY KEY, params TEXT NOT NULL, "
                            "status TEXT NOT NULL, message TEXT NOT NULL, wall REAL, responses TEXT NOT NULL, "
                            "finished REAL NOT NULL)")
            meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError as exc:
            raise StudyError(f"checkpoint: {self.path} is not a study checkpoint (SQLite: {exc})") from None
        mine = {"schema": str(SCHEMA), "table_hash": table_hash, "factors": json.dumps(list(factors)),
                "n_runs": str(n_runs), "design": design}
        mine.update({k: json.dumps(v) for k, v in (extra or {}).items()})
        if not meta:
            with self.db:
                self.db.executemany("INSERT INTO meta VALUES (?, ?)", sorted(mine.items()))
                self.db.execute("INSERT OR REPLACE INTO meta VALUES ('created', ?)", (repr(time.time()),))
        elif meta.get("table_hash") != table_hash:
            self.db.close()
            raise StudyError(
                f"checkpoint: {self.path} belongs to a different study: its parameter table ({meta.get('n_runs')} "
                f"runs of factors {meta.get('factors')}, hash {str(meta.get('table_hash'))[:12]}) differs from this "
                f"study's ({n_runs} runs of factors {json.dumps(list(factors))}, hash {table_hash[:12]}). Use "
                "another checkpoint file, or delete this one to start over")
        self.meta = meta or mine

    def done(self):
        """Run numbers already in the file."""
        return {r for (r,) in self.db.execute("SELECT run FROM runs")}

    def write(self, rows, params):
        """Add finished runs (dicts run, status, message, wall, responses); they are committed in one transaction
        with the others of the last ``commit_interval`` seconds (at once if it is 0)."""
        now = time.time()
        self._pending.extend((r, params, now) for r in rows)
        if self.commit_interval == 0.0 or time.monotonic() - self._last >= self.commit_interval:
            self.flush()

    def flush(self):
        """Commit the runs added since the last commit."""
        self._last = time.monotonic()
        if not self._pending:
            return
        batch = [(int(r["run"]), json.dumps(params(r["run"])), r["status"], r["message"], r["wall"],
                  json.dumps(r["responses"]), now) for r, params, now in self._pending]
        with self.db:
            self.db.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
        self._pending.clear()

    def rows(self):
        """Every finished run as a dict (run, status, message, wall, responses)."""
        cur = self.db.execute("SELECT run, status, message, wall, responses FROM runs ORDER BY run")
        return [dict(run=r, status=s, message=m, wall=w, responses=json.loads(v)) for r, s, m, w, v in cur]

    def close(self):
        try:
            self.flush()
        finally:
            self.db.close()


def load(path) -> pd.DataFrame:
    """The finished runs of a checkpoint file as a table (index ``run``; factor columns, responses, status,
    message, wall), e.g. to analyse a study that is still running elsewhere."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise StudyError(f"path: no checkpoint file {path!r}")
    db = sqlite3.connect(os.fspath(path))
    try:
        cur = db.execute("SELECT run, params, status, message, wall, responses FROM runs ORDER BY run")
        recs = []
        for run, p, s, m, w, v in cur:
            rec = {"run": run, **json.loads(p), **json.loads(v), "status": s, "message": m, "wall": w}
            recs.append(rec)
    except sqlite3.DatabaseError as exc:
        raise StudyError(f"path: {path} is not a study checkpoint (SQLite: {exc})") from None
    finally:
        db.close()
    return pd.DataFrame(recs).set_index("run") if recs else pd.DataFrame(index=pd.RangeIndex(0, name="run"))
