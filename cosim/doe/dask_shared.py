"""A study's shared objects in Dask worker processes (its plan, with the references; :meth:`Dask.share
<cosim.doe.backends.Dask.share>`): the store each worker process keeps them in, and the worker plugin that puts
them there. Registered with the scheduler, the plugin runs on every worker present and on every worker that joins
later, as it registers and before it takes a task. Imported only where Dask is used (``distributed`` costs about
half a second to import)."""
from __future__ import annotations

import threading
from collections import OrderedDict

import distributed

#: the most recent objects a worker process keeps (a worker serves one study after the other, or a few at once)
KEPT = 4

_store = OrderedDict()      # key -> the object, pickled (unpickled by the first task that needs it)
_lock = threading.Lock()


def keep(key, data):
    """Keep ``data`` (pickled bytes) under ``key`` in this worker process, dropping the oldest beyond :data:`KEPT`."""
    with _lock:
        _store[key] = data
        while len(_store) > KEPT:
            _store.popitem(last=False)


def get(key):
    """The pickled object under ``key``, or None where this worker process does not hold it."""
    with _lock:
        return _store.get(key)


def forget():
    """Drop every object (a test's stand-in for a worker that lost them)."""
    with _lock:
        _store.clear()


def plugin_name(key):
    return f"cosim-doe-shared-{key}"


class SharedObject(distributed.WorkerPlugin):
    """One shared object: ``data`` (pickled bytes) kept under ``key`` in each worker process (:func:`keep`)."""

    idempotent = True       # registered once per key

    def __init__(self, key, data):
        self.key, self.data = key, data

    def setup(self, worker):
        keep(self.key, self.data)
