"""``cosim.doe.Study``: a design of experiments over co-simulation runs (genser2020 §12)."""
from __future__ import annotations

import logging
import sys
import warnings

import numpy as np
import pandas as pd

from . import backends as _backends
from . import designs as _designs
from . import identity as _identity
from . import runner as _runner
from .checkpoint import MODES, Checkpoint
from ..errors import CouplingInstabilityWarning
from .errors import StudyError
from .factors import check_units, levels
from .responses import UNITS, as_responses

__all__ = ["Study"]

log = logging.getLogger("cosim.doe")
LAST_STEPS = ("shorten", "error")


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
    last_step : "shorten" (default): a run whose ``t_end`` is not a multiple of its ``H`` (a continuous factor H or
        t_end of a sampled design) ends with a shortened macro step; "error": such a run fails as in
        :func:`cosim.simulate`. A ``last_step`` that ``build`` returns wins.
    max_runs : the largest design built (default :data:`cosim.doe.designs.MAX_RUNS`, 10⁶); a larger one is refused
        with its size before it is built.
    study_id : an optional label stored in the checkpoint: a resume with another label is refused.
    units : {factor or response name: unit}, e.g. ``{"H": "s", "ck": "N/m"}``: labels only (no value is
        converted, the checkpoint does not store them). The table :meth:`run` returns carries them, with the
        built-in responses' (``cosim.doe.responses.UNITS``, dimensionless "-"), in ``attrs["doe"]["units"]``,
        from where :mod:`cosim.doe.plots` writes them on the axes (``H [s]``).

    Examples
    --------
    >>> import cosim
    >>> from cosim import doe
    >>> study = doe.Study(build=lambda p: dict(system=cosim.models.two_mass_oscillator(), H=p["H"], t_end=0.05,
    ...                                        solver=cosim.Exact()),
    ...                   factors={"H": [1e-3, 5e-4]}, responses=["eps_mono", "stable"], reference=True)
    >>> table = study.run()
    >>> list(table["status"]), bool((table["eps_mono"] < 0.1).all())
    (['ok', 'ok'], True)
    """

    def __init__(self, build, factors=None, design="full", responses=None, reference=False, *, n=None, seed=None,
                 second_order=True, last_step="shorten", max_runs=_designs.MAX_RUNS, study_id=None, units=None):
        if not callable(build):
            raise TypeError(f"build: expected a function p -> dict of cosim.simulate arguments, got "
                            f"{type(build).__name__}")
        if not isinstance(reference, (bool, dict)):
            raise TypeError(f"reference: expected True/False or a dict of simulate_monolithic options, got "
                            f"{reference!r}")
        if last_step not in LAST_STEPS:
            raise ValueError(f"last_step: expected 'shorten' or 'error', got {last_step!r}")
        if study_id is not None and not isinstance(study_id, str):
            raise TypeError(f"study_id: expected a string or None, got {type(study_id).__name__}")
        self.build = build
        self.last_step = last_step
        self.study_id = study_id
        self.reference = reference
        self._ref_options = None if reference is False else ({} if reference is True else dict(reference))
        self.responses = as_responses(responses, self._ref_options is not None)
        named = getattr(self.responses, "names", ())   # built-in responses given by name
        self.units = {**{n: UNITS[n] for n in named}, **check_units(units)}
        self.design = design if isinstance(design, str) else "table"
        self.table = _designs.make_design(design, factors, n=n, seed=seed, second_order=second_order,
                                          max_runs=max_runs)
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
            columns = [levels(k, self.table.iloc[:, i]) for i, k in enumerate(self.factors)]
            self._records = [dict(zip(self.factors, row)) for row in zip(*columns)]
        return self._records[run]

    def definition(self) -> dict:
        """The study's definition, the identity its checkpoint stores (:mod:`cosim.doe.identity`): design, the
        simulate options ``build`` returns for run 0, the build and responses functions, the reference options,
        last_step, the cosim version and ``study_id``."""
        import cosim
        design = {"type": self.design, "factors": list(self.factors), "n_runs": len(self), "table_hash": self.hash}
        if "sobol" in self.table.attrs:
            design["sobol"] = _identity.describe(self.table.attrs["sobol"])
        try:
            options = _identity.describe(_runner.with_defaults(self.build(dict(self.params(0))), self._defaults()))
        except Exception as exc:   # recorded as such: a resume whose build raises the same is the same study
            options = {"build_raised": type(exc).__name__}
        return {"cosim": cosim.__version__, "study_id": self.study_id, "design": design, "options": options,
                "build": _identity.describe(self.build), "responses": _identity.describe(self.responses),
                "reference": _identity.describe(self._ref_options), "last_step": self.last_step}

    def _defaults(self):
        return {"last_step": self.last_step}

    def run(self, backend="serial", workers=None, checkpoint=None, progress=False, chunksize=None,
            commit_interval=0.05, checkpoint_mode="resume", retry_failed=False) -> pd.DataFrame:
        """Run every run of the study (those not already in ``checkpoint``) and return the table: index ``run``,
        the factors, the responses, ``status`` ("ok"; "unstable": the run ended but :attr:`cosim.Result.stable` is
        False, the run's verdict (:mod:`cosim.verdict`) finds the coupling unstable; "diverged", "solver_error": the
        co-simulation failed, its responses come from the partial result; "reference_failed"; "failed": build,
        co-simulation or responses raised, with no responses), ``message`` (the error's type and message) and ``wall`` (seconds of the
        co-simulation). Failed runs are results: the study goes on, and a summary is logged at the end (logger
        ``cosim.doe``; a warning when runs failed). The runs issue no :class:`cosim.CouplingInstabilityWarning`
        each: the study issues one at its end, with the number of unstable runs.

        backend : "serial", "threads", "processes" or a ``distributed.Client``; ``workers``: the pool's size
            (default: the number of cores). Processes and Dask worker processes call ``build`` themselves (it is
            called in this process too, for the checks and the reference key): it must be deterministic, and only
            the parameters and the result rows travel.
        checkpoint : an SQLite file: finished runs are written as they finish; a study started again with the
            same file resumes where it stopped (logged: how many runs were loaded, how many remain). The file
            stores the study's :meth:`definition`; a file of another definition is refused with what differs, a
            file that is not a checkpoint is refused untouched, a file in use by a running study is refused.
        checkpoint_mode : "resume" (default: continue a checkpoint of the same study, or start a new file),
            "new" (refuse an existing file), "overwrite" (empty an existing checkpoint and start afresh).
        retry_failed : run again the runs a resumed checkpoint holds with status "failed" (by default they are
            results and are not repeated).
        commit_interval : seconds between the checkpoint's commits (default 0.05; 0 commits every run as it
            finishes). The runs of the last interval are committed at the end, on Ctrl-C and on a study error; only
            a hard crash or kill of this process can cost them (they run again on resume).

        progress : True shows a tqdm bar (``tqdm.auto``: a widget in Jupyter) with runs/s and the time left.

        chunksize : runs per batch, the unit a worker takes and sends back (its rows are written together; a
            kill -9 loses the batches in flight). Default: 1 for serial and threads; for processes and Dask one run
            per worker first, then about 0.25 s (processes) or 1 s (Dask) of a worker's time per batch from the
            measured time per run, less towards the end (``cosim.doe.runner.Batches``; on Dask each batch goes to
            the worker free first, and the last ones end the workers together: ``cosim.doe.runner.Placement``). A
            process pool is kept for the next study with as many workers.
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
        if checkpoint_mode not in MODES:
            raise ValueError(f"checkpoint_mode: expected one of {MODES}, got {checkpoint_mode!r}")
        if not isinstance(retry_failed, bool):
            raise TypeError(f"retry_failed: expected True or False, got {retry_failed!r}")
        be = _backends.make_backend(backend, workers)
        ck = None
        rows = {}
        try:
            if checkpoint is not None:
                info = {"design": self.design, "factors": list(self.factors), "n_runs": len(self),
                        "table_hash": self.hash}
                if "sobol" in self.table.attrs:
                    info["sobol"] = self.table.attrs["sobol"]
                ck = Checkpoint(checkpoint, self.definition(), info, mode=checkpoint_mode,
                                commit_interval=commit_interval)
                rows = {r["run"]: r for r in ck.rows()}
            retry = {r for r, row in rows.items() if row["status"] == "failed"} if retry_failed else set()
            pending = [i for i in range(len(self)) if i not in rows or i in retry]
            if rows:
                failed = sum(row["status"] == "failed" for row in rows.values())
                log.info("study: resuming %s: %d runs loaded (%d failed%s), %d to run", ck.path, len(rows), failed,
                         ", retried" if retry else "", len(pending))
            bar = None
            if progress:
                from tqdm.auto import tqdm
                desc = f"study (resumed, {len(rows) - len(retry)} loaded)" if rows else "study"
                bar = tqdm(total=len(self), initial=len(rows) - len(retry), unit="run", desc=desc, smoothing=0.05)
            try:
                _runner.execute(pending=pending, params=self.params, build=self.build, responses=self.responses,
                                reference=self._ref_options, backend=be, checkpoint=ck, progress=bar,
                                chunksize=None if chunksize is None else int(chunksize), rows=rows, defaults=self._defaults())
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
        _summary(rows, len(self))
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
        df.attrs = {"doe": {"design": self.design, "factors": list(self.factors), "hash": self.hash,
                            "units": dict(self.units)}}
        if "sobol" in self.table.attrs:
            df.attrs["sobol"] = dict(self.table.attrs["sobol"])
        return df


def _summary(rows, n):
    """Log the runs' statuses; a warning naming the commonest errors when runs failed; one
    :class:`cosim.CouplingInstabilityWarning` with the number of unstable runs (once per study, not once per run
    nor per worker process)."""
    counts = {}
    for row in rows.values():
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    log.info("study: %d runs: %s", n, ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    if counts.get("unstable"):
        warnings.warn(f"study: {counts['unstable']} of {n} runs unstable: the coupling's verdict of each is in the "
                      "message column of the rows with status 'unstable'", CouplingInstabilityWarning, stacklevel=3)
    failed = [row["message"] for row in rows.values() if row["status"] == "failed"]
    if failed:
        kinds = {}                     # by the error's origin and type ("build raised ZeroDivisionError")
        for m in failed:
            key = ":".join(m.split(":")[:2])[:120]
            kinds[key] = kinds.get(key, 0) + 1
        common = sorted(kinds.items(), key=lambda kv: -kv[1])[:3]
        log.warning("study: %d of %d runs failed (status 'failed'; the message column says why), e.g. %s; a resume "
                    "runs them again with retry_failed=True", len(failed), n,
                    "; ".join(f"{v}x {k}" for k, v in common))
