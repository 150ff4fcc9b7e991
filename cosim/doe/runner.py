"""Executing a study's runs: build each run's simulate options in the caller, compute the monolithic references
once per distinct system (:mod:`cosim.doe.reference`), run the co-simulations on a backend
(:mod:`cosim.doe.backends`), and write every finished run to the checkpoint as it arrives.

Failed co-simulations (:class:`cosim.DivergenceError`, :class:`cosim.SolverError`) are rows with status
"diverged" / "solver_error" and the error's message; their responses are computed from the partial result where
possible. A build function or responses that raise, or options cosim.simulate refuses, stop the study with a
:class:`StudyError` naming the run and its parameters (the runs finished before are kept in the checkpoint).
Ctrl-C (SIGINT, when the study runs in the main thread) stops the study between runs: runs not started are
cancelled, runs in progress finish and are written (a second Ctrl-C stops at once), then KeyboardInterrupt
propagates. Nothing is lost and, on resume, no finished run is repeated.
"""
from __future__ import annotations

import signal
import threading
import time
from collections import defaultdict

from ..simulate import simulate as _simulate
from ..errors import DivergenceError, SolverError
from ..system import CoupledSystem
from . import reference as _ref
from .errors import StudyError
from .responses import to_row

_MSG_MAX = 2000


class PerRun:
    """Compute this run's reference after the run, on its result's grid."""

    def __init__(self, options):
        self.options = options


def run_one(run, kw, ref, responses):
    """One co-simulation and its responses -> row dict (``error`` set for a study error)."""
    kw = dict(kw)
    system = kw.pop("system")
    t0 = time.perf_counter()
    status, message = "ok", ""
    try:
        res = _simulate(system, **kw)
    except DivergenceError as exc:
        res, status, message = exc.result, "diverged", str(exc)
    except SolverError as exc:
        res, status, message = exc.result, "solver_error", str(exc)
    except (ValueError, TypeError) as exc:
        return {"run": run, "error": f"cosim.simulate refused the options: {type(exc).__name__}: {exc}"}
    wall = time.perf_counter() - t0
    if isinstance(ref, PerRun):
        ref = (_ref.compute(system, kw["t_end"], res.t, ref.options, kw.get("x0"), kw.get("start_values"))
               if res is not None and len(res.t) >= 2 else None)
    if isinstance(ref, _ref.RefFailure):
        if status == "ok":
            status = "reference_failed"
        message = (message + "; " if message else "") + ref.message
        ref = None
    try:
        values = to_row(responses(res, ref))
    except Exception as exc:
        if status == "ok":
            return {"run": run, "error": f"responses raised {type(exc).__name__}: {exc}"}
        values = {}
    return {"run": run, "status": status, "message": message[:_MSG_MAX], "wall": wall, "responses": values}


def run_chunk(items, responses):
    """Several runs in one task: items = [(run, kw, ref), ...]."""
    return [run_one(run, kw, ref, responses) for run, kw, ref in items]


def run_built_chunk(build, items, responses):
    """Several runs in one task of a process pool or a Dask cluster: items = [(run, params, ref), ...]; the worker
    calls ``build`` itself (the simulate arguments, e.g. a cosim.PreStep with its C identifier state, need not be
    picklable, and the parent does not serialise them), then runs as :func:`run_chunk`."""
    out = []
    for run, p, ref in items:
        try:
            kw = check_build_output(build(dict(p)), run, p)
        except Exception as exc:
            out.append({"run": run, "error": f"build raised {type(exc).__name__} in the worker: {exc}"})
            continue
        out.append(run_one(run, kw, ref, responses))
    return out


_REF_ARGS = ("system", "t_end", "x0", "start_values")


def compute_reference(kw, grid, options):
    return _ref.compute(kw["system"], kw["t_end"], grid, options, kw.get("x0"), kw.get("start_values"))


def _fmt(params):
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def check_build_output(kw, run, params):
    if not isinstance(kw, dict):
        raise StudyError(f"build: must return a dict of cosim.simulate arguments with 'system', got "
                         f"{type(kw).__name__} for run {run} ({_fmt(params)})")
    if not isinstance(kw.get("system"), CoupledSystem):
        raise StudyError(f"build: the dict for run {run} ({_fmt(params)}) has no 'system' (a cosim.CoupledSystem); "
                         f"keys: {sorted(kw)}")
    if "t_end" not in kw:
        raise StudyError(f"build: the dict for run {run} ({_fmt(params)}) has no 't_end'")
    return kw


