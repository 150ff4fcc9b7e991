"""Stopping runs from another thread: a :class:`Cancel` flag that the C core reads without the GIL (every 5 ms of
a run), made current for the runs of one thread with :func:`scope`. A study's second Ctrl-C sets it so that runs in
a thread pool or on a Dask worker end within a fraction of a second (``KeyboardInterrupt`` in the run's thread)."""
from __future__ import annotations

import contextlib
import threading

_local = threading.local()


class Cancel:
    """One byte the C core reads: :meth:`set` stops every run that has this flag (running or started later)."""

    __slots__ = ("flag",)

    def __init__(self):
        self.flag = bytearray(1)

    def set(self):
        self.flag[0] = 1

    def is_set(self) -> bool:
        return bool(self.flag[0])


@contextlib.contextmanager
def scope(cancel):
    """The runs this thread starts inside the ``with`` block stop when ``cancel`` is set."""
    before = getattr(_local, "cancel", None)
    _local.cancel = cancel
    try:
        yield cancel
    finally:
        _local.cancel = before


def current_flag():
    """The byte the runs of this thread pass to the C core (None: no scope)."""
    cancel = getattr(_local, "cancel", None)
    return None if cancel is None else cancel.flag
