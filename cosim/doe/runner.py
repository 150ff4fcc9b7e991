"""Executing a study's runs on a backend (:mod:`cosim.doe.backends`) in batches: this process hands out run numbers
and records the rows; the workers build their runs from the parameters, compute the monolithic references they need
(:mod:`cosim.doe.reference`, once per distinct system and grid in a process; for worker processes the first run's
reference is computed here once and sent with the study), run the co-simulations and send back the rows of a batch
together. Each batch's rows are written to the checkpoint in one transaction.

A batch of a process pool or a Dask cluster is a fraction of a second of a worker's time (the backend's
``batch_seconds``; :class:`Batches`, from the measured time per run); serial and thread-pool studies run one run per
task. On a backend that places tasks on workers (Dask) each batch goes to the worker free first, and the last
batches are sized so that the workers end together (:class:`Placement`). A batch is the unit of loss: a kill -9 of
this process loses the rows of the batches in flight (they run again on resume), never a row that was written, and
no run is in the table twice.

A run that ends without error has status "ok", or "unstable" where its result's stability verdict says so
(:func:`run_status`). Failed runs are results: a co-simulation that diverges or whose solver fails (:class:`cosim.DivergenceError`,
:class:`cosim.SolverError`) is a row with status "diverged" / "solver_error" and the error's message, its responses
computed from the partial result where possible; a run whose build function, co-simulation or responses raise
anything else (options cosim.simulate refuses included) is a row with status "failed" and the error's type and
message. The study goes on; every finished row is written. Only a build function that returns no usable dict (no
``system``, no ``t_end``: a programming error, the same for every run) stops the study with a :class:`StudyError`.
Ctrl-C (SIGINT, when the study runs in the main thread) stops the study between batches: batches not started are
cancelled, batches in progress finish and are written (on Dask they are cancelled too), then KeyboardInterrupt
propagates. A second Ctrl-C stops within a fraction of a second on every backend (:meth:`abort` of the backend:
worker processes are terminated, runs in threads and on Dask workers see their cancel flag); the runs it stops run
again on resume. Nothing is lost and, on resume, no finished run is repeated.
"""
from __future__ import annotations

import functools
import math
import signal
import sys
import threading
import time
import uuid
from collections import OrderedDict, deque

import cosim

from ..errors import DivergenceError, SolverError
from ..simulate import verdicts_recorded
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
    """One co-simulation and its responses -> row dict. ``ref``: the monolithic reference, a :class:`PerRun`, or
    a function that returns it, called after the co-simulation (its NumPy part cannot be stopped by a study's
    cancel flag, the co-simulation can: a study's second Ctrl-C that comes while a long run starts ends it at once)."""
    kw = dict(kw)
    system = kw.pop("system")
    t0 = time.perf_counter()
    status, message = "ok", ""
    try:
        with verdicts_recorded():      # the status column records the verdict; the study warns once at its end
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
    if status == "unstable":   # the verdict's reason (cosim/verdict.py)
        message = res.message
    if callable(ref):
        ref = ref()
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


class Plan:
    """What a worker needs to run any run of one study: ``build``, ``responses``, the simulate ``defaults``, the
    reference options and the references computed before the study started (``seed``: reference key -> result).
    A worker process unpickles it once (:func:`_state`, keyed by ``token``); the threads of a process share it."""

    def __init__(self, token, build, responses, defaults, reference, seed=None):
        self.token, self.build, self.responses, self.defaults = token, build, responses, defaults
        self.reference, self.seed = reference, dict(seed or {})


