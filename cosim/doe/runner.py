"""Executing a study's runs: build each run's simulate options in the caller, compute the monolithic references
once per distinct system (:mod:`cosim.doe.reference`), run the co-simulations on a backend
(:mod:`cosim.doe.backends`), and write every finished run to the checkpoint as it arrives.

A run that ends without error has status "ok", or "unstable" where its result's stability verdict says so
(:func:`run_status`). Failed runs are results: a co-simulation that diverges or whose solver fails (:class:`cosim.DivergenceError`,
:class:`cosim.SolverError`) is a row with status "diverged" / "solver_error" and the error's message, its responses
computed from the partial result where possible; a run whose build function, co-simulation or responses raise
anything else (options cosim.simulate refuses included) is a row with status "failed" and the error's type and
message. The study goes on; every finished row is written. Only a build function that returns no usable dict (no
``system``, no ``t_end``: a programming error, the same for every run) stops the study with a :class:`StudyError`.
Ctrl-C (SIGINT, when the study runs in the main thread) stops the study between runs: runs not started are
cancelled, runs in progress finish and are written (on Dask they are cancelled too), then KeyboardInterrupt
propagates. A second Ctrl-C stops within a fraction of a second on every backend (:meth:`abort` of the backend:
worker processes are terminated, runs in threads and on Dask workers see their cancel flag); the runs it stops run
again on resume. Nothing is lost and, on resume, no finished run is repeated.
"""
from __future__ import annotations

import math
import signal
import threading
import time
from collections import defaultdict

import cosim

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


def run_status(res):
    """The status of a run that ended without error: "ok", or "unstable" where the result's stability verdict
    (:attr:`cosim.Result.stable`) says so; the one place the study reads that verdict."""
    return "ok" if res.stable else "unstable"


def failed_row(run, message):
    """The row of a run that raised (status "failed", no responses)."""
    return {"run": run, "status": "failed", "message": message[:_MSG_MAX], "wall": math.nan, "responses": {}}


def _error_text(exc):
    return f"{type(exc).__name__}: {exc}"


def run_one(run, kw, ref, responses):
    """One co-simulation and its responses -> row dict."""
    kw = dict(kw)
    system = kw.pop("system")
    t0 = time.perf_counter()
    status, message = "ok", ""
    try:
        res = cosim.simulate(system, **kw)
        status = run_status(res)
    except DivergenceError as exc:
        res, status, message = exc.result, "diverged", str(exc)
    except SolverError as exc:
        res, status, message = exc.result, "solver_error", str(exc)
    except (ValueError, TypeError) as exc:
        return failed_row(run, f"cosim.simulate refused the options: {_error_text(exc)}")
    except Exception as exc:
        return failed_row(run, f"cosim.simulate raised {_error_text(exc)}")
    wall = time.perf_counter() - t0
    if isinstance(ref, PerRun):
        ref = (_ref.compute(system, kw["t_end"], res.t, ref.options, kw.get("x0"), kw.get("start_values"))
               if res is not None and len(res.t) >= 2 else None)
    if isinstance(ref, _ref.RefFailure):
        if status in ("ok", "unstable"):
            status = "reference_failed"
        message = (message + "; " if message else "") + ref.message
        ref = None
    try:
        values = to_row(responses(res, ref))
    except Exception as exc:
        if status in ("ok", "unstable"):
            return failed_row(run, f"responses raised {_error_text(exc)}")
        values = {}
    return {"run": run, "status": status, "message": message[:_MSG_MAX], "wall": wall, "responses": values}


def run_chunk(items, responses):
    """Several runs in one task: items = [(run, kw, ref), ...]."""
    return [run_one(run, kw, ref, responses) for run, kw, ref in items]


def run_built_chunk(build, items, responses, defaults):
    """Several runs in one task of a process pool or a Dask cluster: items = [(run, params, ref), ...]; the worker
    calls ``build`` itself (the simulate arguments, e.g. a cosim.PreStep with its C identifier state, need not be
    picklable, and the parent does not serialise them), adds the study's ``defaults`` (options the build did not
    set), then runs as :func:`run_chunk`."""
    out = []
    for run, p, ref in items:
        try:
            kw = with_defaults(check_build_output(build(dict(p)), run, p), defaults)
        except Exception as exc:
            out.append(failed_row(run, f"build raised {_error_text(exc)} (in the worker)"))
            continue
        out.append(run_one(run, kw, ref, responses))
    return out


_REF_ARGS = ("system", "t_end", "x0", "start_values")


def compute_reference(kw, grid, options):
    return _ref.compute(kw["system"], kw["t_end"], grid, options, kw.get("x0"), kw.get("start_values"))


def _fmt(params):
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


def with_defaults(kw, defaults):
    """The build's simulate options with the study's defaults for the options it did not set."""
    if defaults:
        kw = dict(kw)
        for k, v in defaults.items():
            kw.setdefault(k, v)
    return kw


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


def execute(*, pending, params, build, responses, reference, backend, checkpoint, progress, chunksize, rows,
            defaults=None):
    """Run the ``pending`` run numbers; finished rows go to ``rows`` (dict run -> row) and the checkpoint.
    ``defaults``: simulate options for the runs whose build does not set them (e.g. last_step)."""
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
                f = backend.submit(run_built_chunk, build, part, responses, defaults)
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
                record([failed_row(run, f"build raised {_error_text(exc)}")])
                continue
            kw = with_defaults(check_build_output(kw, run, p), defaults)
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
        record(out)

    def record(out):
        if checkpoint is not None:
            checkpoint.write(out, params)
        for r in out:
            rows[r["run"]] = r
        if bar is not None:
            bar.update(len(out))

    stop = []

    def on_sigint(signum, frame):
        if stop:                       # the second Ctrl-C: stop at once (worker processes are terminated)
            backend.abort()
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
        _salvage(inflight, take)
        raise
    finally:
        if handler is not None:
            signal.signal(signal.SIGINT, handler)


def _salvage(inflight, take):
    """On an error of the study: keep the runs whose tasks have finished (no finished run is dropped)."""
    for f in list(inflight):
        if f.done() and not f.cancelled() and inflight[f][0] == "runs":
            try:
                take(f)
            except BaseException:
                inflight.pop(f, None)


def _drain(backend, inflight, take):
    """After Ctrl-C: cancel the tasks not started; write the runs in progress once they finish (a pool's workers
    ignore SIGINT; Dask tasks are cancelled, the runs in progress on the workers stopped)."""
    backend.cancel(list(inflight))
    if backend.name == "dask":
        backend.abort()
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
            take(f)
        else:
            inflight.pop(f)
