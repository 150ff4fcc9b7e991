"""Factors of a study: named levels (full factorial) or ranges (Latin hypercube, Sobol/Saltelli)."""
from __future__ import annotations

import math
import numbers

import numpy as np

#: column names of a study's table that factors and responses may not use
RESERVED = ("run", "status", "message", "wall")


class Range:
    """A continuous factor on [low, high] for the sampled designs ("lhs", "sobol"); ``log=True`` samples
    log10 of the value uniformly (both bounds > 0)."""

    def __init__(self, low, high, log=False):
        for name, v in (("low", low), ("high", high)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"{name}: expected a real number, got {v!r}")
            if not math.isfinite(float(v)):
                raise ValueError(f"{name}: must be finite, got {v!r}")
        if not float(low) < float(high):
            raise ValueError(f"low, high: need low < high, got [{low!r}, {high!r}]")
        if not isinstance(log, bool):
            raise TypeError(f"log: expected True or False, got {log!r}")
        if log and float(low) <= 0:
            raise ValueError(f"low: a log range needs low > 0, got {low!r}")
        self.low, self.high, self.log = float(low), float(high), log

    def scale(self, u):
        """Values for the unit samples u ∈ [0, 1]."""
        u = np.asarray(u, dtype=float)
        if self.log:
            a, b = math.log10(self.low), math.log10(self.high)
            return 10.0 ** (a + u * (b - a))
        return self.low + u * (self.high - self.low)

    def __repr__(self):
        return f"Range({self.low!r}, {self.high!r}{', log=True' if self.log else ''})"

    def __eq__(self, other):
        return isinstance(other, Range) and (self.low, self.high, self.log) == (other.low, other.high, other.log)

    def __hash__(self):
        return hash((self.low, self.high, self.log))


def level(name, v):
    """One level as a plain Python value (float, int, bool or str); non-finite numbers are refused."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, (numbers.Real, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            raise ValueError(f"factors[{name!r}]: level {v!r} is not finite")
        return v
    if isinstance(v, str):
        return v
    raise TypeError(f"factors[{name!r}]: levels must be numbers, booleans or strings, got {type(v).__name__} {v!r}")


def levels(name, column) -> list:
    """The values of a design's column ``column`` (a pandas Series) as :func:`level` makes them; a column of a NumPy
    bool, int or float dtype is converted as a whole (a Python call per value took seconds for 10^5 runs)."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "bif":
        values = column.to_numpy()
        if dtype.kind != "f" or np.isfinite(values).all():
            return values.tolist()          # Python bool / int / float
    return [level(name, v) for v in column]


def check_name(name, what="factors"):
    if not isinstance(name, str) or not name:
        raise TypeError(f"{what}: names must be non-empty strings, got {name!r}")
    if name in RESERVED:
        raise ValueError(f"{what}: {name!r} is reserved for the study's own columns {RESERVED}")
    return name


def check_units(units):
    """{name: unit} of factors and responses (labels for the plots' axes) as a new dict; {} for None."""
    if units is None:
        return {}
    if not isinstance(units, dict):
        raise TypeError(f"units: expected a dict name -> unit, got {type(units).__name__}")
    for name, unit in units.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"units: names must be non-empty strings, got {name!r}")
        if not isinstance(unit, str):
            raise TypeError(f"units[{name!r}]: expected a unit string, got {unit!r}")
    return dict(units)


def check_factors(factors, allow_ranges=False):
    """{name: tuple of levels or Range} from a mapping name -> levels (1-D sequence) or Range/{"low", "high",
    "log"}; raises errors naming the factor."""
    if not isinstance(factors, dict):
        raise TypeError(f"factors: expected a dict name -> levels, got {type(factors).__name__}")
    if not factors:
        raise ValueError("factors: no factor given")
    out = {}
    for name, spec in factors.items():
        check_name(name)
        if isinstance(spec, dict):
            unknown = set(spec) - {"low", "high", "log"}
            if unknown or not {"low", "high"} <= set(spec):
                raise ValueError(f"factors[{name!r}]: a range is {{'low': ..., 'high': ..., 'log': False}}, got "
                                 f"{spec!r}")
            try:
                spec = Range(spec["low"], spec["high"], spec.get("log", False))
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"factors[{name!r}]: {exc}") from None
        if isinstance(spec, Range):
            if not allow_ranges:
                raise ValueError(f"factors[{name!r}]: a Range needs a sampled design ('lhs' or 'sobol'); the full "
                                 "factorial needs a list of levels")
            out[name] = spec
            continue
        if isinstance(spec, (str, bytes)) or not hasattr(spec, "__len__"):
            raise TypeError(f"factors[{name!r}]: expected a sequence of levels, got {spec!r}")
        arr = np.asarray(spec, dtype=object)
        if arr.ndim != 1:
            raise ValueError(f"factors[{name!r}]: expected a 1-D sequence of levels, got shape {arr.shape}")
        if arr.size == 0:
            raise ValueError(f"factors[{name!r}]: no levels (empty)")
        levels = tuple(level(name, v) for v in arr)
        seen = set()
        for v in levels:
            key = (type(v) is str, v)
            if key in seen:
                raise ValueError(f"factors[{name!r}]: level {v!r} appears more than once")
            seen.add(key)
        out[name] = levels
    return out