class _State:
    """A study's plan in one process, with its references: each computed once per process (the threads of a
    process wait for the one that computes it), the most recent :data:`REF_CACHE` kept."""

    def __init__(self, plan):
        self.plan = plan
        self.refs = OrderedDict(plan.seed)    # key -> reference (a Result or a RefFailure)
        self.keep = {}                        # key -> the objects whose identity the key uses
        self.computing = {}                   # key -> Event set when the thread computing it is done
        self.grids = {}                       # grid specification -> predicted grid
        self.lock = threading.Lock()
        self.computed = 0                     # references computed in this process (the seed not counted)

    def reference(self, kw):
        options = self.plan.reference
        key, grid, keep = _ref.reference_key(kw, options, self.grids, self.plan.token)
        if key == _ref.PER_RUN:
            return PerRun(options)
        while True:
            with self.lock:
                if key in self.refs:
                    self.refs.move_to_end(key)
                    return self.refs[key]
                event = self.computing.get(key)
                if event is None:
                    self.computing[key] = event = threading.Event()
                    break
            event.wait()                      # another thread computes it (or failed to: then try here)
        try:
            ref = compute_reference(kw, grid, options)
            with self.lock:
                self.refs[key], self.keep[key] = ref, keep
                self.computed += 1
                while len(self.refs) > REF_CACHE:
                    self.keep.pop(self.refs.popitem(last=False)[0], None)
            return ref
        finally:
            with self.lock:
                self.computing.pop(key, None)
            event.set()

    def run(self, run, p):
        """Build run ``run`` from its parameters ``p`` and run it -> row dict. A build that raises is a failed row;
        one that returns no usable dict raises :class:`StudyError` (a programming error: the study stops)."""
        plan = self.plan
        try:
            kw = plan.build(dict(p))
        except Exception as exc:
            return failed_row(run, f"build raised {_error_text(exc)}")
        kw = with_defaults(check_build_output(kw, run, p), plan.defaults)
        ref = None if plan.reference is None else functools.partial(self.reference, kw)
        return run_one(run, kw, ref, plan.responses)


#: references a process keeps per study (a study whose runs each have their own grid needs no more than the last)
REF_CACHE = 64
#: studies whose plans a process keeps (a worker of a reused pool serves one study after the other)
_PLANS_KEPT = 2
_plans = OrderedDict()                        # token -> _State, in this process
_plans_lock = threading.Lock()


def _state(token, plan):
    """This process's state of study ``token``; ``plan`` is the Plan, its cloudpickle, or a function that returns
    either (a backend's handle: :class:`cosim.doe.backends.Remote`); used only the first time a process sees the
    study."""
    with _plans_lock:
        st = _plans.get(token)
        if st is None:
            if callable(plan):
                plan = plan()
            if isinstance(plan, bytes):
                import cloudpickle
                plan = cloudpickle.loads(plan)
            st = _plans[token] = _State(plan)
            while len(_plans) > _PLANS_KEPT:
                _plans.popitem(last=False)
        return st


def forget(token):
    """Drop study ``token``'s state in this process (its references) at the end of the study."""
    with _plans_lock:
        _plans.pop(token, None)


def run_batch(token, plan, items):
    """A worker's task: the runs ``items`` = [(run, parameters), ...] of study ``token``, each built here ->
    (rows, seconds): rows as compact tuples (run, status, message, wall, responses) and the batch's time, from which
    the study sizes its next batches."""
    st = _state(token, plan)
    t0 = time.perf_counter()
    rows = []
    for run, p in items:
        r = st.run(run, p)
        rows.append((r["run"], r["status"], r["message"], r["wall"], r["responses"]))
    return rows, time.perf_counter() - t0


def unpack(rows):
    """The row dicts of a batch's tuples."""
    return [{"run": run, "status": status, "message": message, "wall": wall, "responses": values}
            for run, status, message, wall, values in rows]


#: the last batches of a study are at least 1/TAIL_DIVISOR of the batch target: smaller ones end the workers closer
#: together but cost more dispatches (waiting runs on 2 cores: /32 1-2 % faster with 4 and 8 workers, up to 4.5 %
#: slower with 16 Dask workers, whose servers then leave the dispatch no CPU; benchmarks/README.md)
TAIL_DIVISOR = 8


