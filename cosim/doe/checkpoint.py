"""Checkpoint of a study in SQLite (stdlib ``sqlite3``): one row per finished run, committed as runs finish.

Tables: ``meta`` (key, value: the format tag, the study's definition and its hash, the parameter table's hash,
factor names, number of runs, design) and ``runs`` (run, params, status, message, wall, responses; JSON for params
and responses). The database runs in WAL mode with ``synchronous=NORMAL``: a committed row survives a crash or a
kill of the process (not a power loss), and a commit costs microseconds, not an fsync. Finished runs are committed
in groups, at most ``commit_interval`` seconds after they finish (default 0.05 s; 0 commits every run as it
arrives): a transaction per run costs about 0.1 ms of a cache-cold CPU after each co-simulation, more than the rest
of the study layer. The group is committed at the end of the study, on Ctrl-C and on a study error, so only a hard
crash or a kill of the main process can cost the runs of the last ``commit_interval`` seconds (they run again on
resume; each run is in the table once, the run number is the primary key).

Identity and safety:

* the study's definition (:mod:`cosim.doe.identity`) is stored when the file is created; ``mode="resume"`` refuses
  a file whose definition differs, naming what differs; ``"new"`` refuses an existing file, ``"overwrite"`` empties
  a checkpoint first;
* a file that is not a cosim checkpoint (another SQLite database, any other file) is refused, opened read-only,
  never modified;
* the study holds an exclusive lock (``flock`` on the file) while it runs: a second study on the same file, in
  this or another process, is refused at once (reading with :func:`load` needs no lock);
* a damaged row is reported with its run number.
"""
from __future__ import annotations

import json
import os
import sqlite3
import time

import pandas as pd

from . import identity as _identity
from .errors import StudyError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock (documented)
    fcntl = None

SCHEMA = 2
FORMAT = "cosim.doe checkpoint"
MODES = ("resume", "new", "overwrite")
_FRESH = ("start afresh with checkpoint_mode='overwrite' (cosim doe: --checkpoint-mode overwrite), or use "
          "another checkpoint file")


