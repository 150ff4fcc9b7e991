"""Where the runs of a study execute: in the calling thread ("serial"), a thread pool ("threads": cosim.simulate
releases the GIL in C, and the units of one run never share state), a process pool ("processes": functions and
systems travel with cloudpickle, so lambdas work; worker processes ignore SIGINT, the parent handles Ctrl-C), or any
Dask ``distributed.Client`` (a LocalCluster on one machine, or the same code on a cluster, e.g. dask-jobqueue's
SLURMCluster or ``distributed.SSHCluster``).

``abort`` (a study's second Ctrl-C) stops at once on every backend: worker processes are terminated; runs in a
thread pool or on Dask workers see their :class:`cosim._cancel.Cancel` flag (read by the C core every 5 ms) and end
with KeyboardInterrupt; tasks not started are cancelled."""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures as cf
import multiprocessing
import numbers
import os
import pickle
import signal
import threading
import time
import uuid

from .._cancel import Cancel, scope
from ..simulate import parallel_runs

#: how long abort waits for the runs in a thread pool to see their flag (they stop within ~5 ms)
ABORT_JOIN = 0.5
#: how long a Dask worker waits for the study's runs to stop after an abort (they stop within ~5 ms, or once the
#: NumPy call they are in returns)
STOP_WAIT = 0.3
#: seconds of a worker's time per batch of runs (cosim.doe.runner.Batches): long enough that the dispatch is lost in
#: it, short enough that a kill -9 (which loses the batches in flight) and a Ctrl-C (which waits for them) cost
#: little. A task costs about a millisecond of CPU with a process pool, 6-8 ms with Dask (measured on 2 loaded cores:
#: scheduler and client 4, the worker's event loop 2.5, the study layer 0.6), taken from the cores the runs need
BATCH_SECONDS = {"processes": 0.25, "dask": 1.0}


class _Done(cf.Future):
    def __init__(self, fn, args):
        super().__init__()
        self.set_result(fn(*args))


class Serial:
    """Runs every task when it is submitted (no pool; KeyboardInterrupt comes straight from the run)."""

    def abort(self):
        pass
    name = "serial"
    workers = 1
    window = 1
    batch_seconds = 0.0                   # one run per task: a Ctrl-C keeps every finished run

    def submit(self, fn, *args):
        return _Done(fn, args)

    def submit_all(self, fn, calls):
        """``fn(*args)`` for each ``args`` of ``calls`` -> their futures, in order."""
        return [self.submit(fn, *args) for args in calls]

    def result(self, future):
        return future.result()

    def wait(self, futures, timeout=None):
        return set(futures)

    def share(self, obj):
        return obj

    def cancel(self, futures):
        pass

    def close(self):
        pass


class Pool:
    """A concurrent.futures pool of threads or processes. A process pool outlives its study: kept (idle) for the
    next study with as many workers in this process (:data:`_idle`), so that a study does not pay for starting
    processes and importing cosim in them; it ends with this process, or with :meth:`abort`."""

    def __init__(self, kind, workers):
        self.name, self.workers = kind, workers
        self.window = 2 * workers
        self.batch_seconds = BATCH_SECONDS.get(kind, 0.0)   # threads: one run per task (no dispatch cost)
        self.aborted = False
        self.stop = Cancel()              # the threads' runs stop when it is set
        if kind == "threads":
            self.ex = cf.ThreadPoolExecutor(workers, thread_name_prefix="cosim-doe")
        else:
            self.ex = _take_idle(workers) or _process_pool(workers)

    def submit(self, fn, *args):
        if self.name == "processes":      # fn and args pickle by reference and value (the study travels pickled)
            return self.ex.submit(fn, *args)
        return self.ex.submit(_cancellable, self.stop, self.workers, fn, *args)

    result = Serial.result
    submit_all = Serial.submit_all

    def wait(self, futures, timeout=None):
        return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED).done

    def share(self, obj):
        if self.name == "processes":      # pickled once; each worker process unpickles it once
            import cloudpickle
            return cloudpickle.dumps(obj)
        return obj

    def cancel(self, futures):
        for f in futures:
            f.cancel()

    def close(self):
        if self.aborted:
            return
        if self.name == "processes" and not getattr(self.ex, "_broken", False):
            _keep_idle(self.workers, self.ex)
        else:
            self.ex.shutdown(wait=True, cancel_futures=True)

    def abort(self):
        """Stop at once (a second Ctrl-C): cancel what has not started, terminate the worker processes or stop the
        threads' runs (their cancel flag); the runs in progress are lost and run again on resume."""
        self.aborted = True
        self.stop.set()
        if self.name == "processes":
            for p in list((getattr(self.ex, "_processes", None) or {}).values()):
                if p.is_alive():
                    p.terminate()
        self.ex.shutdown(wait=False, cancel_futures=True)
        if self.name == "threads":       # the runs see the flag within ~5 ms: end with no thread left running
            deadline = time.monotonic() + ABORT_JOIN
            for t in list(getattr(self.ex, "_threads", ())):
                t.join(max(0.0, deadline - time.monotonic()))


