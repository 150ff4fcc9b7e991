"""A Dask cluster on this machine for studies (:func:`local_cluster`) and the Dask settings it uses
(:data:`DASK_SETTINGS`), which keep the workers' cores for the runs.

A ``distributed`` server wakes up many times a second for its own bookkeeping: the worker's sampling profiler every
10 ms, the event-loop health check ("tick") every 20 ms, the memory thresholds every 100 ms, the system monitor every
0.5 s. Measured on 2 cores with 2 idle single-thread worker processes (benchmarks/doe.py has the figures under
load): 86 ms of CPU per second with the defaults (the study's process, which holds the LocalCluster's scheduler and
nannies, 36; each worker process 25), 11 ms/s with :data:`DASK_SETTINGS`; during a study these wake-ups take the
cores the runs need. The settings change no result; they drop the profiler's flame graphs in the dashboard and make
the memory and system graphs coarser. cosim applies them to the clusters it creates (:func:`local_cluster`) and never
to a cluster or client of the user's own: docs/doe.md shows how to set them there."""
from __future__ import annotations

import contextlib
import os
import signal
import threading

from .. import _check

#: the ``dask.config`` settings of the clusters cosim creates (see the module's text for what each costs)
DASK_SETTINGS = {
    "distributed.worker.profile.enabled": False,          # sampling profiler: every 10 ms in each worker
    "distributed.admin.tick.interval": "1s",              # event-loop health check: every 20 ms in each server
    "distributed.worker.memory.monitor-interval": "1s",   # memory thresholds: every 100 ms in each nanny and worker
    "distributed.admin.system-monitor.interval": "2s",    # CPU, memory and network samples: every 0.5 s
}


def local_cluster(workers=None, **options):
    """A ``distributed.LocalCluster`` of ``workers`` single-thread worker processes on this machine, created under
    :data:`DASK_SETTINGS`, for ``study.run(backend=distributed.Client(cluster))``.

    Parameters
    ----------
    workers : int >= 1 or None
        Worker processes (None: the number of cores); each runs one run at a time.
    **options
        Further ``LocalCluster`` arguments (e.g. ``memory_limit``); ``n_workers``, ``threads_per_worker`` and
        ``processes`` are set here, and this module is added to ``preload``: its ``dask_setup`` makes the
        workers ignore a terminal's Ctrl-C, which the study handles (it stops their runs).

    Returns
    -------
    distributed.LocalCluster
        Close it when done (``with local_cluster(2) as cluster, Client(cluster) as client: ...``); Ctrl-C is held
        off while it closes (about a second). Workers added later (``cluster.scale``) start with the Dask settings
        in force then.
    """
    if workers is not None:
        workers = _check.integer(workers, "workers", minimum=1)
    for name in ("n_workers", "threads_per_worker", "processes"):
        if name in options:
            raise ValueError(f"{name}: set by local_cluster (one thread per worker process); use workers=")
    import dask
    import distributed

    class Cluster(distributed.LocalCluster):
        def close(self, *args, **kwargs):
            with _sigint_held():
                return super().close(*args, **kwargs)

    options.setdefault("dashboard_address", None)
    preload = options.pop("preload", None) or []
    options["preload"] = ([preload] if isinstance(preload, str) else list(preload)) + [__name__]   # dask_setup
    with dask.config.set(DASK_SETTINGS):
        return Cluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1, processes=True, **options)


def dask_setup(worker):
    """Run by Dask in each worker process of :func:`local_cluster` as it starts (the module is the workers'
    ``preload``): the worker ignores SIGINT. A Ctrl-C in a terminal reaches the whole process group, the workers
    included: each of them died with a KeyboardInterrupt traceback, and their nannies waited 4 s before killing them,
    while the study stops its runs through their cancel flag and closes the cluster itself."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextlib.contextmanager
def _sigint_held():
    """Ctrl-C held off while a cluster closes (about a second): a Ctrl-C inside the close left the cluster to a
    finalizer that waited 10 s for the workers at exit (a study's second Ctrl-C often lands there)."""
    main = threading.current_thread() is threading.main_thread()
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, handler)
