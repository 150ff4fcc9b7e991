"""Argument checks shared by the Python layer: one definition of what a valid real number is, with messages that
name the argument (bool is not a number; integers beyond the double range and NaN are refused; inf only where
allowed)."""
from __future__ import annotations

import math
import numbers


def real(value, name, *, allow_inf=False, positive=False, nonneg=False) -> float:
    """``value`` as a float: TypeError for anything that is not a real number (bool included), ValueError for NaN,
    for ±inf unless ``allow_inf``, for integers too large for a double, and for v <= 0 (``positive``) or v < 0
    (``nonneg``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
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
    return v
