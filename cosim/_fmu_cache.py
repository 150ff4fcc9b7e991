"""FMU archives unpacked once per process and content (issue 29, part 5): a second ``cosim.FMU(path)`` of the same
file reuses the unpacked directory and the parsed model description instead of unzipping and parsing again.

The key is the SHA-256 of the archive's bytes; a file's (device, inode, size, mtime) remembers its digest, so the
common case (the same unchanged file) costs one ``os.stat``. The directories live below one temporary directory of
the process, removed at exit; they are shared read-only by every FMU object of that content (an FMU that must not
share its loaded library, canBeInstantiatedOnlyOncePerProcess, gets its own copy of the binary: cosim/fmu.py).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading

from . import _archive


class Unpacked:
    """One unpacked archive: ``dir`` (its files), ``md`` (FMPy's model description), ``md_root`` (the defused XML
    root), ``size`` (unpacked bytes)."""

    def __init__(self, dir, md, md_root, size):
        self.dir, self.md, self.md_root, self.size = dir, md, md_root, size
        #: one loaded library per (binary, version, kind) kept for the process: later loads of the same binary
        #: are a reference count in the dynamic loader instead of mapping it again (about 1 ms)
        self.pins = {}
        #: the checked binary path per model identifier (containment checked once: cosim/_archive.py)
        self.binaries = {}


_lock = threading.Lock()
_digest_of = {}     # (dev, inode, size, mtime_ns) -> digest
_by_digest = {}     # digest -> Unpacked
_root = []          # the process's cache directory (created on first use)


def _cache_dir():
    if not _root:
        d = tempfile.mkdtemp(prefix="cosim_fmus_")
        atexit.register(shutil.rmtree, d, True)
        _root.append(d)
    return _root[0]


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def unpacked(path, max_unpacked):
    """The :class:`Unpacked` FMU at ``path`` (unpacked and parsed on first use of its content); ValueError for an
    archive that breaks the rules of cosim/_archive.py or has no readable modelDescription.xml."""
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:
        digest = _digest_of.get(key)
        entry = _by_digest.get(digest) if digest else None
    if entry is None:
        digest = _sha256(path)
        with _lock:
            entry = _by_digest.get(digest)
            if entry is None:
                entry = _unpack(path, max_unpacked)
                _by_digest[digest] = entry
            _digest_of[key] = digest
    if entry.size > max_unpacked:
        raise ValueError(f"path: the FMU {str(path)!r} unpacks to {entry.size} bytes, more than the limit of "
                         f"{max_unpacked} bytes (max_unpacked=; a zip bomb?)")
    return entry


def _unpack(path, max_unpacked):
    import fmpy
    d = tempfile.mkdtemp(prefix="fmu_", dir=_cache_dir())
    try:
        size = _archive.extract(path, d, max_unpacked, "FMU")
        md_path = os.path.join(d, "modelDescription.xml")
        if not os.path.isfile(md_path):
            raise ValueError(f"path: {str(path)!r} has no modelDescription.xml")
        # screened by defusedxml before FMPy's parser sees it (no entity expansion, nothing external)
        md_root = _archive.parse_xml(md_path, f"modelDescription.xml of {str(path)!r}")
        try:
            md = fmpy.read_model_description(d, validate=False)
        except Exception as e:  # FMPy raises several kinds for bad XML
            raise ValueError(f"path: {str(path)!r}: invalid modelDescription.xml ({e})") from None
    except BaseException:
        shutil.rmtree(d, ignore_errors=True)
        raise
    return Unpacked(d, md, md_root, size)
