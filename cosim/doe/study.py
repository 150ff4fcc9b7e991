"""``cosim.doe.Study``: a design of experiments over co-simulation runs (genser2020 §12)."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from . import backends as _backends
from . import designs as _designs
from . import runner as _runner
from .checkpoint import Checkpoint
from .errors import StudyError
from .factors import level
from .responses import as_responses

__all__ = ["Study"]


class Study:
    """A study: a parameter table (the design), a function from one row to the arguments of
    :func:`cosim.simulate`, and the responses recorded per run.

    Parameters
    ----------
    build : ``build(p) -> dict(system=CoupledSystem, t_end=..., H=..., **other simulate arguments)``, with ``p`` the
        run's parameters {factor name: level}.
    factors : {name: levels} for ``design="full"``; {name: :class:`cosim.doe.Range` or levels} for "lhs" and
        "sobol"; None with an explicit table.
    design : "full" (full factorial), "lhs" (Latin hypercube of ``n`` runs), "sobol" (Saltelli sample of ``n``
        base samples via SALib, for :func:`cosim.doe.sobol`) or an explicit table (DataFrame, dict of columns,
        list of dicts).
    responses : ``f(res, ref) -> {name: number}`` or a list of built-in names (:mod:`cosim.doe.responses`:
        eps_mono, eps_mono_sat, stable, growth, max_rel, nrmse, macro_steps). Default: eps_mono and stable with a
        reference, stable and growth without.
    reference : True (or a dict of :func:`cosim.simulate_monolithic` options, e.g. ``{"solver": cosim.CVODE()}``)
        to compute the monolithic reference ``ref``, once per distinct system and grid.
    n, seed, second_order : size, seed and Sobol' second-order flag of the sampled designs.
    """

    def __init__(self, build, factors=None, design="full", responses=None, reference=False, *, n=None, seed=None,
                 second_order=True):
        if not callable(build):
            raise TypeError(f"build: expected a function p -> dict of cosim.simulate arguments, got "
                            f"{type(build).__name__}")
        if not isinstance(reference, (bool, dict)):
            raise TypeError(f"reference: expected True/False or a dict of simulate_monolithic options, got "
                            f"{reference!r}")
        self.build = build
        self.reference = reference
        self._ref_options = None if reference is False else ({} if reference is True else dict(reference))
        self.responses = as_responses(responses, self._ref_options is not None)
        self.design = design if isinstance(design, str) else "table"
        self.table = _designs.make_design(design, factors, n=n, seed=seed, second_order=second_order)
        self.factors = list(self.table.columns)
        self.hash = _designs.table_hash(self.table)
        self._records = None

    def __len__(self):
        return len(self.table)

    def __repr__(self):
        return f"Study({len(self)} runs, design={self.design!r}, factors={self.factors})"

    def params(self, run):
        """The parameters {factor: level} of run number ``run``."""
        if self._records is None:
            self._records = [{k: level(k, v) for k, v in zip(self.factors, row)}
                             for row in self.table.itertuples(index=False, name=None)]
        return self._records[run]

    def run(self, backend="serial", workers=None, checkpoint=None, progress=False, chunksize=None,
            commit_interval=0.05) -> pd.DataFrame:
        """Run every run of the study (those not already in ``checkpoint``) and return the table: index ``run``,
        the factors, the responses, ``status`` ("ok", "diverged", "solver_error", "reference_failed"),
        ``message`` and ``wall`` (seconds of the co-simulation).

        backend : "serial", "threads", "processes" or a ``distributed.Client``; ``workers``: the pool's size
            (default: the number of cores). Processes and Dask worker processes call ``build`` themselves (it is
            called in this process too, for the checks and the reference key): it must be deterministic, and only
            the parameters and the result rows travel.
        checkpoint : an SQLite file: finished runs are written as they finish; a study started again with the
            same file resumes where it stopped (a file of another study is refused).
        commit_interval : seconds between the checkpoint's commits (default 0.05; 0 commits every run as it
            finishes). The runs of the last interval are committed at the end, on Ctrl-C and on a study error; only
            a hard crash or kill of this process can cost them (they run again on resume).
        progress : True shows a tqdm bar (``tqdm.auto``: a widget in Jupyter) with runs/s and the time left.
        chunksize : runs per task (default 1 for threads; for processes and Dask about 4 tasks per worker, at
            most 64 runs each, to amortise the dispatch).
        """
        if chunksize is not None and (isinstance(chunksize, bool) or not isinstance(chunksize, (int, np.integer))
                                      or chunksize < 1):
            raise ValueError(f"chunksize: expected an int >= 1, got {chunksize!r}")
        if (isinstance(commit_interval, bool) or not isinstance(commit_interval, (int, float, np.floating))
                or not 0 <= commit_interval < float("inf")):
            raise ValueError(f"commit_interval: expected seconds >= 0, got {commit_interval!r}")
        commit_interval = float(commit_interval)
        if not isinstance(progress, bool):
            raise TypeError(f"progress: expected True or False, got {progress!r}")
        be = _backends.make_backend(backend, workers)
        if chunksize is None:
            # a task costs a few ms in a process pool and more in Dask (scheduling, serialising the runs' systems
            # and results): about 4 tasks per worker, at most 64 runs each, keep the workers balanced
            chunksize = 1 if be.name in ("serial", "threads") else max(1, min(64, -(-len(self) // (4 * be.workers))))
        ck = None
        rows = {}
        try:
            if checkpoint is not None:
                extra = {"sobol": self.table.attrs["sobol"]} if "sobol" in self.table.attrs else None
                ck = Checkpoint(checkpoint, self.hash, self.factors, len(self), self.design, extra,
                                commit_interval=commit_interval)
                rows = {r["run"]: r for r in ck.rows()}
            pending = [i for i in range(len(self)) if i not in rows]
            bar = None
            if progress:
                from tqdm.auto import tqdm
                bar = tqdm(total=len(self), initial=len(rows), unit="run", desc="study", smoothing=0.05)
            try:
                _runner.execute(pending=pending, params=self.params, build=self.build, responses=self.responses,
                                reference=self._ref_options, backend=be, checkpoint=ck, progress=bar,
                                chunksize=int(chunksize), rows=rows)
            except KeyboardInterrupt:
                if ck is not None:
                    print(f"\nstudy interrupted: {len(rows)} of {len(self)} runs are in {ck.path}; run again with "
                          "the same checkpoint to resume", file=sys.stderr)
                raise
            finally:
                if bar is not None:
                    bar.close()
        finally:
            be.close()
            if ck is not None:
                ck.close()
        return self._frame(rows)

    def _frame(self, rows):
        df = self.table.copy()
        order = sorted(rows)
        resp = pd.DataFrame([rows[r]["responses"] for r in order], index=pd.Index(order, name="run"))
        for c in resp.columns:
            if c in df.columns:
                raise StudyError(f"responses: {c!r} is also a factor name")
            df[c] = resp[c]
        df["status"] = pd.Series({r: rows[r]["status"] for r in order}, dtype=object)
        df["message"] = pd.Series({r: rows[r]["message"] for r in order}, dtype=object)
        df["wall"] = pd.Series({r: rows[r]["wall"] for r in order}, dtype=float)
        df.attrs = {"doe": {"design": self.design, "factors": list(self.factors), "hash": self.hash}}
        if "sobol" in self.table.attrs:
            df.attrs["sobol"] = dict(self.table.attrs["sobol"])
        return df