#: idle process pools of this process, by number of workers (the most recent :data:`IDLE_POOLS`)
_idle = {}
_idle_lock = threading.Lock()
IDLE_POOLS = 2


def _take_idle(workers):
    with _idle_lock:
        ex = _idle.pop(workers, None)
    if ex is not None and (getattr(ex, "_broken", False) or getattr(ex, "_shutdown_thread", False)):
        ex.shutdown(wait=False)
        return None
    return ex


def _keep_idle(workers, ex):
    with _idle_lock:
        old = _idle.pop(workers, None)
        _idle[workers] = ex
        extra = list(_idle)[:-IDLE_POOLS]
        dropped = [old] + [_idle.pop(k) for k in extra]
    for e in dropped:
        if e is not None and e is not ex:
            e.shutdown(wait=False)


@atexit.register
def _close_idle():
    """At exit: end the idle pools' workers while the interpreter is whole."""
    with _idle_lock:
        pools = list(_idle.values())
        _idle.clear()
    for ex in pools:
        ex.shutdown(wait=True)


def _process_pool(workers):
    """A pool of worker processes forked from a server process that has imported cosim (forkserver: no copy of
    this process's threads; where there is none, spawn)."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("spawn")
    else:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["cosim", "cosim.doe.runner"])
        _start_forkserver()
    return cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init, initargs=(os.getpid(), workers))


def _start_forkserver():
    """Start the server (once per process) so that it imports the cosim this process runs: it is a fresh
    interpreter whose path starts at the current directory, where another cosim (e.g. a source checkout next to an
    installed one) would be found first."""
    from multiprocessing import forkserver

    from .. import __file__ as package
    root = os.path.dirname(os.path.dirname(os.path.abspath(package)))
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [root, before]))
    try:
        forkserver.ensure_running()
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


class Dask:
    """A ``distributed.Client``: tasks are submitted with ``pure=False``; the study's plan (with the references) is
    put on every worker once (:meth:`share`). Each task runs under this study's cancel flag in its worker process
    (:data:`_STOPS`, keyed by a study key), which :meth:`abort` sets on every worker."""

    def __init__(self, client):
        import distributed
        self.client = client
        self.future_type = distributed.Future
        self.name = "dask"
        self.key = uuid.uuid4().hex
        self.hosts = {}                   # host -> task threads on it (the runs that run at once there)
        self.slots = {}                   # worker address -> its task threads (where a batch can be placed)
        self.workers = 1
        self.refresh()
        self.batch_seconds = BATCH_SECONDS["dask"]
        self.finished = threading.Event()    # set when a task of this study finishes
        self.shared = {}                  # key -> the pickled objects shared with the workers (share)
        self.aborted = False
        self.calls = {}                   # future -> (fn, args) of the tasks not yet read (result)
        self.fetched = {}                 # future -> its result, fetched with others (_fetch), not yet read
        try:  # a LocalCluster(processes=False): the workers share this process (nothing to serialise)
            addresses = list(client.scheduler_info()["workers"])
            self.in_process = bool(addresses) and all(str(a).startswith("inproc://") for a in addresses)
        except Exception:  # pragma: no cover - an unusual client
            self.in_process = False

    def refresh(self):
        """Read the cluster's workers again (``hosts``, ``slots``, ``workers``, ``window``): a study places its
        batches on the workers it knows, and a cluster can grow or shrink while it runs (``cluster.scale``,
        dask-jobqueue's ``adapt``)."""
        try:
            nthreads = dict(self.client.nthreads())
        except Exception:  # pragma: no cover - a cluster going away: keep what is known
            return
        hosts = {}
        for address, n in nthreads.items():
            hosts[_host(address)] = hosts.get(_host(address), 0) + n
        self.hosts, self.slots = hosts, nthreads
        self.workers = max(1, sum(hosts.values()))
        self.window = 2 * self.workers

    def share(self, obj):
        """``obj`` in every worker's memory, for the tasks of this study: a worker plugin
        (:class:`cosim.doe.dask_shared.SharedObject`) that the scheduler runs on every worker present and on every
        worker that joins while the study runs, before it takes a task (``cluster.scale``, ``adapt``: a worker
        that joined and stole a placed batch before the study had seen it returned it refused). One message per
        worker, in parallel, as ``client.run`` (13-20 ms for 16 workers on 2 cores, where a broadcast ``scatter``
        took 35-58 ms). A worker that lacks it all the same (its copy aged out: :data:`cosim.doe.dask_shared.KEPT`) refuses its
        task (:class:`MissingShared`), which runs again with ``obj`` (:meth:`result`)."""
        if self.in_process:               # the workers are threads of this process
            return obj
        import cloudpickle

        from . import dask_shared
        key = uuid.uuid4().hex
        self.shared[key] = cloudpickle.dumps(obj)
        register = getattr(self.client, "register_plugin", None) or self.client.register_worker_plugin  # < 2023.9
        register(dask_shared.SharedObject(key, self.shared[key]), name=dask_shared.plugin_name(key))
        return Remote(key)

    def submit(self, fn, *args):
        return self.submit_all(fn, [args])[0]

    def submit_all(self, fn, calls, where=None):
        """The tasks of ``calls`` in one message to the scheduler (``client.map``), where a ``submit`` each was a
        message each: the first batches of a study at 16 workers, and those that follow a fetch of many results,
        reached their workers one after the other. ``where``: the worker address of each call (the scheduler reads
        it from a ``workers`` annotation, a lookup by task key), or None: the scheduler chooses; a placed task runs
        elsewhere if its worker is gone."""
        import dask
        # arguments other than Dask futures (which the scheduler must see to resolve them) travel as Packed bytes,
        # and so does the result
        packed = [[a if isinstance(a, self.future_type) else Packed(a) for a in args] for args in calls]
        n = len(calls)
        if not n:
            return []
        columns = ([self.key] * n, [self.hosts] * n, [fn] * n, *zip(*packed))
        if where is None or None in where:
            futures = self.client.map(_dask_task, *columns, pure=False)
        else:
            keys = [f"cosim-doe-batch-{uuid.uuid4().hex}" for _ in range(n)]
            with dask.annotate(workers=dict(zip(keys, where)).get, allow_other_workers=True):
                futures = self.client.map(_dask_task, *columns, key=keys)
        for f, args in zip(futures, calls):
            self.calls[f] = (fn, args)
            f.add_done_callback(self._finished)
        return futures

    def result(self, future):
        fn, args = self.calls.pop(future)
        try:
            packed = self.fetched.pop(future) if future in self.fetched else future.result()
            out = packed.value()
        except MissingShared:             # the task again, with the shared objects it carries itself
            return self.result(self.submit(fn, *[Remote(a.key, self.shared[a.key]) if isinstance(a, Remote) else a
                                                 for a in args]))
        if isinstance(out, Stopped):
            raise out
        return out

    def _finished(self, future):
        self.finished.set()

    def wait(self, futures, timeout=None):
        # the futures' own state, woken by their done callbacks: a distributed.wait per call costs the client's
        # event loop about a millisecond of CPU, four times a second, on the cores of the runs
        self.finished.clear()
        done = {f for f in futures if f.done()}
        if not done:
            self.finished.wait(timeout)
            done = {f for f in futures if f.done()}
        self._fetch(done)
        return done

    def _fetch(self, futures):
        """The results of finished tasks, fetched from their workers together (:meth:`result` takes them from
        here): each ``future.result()`` is a round trip through the client's event loop to a worker, 1-27 ms on
        16 busy workers, and the 32 first one-run tasks of a study came back one after the other while the workers
        waited for their next batch. A task that failed or was cancelled is left to :meth:`result`."""
        new = [f for f in futures if f not in self.fetched and f.status == "finished"]
        if len(new) > 1:
            try:
                self.fetched.update(zip(new, self.client.gather(new)))
            except Exception:             # one of them is gone or failed: each is read on its own
                pass

    def cancel(self, futures):
        # not the finished ones: Dask's cancel drops a finished task's result, which the study still reads
        pending = [f for f in futures if not f.done()]
        if pending:
            self.client.cancel(pending)

    def close(self):
        if not self.aborted and self.shared:   # (after an abort the cluster may be slow to answer: the plugin stays)
            from . import dask_shared
            for key in self.shared:       # no copy for workers that join later (the workers' copies age out)
                try:
                    self.client.unregister_worker_plugin(dask_shared.plugin_name(key))
                except Exception:  # pragma: no cover - a cluster going away
                    pass
        self.shared.clear()
        self.calls.clear()
        self.fetched.clear()

    def abort(self):
        """Stop at once: the runs in progress on the workers end within ~5 ms (their cancel flag), tasks are
        cancelled; the workers themselves belong to the cluster and stay."""
        # client.run reaches every worker outside its task threads; a thread keeps a slow cluster from holding us
        self.aborted = True
        t = threading.Thread(target=self._stop_workers, name="cosim-doe-dask-abort", daemon=True)
        t.start()
        t.join(ABORT_JOIN)

    def _stop_workers(self):
        try:
            self.client.run(_dask_stop, self.key, [f.key for f in list(self.calls)], on_error="ignore")
        except Exception:  # pragma: no cover - a cluster going away: nothing left to stop
            pass


class MissingShared(Exception):
    """A Dask worker does not hold an object of :meth:`Dask.share` (its copy aged out, or it lost it otherwise): the
    study sends the task again with the object (:meth:`Dask.result`)."""


class Remote:
    """A task's handle to an object of :meth:`Dask.share` (``key``); calling it in a worker gives the object pickled,
    from the worker's memory (or ``data``, carried by the task itself)."""

    __slots__ = ("key", "data")

    def __init__(self, key, data=None):
        self.key, self.data = key, data

    def __call__(self):
        from . import dask_shared
        if self.data is not None:
            dask_shared.keep(self.key, self.data)
            return self.data
        data = dask_shared.get(self.key)
        if data is None:
            raise MissingShared(f"this worker does not hold the study's shared object {self.key}")
        return data


#: in a Dask worker process: study key -> the Cancel flag of its tasks (one small entry per study)
_STOPS = {}
_STOPS_LOCK = threading.Lock()


def _stop_for(key):
    with _STOPS_LOCK:
        return _STOPS.setdefault(key, Cancel())


class Packed:
    """An object pickled once into bytes, as a Dask task's argument or result. Dask walks a task's lists, tuples and
    dicts element by element (to find the keys in them) and sizes its results the same way: for batches of 50-100
    runs' parameters and rows, 1-3 ms of CPU per task in the study's process and as much in the worker (measured on 2
    cores, benchmarks/README.md), taken from the cores of the runs; bytes are one opaque frame."""

    __slots__ = ("data",)

    def __init__(self, obj):
        self.data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)

    def value(self):
        return pickle.loads(self.data)

    def __sizeof__(self):                 # what Dask's memory accounting sees (dask.sizeof falls back to this)
        return object.__sizeof__(self) + len(self.data)