def execute(*, pending, params, build, responses, reference, backend, checkpoint, progress, chunksize, rows):
    """Run the ``pending`` run numbers; finished rows go to ``rows`` (dict run -> row) and the checkpoint."""
    bar = progress
    inflight = {}                      # future -> ("runs", [run, ...]) | ("ref", key)
    refs = {}                          # key -> shared reference (or RefFailure)
    keepalive = {}                     # key -> objects whose identity the key uses
    waiting = defaultdict(list)        # key -> [(run, kw)] parked until the reference is there
    parked = 0
    ready = []                         # [(run, kw, ref)] not yet submitted
    it = iter(pending)
    exhausted = False
    ref_options = reference
    grids = {}                         # grid specification -> predicted grid
    options_key = None
    if reference is not None:
        import hashlib
        oh = hashlib.sha256()
        _ref._feed(oh, reference, keepalive.setdefault("options", []))
        options_key = oh.digest()
    park_limit = max(64, backend.window * chunksize)
    # a pool of processes or a Dask cluster with worker processes: ship (run, parameters) and let the worker build
    # (the parent builds too, for the checks and the reference key, but serialises no systems or couplings)
    remote = backend.name == "processes" or (backend.name == "dask" and not getattr(backend, "in_process", False))

    def submit_ready(flush=False):
        while ready and (len(ready) >= chunksize or flush):
            part = ready[:chunksize]
            del ready[:chunksize]
            if remote:
                f = backend.submit(run_built_chunk, build, part, responses)
            else:
                f = backend.submit(run_chunk, part, responses)
            inflight[f] = ("runs", [r for r, _, _ in part])

    def feed():
        nonlocal exhausted, parked
        while not exhausted and len(inflight) < backend.window and parked <= park_limit:
            run = next(it, None)
            if run is None:
                exhausted = True
                break
            p = params(run)
            try:
                kw = build(dict(p))
            except Exception as exc:
                raise StudyError(f"build: raised {type(exc).__name__} for run {run} ({_fmt(p)}): {exc}") from exc
            kw = check_build_output(kw, run, p)
            payload = dict(p) if remote else kw
            if reference is None:
                ready.append((run, payload, None))
            else:
                key, grid, keep = _ref.reference_key(kw, ref_options, grids, options_key)
                if key == _ref.PER_RUN:
                    ready.append((run, payload, PerRun(ref_options)))
                elif key in refs:
                    ready.append((run, payload, refs[key]))
                else:
                    if key not in waiting:
                        keepalive[key] = keep
                        rkw = {k: kw[k] for k in _REF_ARGS if k in kw} if remote else kw
                        f = backend.submit(compute_reference, rkw, grid, ref_options)
                        inflight[f] = ("ref", key)
                    waiting[key].append((run, payload))
                    parked += 1
            submit_ready()
        if exhausted or parked > park_limit or len(inflight) < backend.window:
            submit_ready(flush=True)

    def take(f):
        nonlocal parked
        kind, what = inflight.pop(f)
        out = f.result()
        if kind == "ref":
            shared = backend.share(out) if not isinstance(out, _ref.RefFailure) else out
            refs[what] = shared
            for run, kw in waiting.pop(what, []):
                ready.append((run, kw, shared))
                parked -= 1
            submit_ready(flush=True)
            return
        good = [r for r in out if "error" not in r]
        bad = [r for r in out if "error" in r]
        if good:
            if checkpoint is not None:
                checkpoint.write(good, params)
            for r in good:
                rows[r["run"]] = r
            if bar is not None:
                bar.update(len(good))
        if bad:
            r = bad[0]
            raise StudyError(f"run {r['run']} ({_fmt(params(r['run']))}): {r['error']}")

    stop = []

    def on_sigint(signum, frame):
        if stop:                       # the second Ctrl-C: stop at once
            raise KeyboardInterrupt
        stop.append(signum)

    handler = None
    if threading.current_thread() is threading.main_thread():
        handler = signal.signal(signal.SIGINT, on_sigint)
    try:
        feed()
        while inflight and not stop:
            for f in backend.wait(list(inflight), 0.25):
                take(f)
            if not stop:
                feed()
        if stop:
            _drain(backend, inflight, take)
            raise KeyboardInterrupt
    except BaseException:
        backend.cancel(list(inflight))
        raise
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def _drain(backend, inflight, take):
    """After Ctrl-C: cancel the tasks not started; write the runs in progress once they finish (a pool's workers
    ignore SIGINT; Dask tasks are cancelled)."""
    backend.cancel(list(inflight))
    if backend.name == "dask":
        return
    for f in list(inflight):
        if f.cancelled():
            inflight.pop(f)
            continue
        try:
            f.result()
        except BaseException:
            inflight.pop(f, None)
            continue
        if inflight[f][0] == "runs":
            try:
                take(f)
            except StudyError:
                pass
        else:
            inflight.pop(f)
