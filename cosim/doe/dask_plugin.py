"""The Dask worker plugin that puts a study's shared objects (its plan, with the references) in the worker
processes: registered with the scheduler, it runs on every worker present and on every worker that joins later, as
it registers and before it takes a task (:meth:`cosim.doe.backends.Dask.share`). Imported only where Dask is used
(``distributed`` costs about half a second to import)."""
from __future__ import annotations

import distributed

from . import backends


class SharedObject(distributed.WorkerPlugin):
    """One object of :meth:`~cosim.doe.backends.Dask.share`: ``data`` (pickled bytes) kept under ``key`` in each
    worker process (:data:`cosim.doe.backends._SHARED`)."""

    idempotent = True       # registered once per key

    def __init__(self, key, data):
        self.key, self.data = key, data

    def setup(self, worker):
        backends._keep_shared(self.key, self.data)