class Stopped(Exception):
    """A Dask task whose runs were stopped: its result, not its error (a task that raises is logged as "Compute
    Failed" by its worker, and a Dask worker handles Exceptions, not a KeyboardInterrupt); :meth:`Dask.result`
    raises it."""


def _host(address):
    """The host of a Dask address ("tcp://10.0.0.5:8786" -> "10.0.0.5"; "inproc://..." -> "inproc")."""
    rest = str(address).split("://", 1)[-1]
    return "inproc" if str(address).startswith("inproc") else rest.rsplit(":", 1)[0]


def _dask_task(key, hosts, fn, *args):
    """A task on a Dask worker: ``fn(*args)`` under the study's cancel flag. The runs' record limit is shared by
    the runs that run at once on this host: this worker's threads (in this process) times the worker processes on
    the host (``COSIM_CONCURRENT_RUNS``; not set for workers that are threads of the study's own process)."""
    import distributed
    worker = distributed.get_worker()
    threads = max(1, int(getattr(worker.state, "nthreads", 0) or getattr(worker, "nthreads", 1) or 1))
    if str(worker.address).startswith("inproc"):   # the workers are threads of this process: count them all
        threads = max(threads, hosts.get("inproc", threads))
    else:
        os.environ["COSIM_CONCURRENT_RUNS"] = str(max(1, -(-hosts.get(_host(worker.address), threads) // threads)))
    args = [a.value() if isinstance(a, Packed) else a for a in args]
    try:
        return Packed(_cancellable(_stop_for(key), threads, fn, *args))
    except KeyboardInterrupt as exc:
        return Packed(Stopped(str(exc)))


async def _dask_stop(key, tasks, dask_worker=None):
    """Run on every worker by :meth:`Dask.abort`: the study's cancel flag set, then a wait (at most
    :data:`STOP_WAIT`) until none of the study's ``tasks`` (keys) executes there any more, so that a cluster closed
    right after (``cosim doe`` after a Ctrl-C) finds none: Dask logs a warning for each task it has to cut off."""
    _stop_for(key).set()
    tasks = set(tasks)
    deadline = time.monotonic() + STOP_WAIT
    while (dask_worker is not None and time.monotonic() < deadline
           and any(ts.key in tasks for ts in dask_worker.state.executing)):
        await asyncio.sleep(0.005)


def _cancellable(stop, parallel, fn, *args):
    """``fn(*args)`` in a thread of a pool of ``parallel`` threads: its runs stop when ``stop`` is set, and share
    the record limit with the pool's other runs."""
    if stop.is_set():                  # aborted before it started
        raise KeyboardInterrupt("study stopped")
    with scope(stop), parallel_runs(parallel):
        return fn(*args)


def _worker_init(parent, workers):
    """A worker process: the parent handles Ctrl-C; the runs' record limit is shared by the pool's ``workers``
    (``COSIM_CONCURRENT_RUNS``); the worker ends itself when the parent is gone (killed with kill -9, no chance to
    stop its pool), checked twice a second."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["COSIM_CONCURRENT_RUNS"] = str(workers)
    import threading
    import time

    def watch():
        while True:
            time.sleep(0.5)
            if not _alive(parent):
                os._exit(1)

    threading.Thread(target=watch, name="cosim-doe-parent-watch", daemon=True).start()


def _alive(pid):
    """Whether process ``pid`` runs (a zombie, killed but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:             # the pid was reused by another user's process: the parent is gone
        return False
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:                     # no /proc (macOS): the signal test above decides
        return True


def _is_dask_client(obj):
    return type(obj).__name__ == "Client" and type(obj).__module__.split(".")[0] == "distributed"


def make_backend(backend, workers):
    """The executor of ``backend`` ("serial", "threads", "processes" or a distributed.Client) with ``workers``."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, numbers.Integral)
                                or workers < 1):
        raise ValueError(f"workers: expected an int >= 1 or None, got {workers!r}")
    if _is_dask_client(backend):
        if workers is not None:
            raise ValueError("workers: a Dask client has its own workers; leave workers=None")
        return Dask(backend)
    if not isinstance(backend, str):
        raise TypeError(f"backend: expected 'serial', 'threads', 'processes' or a distributed.Client, got "
                        f"{type(backend).__name__}")
    if backend == "serial":
        if workers not in (None, 1):
            raise ValueError(f"workers: the serial backend runs one run at a time, got workers={workers}")
        return Serial()
    if backend in ("threads", "processes"):
        return Pool(backend, workers or os.cpu_count() or 1)
    raise ValueError(f"backend: unknown backend {backend!r}; use 'serial', 'threads', 'processes' or a "
                     "distributed.Client")
