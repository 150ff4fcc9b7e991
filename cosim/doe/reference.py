"""Monolithic references of a study, computed once per distinct (system, time grid).

A run's reference is :func:`cosim.simulate_monolithic` of its system on the macro grid the run will have, so
:meth:`cosim.Result.error_to` compares at identical points. Two runs share a reference if their systems have equal
model specifications (matrices, parameters, sizes; Python callables by identity), connections, initial states and
grids. Runs whose grid cannot be known before they run (``startup="kraft"``) get their own reference on their
result's grid.
"""
from __future__ import annotations

import hashlib
import math
import numbers
import pickle

import numpy as np

from ..simulate import simulate_monolithic

#: key of a run whose reference is computed after the run on its own grid
PER_RUN = "per-run"


class RefFailure:
    """A reference that could not be computed (the runs that need it record the message)."""

    def __init__(self, message):
        self.message = message


def _feed(h, obj, keep):
    if obj is None or isinstance(obj, (bool, str, numbers.Number, np.generic)):
        h.update(repr((type(obj).__name__, obj)).encode())
    elif isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        h.update(f"nd{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    elif isinstance(obj, (list, tuple)):
        h.update(f"seq{len(obj)}(".encode())
        for o in obj:
            _feed(h, o, keep)
        h.update(b")")
    elif isinstance(obj, dict):
        h.update(f"map{len(obj)}(".encode())
        for k in sorted(obj, key=repr):
            _feed(h, k, keep)
            _feed(h, obj[k], keep)
        h.update(b")")
    else:  # a callable or an opaque object: by identity (kept alive by the caller so that ids are not reused)
        keep.append(obj)
        h.update(f"id{type(obj).__name__}{id(obj)}".encode())


class _Opaque(Exception):
    pass


def _flat(obj, out):
    """Append a by-value fingerprint of ``obj`` (numbers, strings, arrays and containers of them) to ``out``;
    raises _Opaque for anything else. Types are part of it (1, 1.0 and True differ)."""
    t = type(obj)
    if t is np.ndarray:
        if obj.dtype.hasobject:
            raise _Opaque
        out.append((obj.dtype.str, obj.shape, obj.tobytes()))
    elif obj is None or t is float or t is int or t is str or t is bool:
        out.append((t, obj))
    elif t is tuple or t is list:
        out.append((t, len(obj)))
        for o in obj:
            _flat(o, out)
    elif t is dict:
        out.append((t, len(obj)))
        for k in sorted(obj, key=repr):
            _flat(k, out)
            _flat(obj[k], out)
    elif isinstance(obj, np.generic) and not isinstance(obj, np.object_):
        out.append((t, obj.tobytes()))
    else:
        raise _Opaque


def system_key(system, x0=None, start_values=None, keep=None):
    """Fingerprint of a system's dynamics, connections and initial state: a tuple of the model specifications'
    bytes where they are numbers, strings and arrays (the common case; hashable, no serialisation), a pickle of
    them where they pickle by value; otherwise opaque objects such as closures count by identity."""
    keep = [] if keep is None else keep
    ci, co, cg = system.connection_arrays()
    out = []
    try:
        for s in system.subsystems:
            _flat(s.spec(), out)
            _flat(s.x0, out)
        for o in (ci, co, cg, system.r, x0, start_values):
            _flat(o, out)
        return tuple(out)
    except _Opaque:
        pass
    try:
        blob = pickle.dumps(([s.spec() for s in system.subsystems], [s.x0 for s in system.subsystems],
                             ci, co, cg, system.r, x0, start_values), protocol=5)
        return hashlib.sha256(blob).hexdigest()
    except (pickle.PicklingError, TypeError, AttributeError):
        pass
    h = hashlib.sha256()
    for s in system.subsystems:
        _feed(h, s.spec(), keep)
        _feed(h, np.asarray(s.x0, dtype=float), keep)
    for a in (ci, co, cg, np.asarray(system.r, dtype=float)):
        _feed(h, a, keep)
    _feed(h, x0 if not isinstance(x0, dict) else dict(x0), keep)
    _feed(h, start_values, keep)
    return h.hexdigest()


def predicted_grid(kw):
    """The times a co-simulation with the options ``kw`` records (None if unknown before the run)."""
    t_end = float(kw["t_end"])
    if kw.get("t_eval") is not None:
        return np.asarray(kw["t_eval"], dtype=float)
    if kw.get("output_interval") is not None:
        dt = float(kw["output_interval"])
        n = int(math.floor(t_end / dt * (1 + 1e-12)))
        t = np.arange(n + 1) * dt
        return t if t[-1] >= t_end * (1 - 1e-12) else np.append(t, t_end)
    if kw.get("startup") is not None:
        return None
    if kw.get("grid") is not None:
        return np.asarray(kw["grid"], dtype=float)
    H = float(kw["H"])
    m = t_end / H
    n = int(round(m))
    if abs(m - n) <= max(1e-9, 8 * np.finfo(float).eps * m):
        return np.linspace(0.0, t_end, n + 1)
    n = int(math.floor(m))
    return np.append(np.arange(n + 1) * H, t_end)


_GRID_OPTIONS = ("t_end", "H", "t_eval", "output_interval", "startup", "grid")


def _grid_spec(kw):
    """A hashable fingerprint of the options that define a run's recorded grid (equal specs give equal grids),
    or None if one of them is neither a number, a string nor an array."""
    spec = []
    for name in _GRID_OPTIONS:
        v = kw.get(name)
        t = type(v)
        if v is None or t is float or t is int or t is str or t is bool:
            spec.append((t.__name__, v))
        elif isinstance(v, (numbers.Number, np.generic)):
            spec.append((t.__name__, repr(v)))
        elif isinstance(v, (np.ndarray, list, tuple)):
            try:
                a = np.ascontiguousarray(v, dtype=float)
            except (TypeError, ValueError):
                return None
            spec.append(("nd", a.shape, a.tobytes()))
        else:
            return None
    return tuple(spec)


def reference_key(kw, options, grids=None, options_key=None):
    """(key, grid, keep): the cache key of the reference of a run with simulate options ``kw`` (incl. system),
    its grid, and the objects whose identity the key uses. ``grids`` (a dict kept by the caller) caches the grid
    of each grid specification, ``options_key`` the fingerprint of ``options``: the key of a run then costs one
    pickle of its model specifications."""
    if "t_end" not in kw or ("H" not in kw and "grid" not in kw):
        return PER_RUN, None, []
    spec = _grid_spec(kw)
    if spec is None:
        grids = None
    if grids is not None and spec in grids:
        grid = grids[spec]
    else:
        try:
            grid = predicted_grid(kw)
        except (TypeError, ValueError):
            grid = None
        if grids is not None:
            grids[spec] = grid
    if grid is None:
        return PER_RUN, None, []
    keep = []
    skey = system_key(kw["system"], kw.get("x0"), kw.get("start_values"), keep)
    if spec is None:
        h = hashlib.sha256()
        _feed(h, grid, keep)
        spec = h.hexdigest()
    if options_key is None:
        oh = hashlib.sha256()
        _feed(oh, options, keep)
        options_key = oh.hexdigest()
    return (skey, spec, options_key), grid, keep


def compute(system, t_end, grid, options, x0=None, start_values=None):
    """The monolithic reference on ``grid`` (a :class:`RefFailure` if it fails)."""
    from ..errors import CosimError
    try:
        return simulate_monolithic(system, float(t_end), t_eval=grid, x0=x0, start_values=start_values,
                                        **options)
    except (CosimError, ValueError, np.linalg.LinAlgError) as exc:
        return RefFailure(f"monolithic reference failed: {type(exc).__name__}: {exc}")
