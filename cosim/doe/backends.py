"""Where the runs of a study execute: in the calling thread ("serial"), a thread pool ("threads": cosim.simulate
releases the GIL in C, and the units of one run never share state), a process pool ("processes": functions and
systems travel with cloudpickle, so lambdas work; worker processes ignore SIGINT, the parent handles Ctrl-C), or any
Dask ``distributed.Client`` (a LocalCluster on one machine, or the same code on a cluster, e.g. dask-jobqueue's
SLURMCluster or ``distributed.SSHCluster``)."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import numbers
import os
import signal


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

    def submit(self, fn, *args):
        return _Done(fn, args)

    def wait(self, futures, timeout=None):
        return set(futures)

    def share(self, obj):
        return obj

    def cancel(self, futures):
        pass

    def close(self):
        pass


class Pool:
    """A concurrent.futures pool of threads or processes."""

    def __init__(self, kind, workers):
        self.name, self.workers = kind, workers
        self.window = 2 * workers
        self.aborted = False
        if kind == "threads":
            self.ex = cf.ThreadPoolExecutor(workers, thread_name_prefix="cosim-doe")
        else:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            self.ex = cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_worker_init,
                                             initargs=(os.getpid(),))

    def submit(self, fn, *args):
        if self.name == "processes":
            import cloudpickle
            return self.ex.submit(_call_pickled, cloudpickle.dumps((fn, args)))
        return self.ex.submit(fn, *args)

    def wait(self, futures, timeout=None):
        return cf.wait(futures, timeout=timeout, return_when=cf.FIRST_COMPLETED).done

    def share(self, obj):
        return obj

    def cancel(self, futures):
        for f in futures:
            f.cancel()

    def close(self):
        if not self.aborted:
            self.ex.shutdown(wait=True, cancel_futures=True)

    def abort(self):
        """Stop at once (a second Ctrl-C): cancel what has not started and terminate the worker processes (the
        runs in progress are lost; they run again on resume). Threads cannot be stopped inside a C run: the pool
        is left to finish them in the background."""
        self.aborted = True
        if self.name == "processes":
            for p in list((getattr(self.ex, "_processes", None) or {}).values()):
                if p.is_alive():
                    p.terminate()
        self.ex.shutdown(wait=False, cancel_futures=True)


class Dask:
    """A ``distributed.Client``: tasks are submitted with ``pure=False``; shared objects (the references) are
    scattered once."""

    def __init__(self, client):
        self.client = client
        self.name = "dask"
        try:
            self.workers = max(1, sum(client.nthreads().values()))
        except Exception:  # pragma: no cover - a client without workers yet
            self.workers = 1
        self.window = 4 * self.workers
        try:  # a LocalCluster(processes=False): the workers share this process (nothing to serialise)
            addresses = list(client.scheduler_info()["workers"])
            self.in_process = bool(addresses) and all(str(a).startswith("inproc://") for a in addresses)
        except Exception:  # pragma: no cover - an unusual client
            self.in_process = False

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def wait(self, futures, timeout=None):
        import distributed
        try:
            return set(distributed.wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            return set()

    def share(self, obj):
        # a copy on every worker: each task finds the reference in its worker's memory (no transfer per task)
        return self.client.scatter(obj, hash=False, broadcast=not self.in_process)

    def cancel(self, futures):
        if futures:
            self.client.cancel(list(futures))

    def close(self):
        pass

    def abort(self):
        pass


def _worker_init(parent):
    """A worker process: the parent handles Ctrl-C; the worker ends itself when the parent is gone (killed with
    kill -9, no chance to stop its pool), checked twice a second."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
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


def _call_pickled(blob):
    import cloudpickle
    fn, args = cloudpickle.loads(blob)
    return fn(*args)


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