class Batches:
    """The size of the next batch of runs. A given ``chunksize`` is used as it is. Otherwise (``target`` > 0) the
    first batches are one run each, one per worker (:meth:`window`), until one has come back; then, from the
    median time per run of the recent batches' runs (each batch weighted by its runs: the first runs of a fresh
    worker, slower and alone in their batches, do not set the size once a larger batch is back), a batch is about
    ``target`` seconds of a worker's time, less towards the end (1/(2 x workers) of the runs left, so that the
    workers end together) but not under ``target`` / :data:`TAIL_DIVISOR` (each batch costs a dispatch).
    ``target`` = 0: one run per batch."""

    def __init__(self, chunksize, workers, target):
        self.fixed, self.workers, self.target = chunksize, workers, target
        self.recent = deque(maxlen=2 * workers)    # (runs, seconds) of the recent batches

    def window(self, window):
        """The batches in flight at most: the backend's ``window``, only one per worker until a batch has come back
        when its size is still unknown (a second one-run batch per worker left the workers waiting, after two
        runs, for the round trip of their results before a sized batch came: 30-100 ms at 16 Dask workers)."""
        if self.fixed is None and self.target > 0 and not self.recent:
            return min(window, self.workers)
        return window

    def observe(self, n, seconds):
        if n:
            self.recent.append((n, seconds))

    def _median_per_run(self):
        """The median time per run of the recent batches' runs (a batch counts as its runs): a slow start-up run
        does not set it, nor do the one-run batches once a larger batch has come back."""
        half, seen = sum(n for n, _ in self.recent) / 2, 0
        for n, t in sorted(self.recent, key=lambda b: b[1] / b[0]):
            seen += n
            if seen >= half:
                return t / n

    def per_run(self):
        """The estimated seconds per run (None before a batch has come back)."""
        return max(self._median_per_run(), 1e-6) if self.recent else None

    def next(self, left, fill=None):
        """The size of the next batch with ``left`` runs not yet handed out; ``fill``: the runs that would end its
        worker together with the others (:class:`Placement`), a bound on the size towards the end."""
        if self.fixed is not None:
            return self.fixed
        if self.target <= 0 or not self.recent:
            return 1
        per_run = self.per_run()
        share = -(-left // (2 * self.workers))
        n = max(1, min(left, int(self.target / per_run), max(share, int(self.target / TAIL_DIVISOR / per_run))))
        return n if fill is None else max(1, min(n, fill))


class Placement:
    """Where each batch runs, on a backend that places tasks on workers (Dask: ``backend.slots``, worker address ->
    threads). The study then knows every worker's batches in flight: it gives the next batch to the worker that is
    free first (:meth:`pick`) and sizes the last batches so that the workers end together (:meth:`fill`), where
    batches handed to whichever worker the scheduler chose ended up to a last batch apart (2 cores, waiting runs: a
    worker's idle time at the end 28 -> 14 ms at 4 workers, 53 -> 32 ms at 8; benchmarks/README.md). The first
    one-run batches, sent before the time per run is known, go where the scheduler sends them."""

    #: seconds between two reads of the cluster's workers (it may grow or shrink during a study)
    REFRESH = 1.0

    def __init__(self, slots, clock=time.perf_counter):
        self.clock = clock
        self.slots = {}
        self.queued = {}                  # address -> [runs] of each batch in flight there, oldest first
        self.since = {}                   # address -> when its oldest batch in flight began (the one before ended)
        self.where = {}                   # future -> (address, its entry in queued)
        self.update(slots)

    def update(self, slots):
        """The workers now (address -> threads): new ones are free now, gone ones get no more batches."""
        now = self.clock()
        self.slots = {a: n for a, n in slots.items() if n > 0}
        for a in self.slots:
            self.queued.setdefault(a, [])
            self.since.setdefault(a, now)
        self.threads = max(1, sum(self.slots.values()))
        self.read = now

    def free_at(self, a, per_run):
        """When worker ``a`` will have run its batches in flight."""
        return self.since[a] + sum(e[0] for e in self.queued[a]) * per_run / self.slots[a]

    def pick(self, per_run):
        """The worker with room (2 batches per thread) that is free first, or None."""
        best, when = None, None
        for a, n in self.slots.items():
            q = self.queued[a]
            if len(q) < 2 * n:
                t = (self.free_at(a, per_run), len(q))
                if when is None or t < when:
                    best, when = a, t
        return best

    def fill(self, a, per_run, left):
        """The runs that keep worker ``a`` busy until all workers would end, were the ``left`` runs shared out
        evenly over them."""
        now = self.clock()
        busy = sum(max(0.0, self.free_at(b, per_run) - now) * n for b, n in self.slots.items())
        end = now + (busy + left * per_run) / self.threads
        return int(math.ceil((end - max(now, self.free_at(a, per_run))) * self.slots[a] / per_run))

    def placed(self, a, n):
        """A batch of ``n`` runs goes to worker ``a`` -> its entry (:meth:`bind` it to the batch's future)."""
        entry = [n]
        self.queued.setdefault(a, []).append(entry)
        self.since.setdefault(a, self.clock())
        return entry

    def bind(self, future, a, entry):
        self.where[future] = (a, entry)

    def done(self, future):
        a, entry = self.where.pop(future, (None, None))
        if a is not None:
            q = self.queued[a]
            q[:] = [e for e in q if e is not entry]
            self.since[a] = self.clock()


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
    """Run the ``pending`` run numbers in batches on ``backend``; finished rows go to ``rows`` (dict run -> row)
    and the checkpoint (one transaction per batch, or per ``commit_interval``). ``chunksize``: runs per batch (None:
    sized from the measured time per run, :class:`Batches`). ``defaults``: simulate options for the runs whose
    build does not set them (e.g. last_step). The workers build their runs and compute the references they need
    (:class:`_State`); this process only hands out run numbers and records rows."""
    token = uuid.uuid4().hex
    plan = Plan(token, build, responses, defaults, reference)
    remote = backend.name == "processes" or (backend.name == "dask" and not getattr(backend, "in_process", False))
    if remote and pending and reference is not None:
        plan.seed = _seed(pending[0], params, build, defaults, reference, token)
    shared = backend.share(plan)
    sizes = Batches(chunksize, backend.workers, backend.batch_seconds)
    slots = getattr(backend, "slots", None)         # a backend that places batches on workers (Dask)
    placement = Placement(slots) if slots and chunksize is None and backend.batch_seconds > 0 else None
    bar = progress
    inflight = {}                      # future -> [run, ...]
    pos = 0

    def feed():
        nonlocal pos
        if placement is not None and placement.clock() - placement.read > Placement.REFRESH:
            backend.refresh()
            placement.update(backend.slots)
            sizes.workers = backend.workers
        parts, where = [], []
        while pos < len(pending) and len(inflight) + len(parts) < sizes.window(backend.window):
            a = fill = None
            per_run = sizes.per_run() if placement is not None else None
            if per_run is not None:          # (the first one-run batches go wherever the scheduler sends them)
                a = placement.pick(per_run)
                if a is None:
                    break
                fill = placement.fill(a, per_run, len(pending) - pos)
            n = sizes.next(len(pending) - pos, fill)
            parts.append(pending[pos:pos + n])
            pos += len(parts[-1])
            where.append((a, None if a is None else placement.placed(a, len(parts[-1]))))
        calls = [(token, shared, [(run, params(run)) for run in part]) for part in parts]
        addresses = [a for a, _ in where]
        if any(addresses):
            futures = backend.submit_all(run_batch, calls, addresses)
            for f, (a, entry) in zip(futures, where):
                placement.bind(f, a, entry)
        else:
            futures = backend.submit_all(run_batch, calls)
        inflight.update(zip(futures, parts))

    def take(f):
        inflight.pop(f)
        if placement is not None:
            placement.done(f)
        out, seconds = backend.result(f)
        sizes.observe(len(out), seconds)
        record(unpack(out))

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
        if backend.name != "dask":     # (Dask stops its runs at once)
            print("\nstudy: Ctrl-C: the runs in progress finish and are written, then the study stops; Ctrl-C again "
                  "stops them now (they run again on resume)", file=sys.stderr, flush=True)

    handler = None
    if threading.current_thread() is threading.main_thread():
        handler = signal.signal(signal.SIGINT, on_sigint)
    try:
        feed()
        while inflight and not stop:
            due = checkpoint.due() if checkpoint is not None else None
            for f in backend.wait(list(inflight), 0.25 if due is None else min(0.25, due)):
                take(f)
            if checkpoint is not None:
                checkpoint.commit_due()
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
        forget(token)


def _seed(run, params, build, defaults, reference, token):
    """The reference of the first run, computed here once and sent to every worker process with the study's plan
    (the references the other runs need, where they differ from it, each worker computes once). {} where the run
    cannot be built or its reference key depends on objects' identity (not comparable in another process)."""
    p = params(run)
    try:
        kw = build(dict(p))
    except Exception:                  # the worker records the failure
        return {}
    kw = with_defaults(check_build_output(kw, run, p), defaults)
    key, grid, keep = _ref.reference_key(kw, reference, {}, token)
    if key == _ref.PER_RUN or keep:
        return {}
    return {key: compute_reference(kw, grid, reference)}


def _salvage(inflight, take):
    """On an error of the study: keep the runs whose tasks have finished (no finished run is dropped)."""
    for f in list(inflight):
        if f.done() and not f.cancelled():
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
            backend.result(f)
        except BaseException:
            inflight.pop(f, None)
            continue
        take(f)
