"""Argument checks shared by the Python layer: one definition of what a valid real number, array, size and name
is, with messages that name the argument (bool is not a number; strings are not numbers; integers beyond the double
range and NaN are refused; inf only where allowed). Every check takes the value first and the argument's name
second."""
from __future__ import annotations

import math
import numbers
import re
import warnings

import numpy as np


def real(value, name, *, allow_inf=False, positive=False, nonneg=False, minimum=None, maximum=None, above=None,
         below=None) -> float:
    """``value`` as a float: TypeError for anything that is not a real number (bool and str included), ValueError for
    NaN, for ±inf unless ``allow_inf``, for integers too large for a double, and outside the bounds: v <= 0
    (``positive``), v < 0 (``nonneg``), v < ``minimum``, v > ``maximum``, v <= ``above``, v >= ``below``."""
    # a float skips the ABC test (simulate checks a few numbers per run, short runs feel it)
    if type(value) is not float and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name}: expected a real number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:
        raise ValueError(f"{name}: must be finite, got an integer of {int(value).bit_length()} bits") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}: must be finite, got {value!r}")
    if positive and not v > 0:
        raise ValueError(f"{name}: must be > 0, got {v!r}")
    if nonneg and not v >= 0:
        raise ValueError(f"{name}: must be >= 0, got {v!r}")
    for bound, ok, op in ((minimum, lambda b: v >= b, ">="), (maximum, lambda b: v <= b, "<="),
                          (above, lambda b: v > b, ">"), (below, lambda b: v < b, "<")):
        if bound is not None and not ok(bound):
            raise ValueError(f"{name}: must be {op} {bound}, got {v!r}")
    return v


def integer(value, name, minimum=None, maximum=None) -> int:
    """``value`` as an int: TypeError for anything that is not an integer (bool, str and float included),
    ValueError outside ``minimum``..``maximum`` (None: unbounded)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {shown(v)}")
    if maximum is not None and v > maximum:
        raise ValueError(f"{name}: must be <= {maximum}, got {shown(v)}")
    return v


def real_array(value, name, what):
    """float64 array of real input. Complex input is rejected (a cast would silently drop the imaginary part), as
    are strings and anything float() cannot convert; the error names the argument."""
    if value is None:
        raise TypeError(f"{name}: expected a real {what}, got None")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        raise TypeError(f"{name}: expected a real {what}") from None
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: expected a real {what}, got complex values")
    if a.dtype.kind not in "biufO":
        raise TypeError(f"{name}: expected a real {what}, got dtype {a.dtype}")
    try:
        return np.array(a, dtype=float)
    except OverflowError:
        raise ValueError(f"{name}: contains values too large for float64") from None
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a real {what}") from None


def matrix(value, name, shape=None):
    a = real_array(value, name, "matrix")
    if a.ndim == 0:
        a = a.reshape(1, 1)
    if a.ndim == 1 and shape is not None:
        a = a.reshape(shape) if a.size == shape[0] * shape[1] else a
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise ValueError(f"{name}: expected shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return np.ascontiguousarray(a)


def vector(value, name, n):
    a = real_array(value, name, "vector").reshape(-1)
    if a.size != n:
        raise ValueError(f"{name}: expected {n} entries, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def identifier(name):
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"name: must be an identifier-like string, got {name!r}")
    return name


#: Largest count of states, inputs or outputs of one subsystem: the C core's own cap (MAX_DIM in
#: csrc/py/specs.c), checked here too so that any larger int gets the same message (2**63 overflows C's ssize_t).
MAX_SIZE = 2**24


def shown(v):
    """A value for an error message: an int of more than 15 digits as ~1e+300 (a message is not a 300-digit
    number)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and abs(int(v)) >= 10**15:
        d = len(str(abs(int(v)))) - 1
        return f"{'-' if v < 0 else ''}~1e+{d}"
    return repr(v)


def size(v, name, minimum=0):
    """A count of states, inputs or outputs (``minimum``..MAX_SIZE)."""
    v = integer(v, name)
    if not minimum <= v <= MAX_SIZE:
        got = v if abs(v) < 10**12 else f"{float(v):.3g}"      # not a 300-digit number
        raise ValueError(f"{name}: must be in {minimum}..{MAX_SIZE}, got {got}")
    return v


def labels(labels, n, what):
    """Signal names: identifier-like, or an identifier with one element index (``u[0]``, as the default names and an
    FMU's array elements have); unique."""
    if labels is None:
        return None
    labels = list(labels)
    if len(labels) != n or not all(isinstance(s, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\[[0-9]+\])?", s)
                                   for s in labels):
        raise ValueError(f"{what}: expected {n} identifier-like names (or name[index]), got {labels!r}")
    if len(set(labels)) != n:
        raise ValueError(f"{what}: names must be unique")
    return labels


def renamed(value, old_value, name, old_name, default, *, deprecated=True):
    """The value of a keyword argument renamed from ``old_name`` to ``name``: ``old_value`` where only the old keyword
    was given (with a DeprecationWarning when ``deprecated``; False: a documented alias, such as a paper's name),
    else ``value`` (``default`` where neither was); TypeError where both were."""
    if old_value is None:
        return default if value is None else value
    if value is not None:
        raise TypeError(f"{name}: given twice (also as {'the deprecated ' if deprecated else ''}{old_name}=)")
    if deprecated:
        warnings.warn(f"{old_name}= is deprecated here; use {name}= (same values)", DeprecationWarning, stacklevel=3)
    return old_value