def _kind(path):
    """What the file at ``path`` is, read without modifying it: "empty" (absent or 0 bytes), "cosim" (a
    checkpoint of this schema), "old" (a cosim checkpoint without a stored definition) or "foreign"; and its
    meta table."""
    if not os.path.exists(path) or (os.path.isfile(path) and os.path.getsize(path) == 0):
        return "empty", {}
    if not os.path.isfile(path):
        return "foreign", {}
    try:
        from urllib.parse import quote
        db = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=10.0)
    except sqlite3.Error:
        return "foreign", {}
    try:
        tables = {n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not {"meta", "runs"} <= tables:
            return "foreign", {}
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.Error:
        return "foreign", {}
    finally:
        db.close()
    if meta.get("format") == FORMAT:
        return "cosim", meta
    if meta.get("schema") == "1" and "table_hash" in meta:
        return "old", meta
    return "foreign", meta


class Checkpoint:
    """An open checkpoint file for the study with ``definition`` (a JSON-able dict, :mod:`cosim.doe.identity`);
    ``info`` (plain values: n_runs, factors, design, table_hash, ...) is stored beside it for :func:`load` and
    for people reading the file."""

    def __init__(self, path, definition, info=None, mode="resume", commit_interval=0.0):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"checkpoint: expected a file name, got {type(path).__name__}")
        if mode not in MODES:
            raise ValueError(f"checkpoint_mode: expected one of {MODES}, got {mode!r}")
        if (isinstance(commit_interval, bool) or not isinstance(commit_interval, (int, float))
                or not 0 <= commit_interval < float("inf")):
            raise ValueError(f"commit_interval: expected seconds >= 0, got {commit_interval!r}")
        self.commit_interval = float(commit_interval)
        self._pending = []
        self._last = time.monotonic()
        self.path = os.fspath(path)
        self.db = None
        self._lock = None
        d = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(d):
            raise StudyError(f"checkpoint: the directory {d} does not exist")
        kind, _ = self._check(mode)
        self._acquire(kind == "empty")
        try:
            self._open(definition, info or {}, mode)
        except BaseException:
            self.close()
            raise

    def _acquire(self, create):
        """The exclusive lock of the study on the file (a second study is refused at once)."""
        fd = os.open(self.path, os.O_RDWR | (os.O_CREAT if create else 0), 0o644)
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                raise StudyError(f"checkpoint: {self.path} is in use by another running study (this or another "
                                 "process); wait for it to end, or use another checkpoint file") from None
        self._lock = fd

    def _check(self, mode):
        """(kind, meta) of the file; refuses a foreign file, an existing one with mode "new", an old one unless
        overwritten."""
        kind, meta = _kind(self.path)
        if kind == "foreign":
            raise StudyError(f"checkpoint: {self.path} is not a cosim study checkpoint (it was left unchanged); "
                             "give a new file name")
        if mode == "new" and kind != "empty":
            raise StudyError(f"checkpoint: {self.path} exists and checkpoint_mode='new'; use "
                             "checkpoint_mode='resume' to continue it, 'overwrite' to start afresh, or another file")
        if kind == "old" and mode != "overwrite":
            raise StudyError(f"checkpoint: {self.path} was written by an older cosim that did not store the study's "
                             f"definition, so a resume cannot be checked; {_FRESH} (cosim.doe.load reads it)")
        return kind, meta

    def _open(self, definition, info, mode):
        # the lock is held: look again (another process may have written the file meanwhile)
        kind, meta = self._check(mode)
        self.db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if mode == "overwrite" and kind != "empty":
            with self.db:
                self.db.execute("DROP TABLE IF EXISTS runs")
                self.db.execute("DROP TABLE IF EXISTS meta")
            meta = {}
        self.db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS runs (run INTEGER PRIMARY KEY, params TEXT NOT NULL, "
                        "status TEXT NOT NULL, message TEXT NOT NULL, wall REAL, responses TEXT NOT NULL, "
                        "finished REAL NOT NULL)")
        digest = _identity.definition_hash(definition)
        if not meta:
            mine = {"format": FORMAT, "schema": str(SCHEMA), "definition": json.dumps(definition, sort_keys=True),
                    "definition_hash": digest, "created": repr(time.time())}
            mine.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in info.items()})
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", sorted(mine.items()))
            meta = mine
        elif meta.get("definition_hash") != digest:
            try:
                old = json.loads(meta.get("definition", "{}"))
            except ValueError:
                old = {}
            lines = _identity.differences(old, definition) or ["(the stored definition cannot be read)"]
            raise StudyError(f"checkpoint: {self.path} belongs to a different study (its definition differs: "
                             + "; ".join(lines) + f"); {_FRESH}")
        self.meta = meta

    def write(self, rows, params):
        """Add finished runs (dicts run, status, message, wall, responses); they are committed in one transaction
        with the others of the last ``commit_interval`` seconds (at once if it is 0)."""
        now = time.time()
        self._pending.extend((r, params, now) for r in rows)
        self.commit_due()

    def due(self):
        """Seconds until the runs added since the last commit must be committed; None when none waits."""
        return max(0.0, self._last + self.commit_interval - time.monotonic()) if self._pending else None

    def commit_due(self):
        """Commit the waiting runs once their ``commit_interval`` is over (the study calls it while it waits for
        runs too: a finished run must not wait uncommitted for the next run to finish, minutes perhaps)."""
        if self._pending and (self.commit_interval == 0.0 or time.monotonic() - self._last >= self.commit_interval):
            self.flush()

    def flush(self):
        """Commit the runs added since the last commit (a run written again, a retried failure, replaces its row)."""
        self._last = time.monotonic()
        if not self._pending or self.db is None:
            return
        batch = [(int(r["run"]), json.dumps(params(r["run"])), r["status"], r["message"], r["wall"],
                  json.dumps(r["responses"]), now) for r, params, now in self._pending]
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?, ?, ?, ?)", batch)
        self._pending.clear()

    def rows(self):
        """Every finished run as a dict (run, status, message, wall, responses); a damaged row raises a
        :class:`StudyError` naming its run."""
        cur = self.db.execute("SELECT run, status, message, wall, responses FROM runs ORDER BY run")
        return [dict(run=r, status=s, message=m, wall=w, responses=_json(v, r, "responses", self.path))
                for r, s, m, w, v in cur]

    def close(self):
        try:
            if self.db is not None:
                self.flush()
        finally:
            if self.db is not None:
                self.db.close()
                self.db = None
            if self._lock is not None:   # after the database: closing a descriptor drops the process's locks on it
                os.close(self._lock)
                self._lock = None


def _json(text, run, column, path):
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as exc:
        raise StudyError(f"checkpoint: {path}: run {run} is damaged (its {column} column is not JSON: {exc}); "
                         f"delete that row (DELETE FROM runs WHERE run = {run}) to run it again, or {_FRESH}") from None
    if not isinstance(value, dict):
        raise StudyError(f"checkpoint: {path}: run {run} is damaged (its {column} column is not a JSON object); "
                         f"delete that row (DELETE FROM runs WHERE run = {run}) to run it again, or {_FRESH}")
    return value


def load(path) -> pd.DataFrame:
    """The finished runs of a checkpoint file as a table (index ``run``; factor columns, responses, status,
    message, wall), e.g. to analyse a study that is still running elsewhere. The file is opened read-only."""
    if not isinstance(path, (str, os.PathLike)) or not os.path.isfile(path):
        raise StudyError(f"path: no checkpoint file {path!r}")
    kind, _ = _kind(os.fspath(path))
    if kind not in ("cosim", "old"):
        raise StudyError(f"path: {path} is not a cosim study checkpoint")
    from urllib.parse import quote
    db = sqlite3.connect(f"file:{quote(os.path.abspath(os.fspath(path)))}?mode=ro", uri=True, timeout=30.0)
    try:
        cur = db.execute("SELECT run, params, status, message, wall, responses FROM runs ORDER BY run")
        recs = []
        for run, p, s, m, w, v in cur:
            rec = {"run": run, **_json(p, run, "params", path), **_json(v, run, "responses", path), "status": s,
                   "message": m, "wall": w}
            recs.append(rec)
    except sqlite3.DatabaseError as exc:
        raise StudyError(f"path: {path} is not a study checkpoint (SQLite: {exc})") from None
    finally:
        db.close()
    return pd.DataFrame(recs).set_index("run") if recs else pd.DataFrame(index=pd.RangeIndex(0, name="run"))
