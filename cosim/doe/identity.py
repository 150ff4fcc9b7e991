"""The identity of a study, stored in its checkpoint so that a resume never mixes runs of two studies.

A study's *definition* is a dict of JSON values, one entry per part that decides its results:

* ``design``: the design's kind, factor names, number of runs and the hash of the parameter table (every level);
* ``options``: the :func:`cosim.simulate` options that ``build`` returns for run 0 (numbers, strings and arrays by
  value, the system by its model specifications, objects such as approximations and solvers by their type and
  public attributes): a changed ``t_end`` in a closure, a global or a study file shows here;
* ``build``, ``responses``: each function's qualified name and the SHA-256 of its source (where
  :func:`inspect.getsource` can read it), and the constants it reads from its closure or module (numbers, strings,
  tuples of them, functions; not mutable state such as a list it appends to); a callable object by its class and
  public attributes; built-in responses by their names;
* ``reference``, ``last_step``: the study's options; ``cosim``: the version; ``study_id``: the user's label.

:func:`definition_hash` fingerprints a definition; :func:`differences` names what differs between two of them.
"""
from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import numbers

import numpy as np

_DEPTH = 6          # nested objects described at most this deep (beyond: their type only)
_SHOWN = 6          # differences listed in a message


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _source_sha(obj):
    return _class_source_sha(obj) if isinstance(obj, type) else _hash_source(obj)


def _hash_source(obj):
    try:
        return _sha(inspect.getsource(obj).encode())
    except (OSError, TypeError):
        return None


#: a class's source hash, once per class: :func:`inspect.getsource` parses the class's whole module for it (4 ms for
#: ``functools.partial``, every study); a class redefined (a notebook cell run again, a reload) is a new key
_class_source_sha = functools.lru_cache(maxsize=128)(_hash_source)


def _qualname(obj):
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', type(obj).__qualname__)}"


def _function(fn, depth, seen):
    out = {"function": _qualname(fn), "source_sha256": _source_sha(fn)}
    cells = getattr(fn, "__closure__", None) or ()
    names = getattr(fn.__code__, "co_freevars", ())
    closure = {}
    for name, cell in zip(names, cells):
        try:
            value = cell.cell_contents
        except ValueError:              # an empty cell (a name assigned after the function was made)
            continue
        if _constant(value):
            closure[name] = describe(value, depth + 1, seen)
    if closure:
        out["closure"] = closure
    glob = getattr(fn, "__globals__", {})
    consts = {n: describe(glob[n], depth + 1, seen) for n in sorted(set(fn.__code__.co_names))
              if n in glob and _constant(glob[n])}
    if consts:
        out["globals"] = consts
    return out


def _constant(v):
    """Values a function reads that count as part of its definition: immutable numbers, strings and tuples of
    them, and functions; mutable state it keeps (lists, dicts, counters, caches) does not."""
    if v is None or isinstance(v, (bool, numbers.Number, str, np.generic)):
        return True
    if isinstance(v, tuple):
        return all(_constant(o) for o in v)
    return inspect.isfunction(v)


def _system(system):
    from .reference import system_key
    keep = []
    key = system_key(system, keep=keep)
    if keep:                            # described by object identity: not comparable across processes
        return {"system": "opaque", "subsystems": list(system.names)}
    return {"system": key if isinstance(key, str) else _sha(repr(key).encode()), "subsystems": list(system.names)}


def describe(obj, depth=0, seen=None):
    """A JSON value that stands for ``obj``'s content (equal for equal content in any process)."""
    from ..system import CoupledSystem
    seen = set() if seen is None else seen
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, (numbers.Integral, np.integer)):
        return int(obj)
    if isinstance(obj, (numbers.Real, np.floating)):
        v = float(obj)
        return v if math.isfinite(v) else repr(v)
    if isinstance(obj, np.ndarray):
        a = np.ascontiguousarray(obj)
        if a.dtype.hasobject:
            return {"array": str(a.shape), "items": describe(a.tolist(), depth + 1, seen)}
        return {"array": f"{a.dtype.str}{a.shape}", "sha256": _sha(a.tobytes())}
    if depth > _DEPTH or id(obj) in seen:
        return {"type": _qualname(type(obj))}
    seen = seen | {id(obj)}
    if isinstance(obj, (list, tuple)):
        return [describe(o, depth + 1, seen) for o in obj]
    if isinstance(obj, dict):
        return {str(k): describe(obj[k], depth + 1, seen) for k in sorted(obj, key=str)}
    if isinstance(obj, CoupledSystem):
        return _system(obj)
    if inspect.isfunction(obj):
        return _function(obj, depth, seen)
    if inspect.ismethod(obj):
        return {"method": _function(obj.__func__, depth, seen), "of": describe(obj.__self__, depth + 1, seen)}
    state = getattr(obj, "__dict__", None)
    out = {"type": _qualname(type(obj))}
    if callable(obj) and not isinstance(obj, type):
        out["source_sha256"] = _source_sha(type(obj))
    if isinstance(state, dict):
        out["state"] = {k: describe(v, depth + 1, seen) for k, v in sorted(state.items()) if not k.startswith("_")}
    else:
        text = repr(obj)
        if " at 0x" not in text:        # a repr without an address describes the value
            out["repr"] = text
    return out


def definition_hash(definition) -> str:
    """SHA-256 of a definition (its canonical JSON)."""
    return _sha(json.dumps(definition, sort_keys=True, separators=(",", ":")).encode())


def _flatten(value, prefix, out):
    if isinstance(value, dict) and value:
        for k in value:
            _flatten(value[k], f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            _flatten(v, f"{prefix}[{i}]", out)
    else:
        out[prefix] = value
    return out


def _short(v):
    text = json.dumps(v)
    return text if len(text) <= 60 else text[:57] + "..."


def differences(old, new):
    """Lines naming what differs between two definitions ("options.t_end: 0.2 -> 0.05")."""
    a, b = _flatten(old, "", {}), _flatten(new, "", {})
    lines = []
    for key in sorted(set(a) | set(b)):
        if key not in b:
            lines.append(f"{key}: {_short(a[key])} -> (absent)")
        elif key not in a:
            lines.append(f"{key}: (absent) -> {_short(b[key])}")
        elif a[key] != b[key]:
            lines.append(f"{key}: {_short(a[key])} -> {_short(b[key])}")
    if len(lines) > _SHOWN:
        lines = lines[:_SHOWN] + [f"... and {len(lines) - _SHOWN} more"]
    return lines
