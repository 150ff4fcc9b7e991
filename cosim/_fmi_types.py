"""FMI variable types as cosim signals and start values (docs/fmu.md "Variable types").

Every coupled signal is a double in cosim: Float64 as it is, Float32 widened, integers (FMI 2 Integer and
Enumeration, FMI 3 Int8 .. UInt64 and Enumeration) and Booleans (0/1) converted exactly up to 2^53; an input of an
integer type takes the nearest integer of its double (an error outside the type's range), a Boolean input is true
for any value != 0. String and Binary variables and FMI 3 clocks are no signals; Strings and Binaries (bytes)
can be start values. An FMI 3 array variable (``<Dimension>``) of m elements is m signals ``name[0]`` ..
``name[m-1]`` (row-major); its size comes from the dimension's ``start`` or from the start value of the structural
parameter it names, which stays fixed. The C side moves each type with its own FMI function (csrc/fmi/fmi.c
cs_fmi_io).
"""
from __future__ import annotations

import numpy as np

from . import _core

#: the C type codes (csrc/fmi/fmi.h CS_FMI_F64, ...) by FMI 3 type name
CODES = dict(_core.codes["fmu_type"])
_FMI2 = {"Real": "Float64", "Integer": "Int32", "Enumeration": "Int32", "Boolean": "Boolean"}
_FMI3 = {t: t for t in CODES} | {"Enumeration": "Int64"}
_RANGE = {"Int8": (-2 ** 7, 2 ** 7), "UInt8": (0, 2 ** 8), "Int16": (-2 ** 15, 2 ** 15), "UInt16": (0, 2 ** 16),
          "Int32": (-2 ** 31, 2 ** 31), "UInt32": (0, 2 ** 32), "Int64": (-2 ** 63, 2 ** 63), "UInt64": (0, 2 ** 64)}


def base(var, version):
    """The FMI 3 type name that ``var`` is moved as ("Float64", "Int32", "Boolean", ...), or None for a type that
    is no signal (String, Binary, Clock)."""
    return (_FMI2 if version == 2 else _FMI3).get(var.type)


def is_array(var):
    return bool(getattr(var, "dimensions", None))


def size(var):
    """Number of elements of ``var``: 1 for a scalar, the product of its dimensions for an FMI 3 array (FMPy's
    ``shape``: each dimension's start or its structural parameter's start value)."""
    return int(np.prod(getattr(var, "shape", None) or (), dtype=np.int64)) if is_array(var) else 1


def elements(var):
    """The signals of ``var``: [(label suffix, element index)], ("", 0) for a scalar."""
    return [(f"[{e}]", e) for e in range(size(var))] if is_array(var) else [("", 0)]


def signal_code(var, version, what, fmu):
    """The type code of ``var`` as a coupled signal; ValueError naming it where it cannot be one."""
    t = base(var, version)
    if t is None:
        raise ValueError(f"{what}: variable {var.name!r} of FMU {fmu!r} has type {var.type}, which is no signal "
                         "(Strings and Binaries can be start values; Clock variables are not supported)")
    return CODES[t]


def _scalar(t, where, value):
    """A numeric or Boolean start value of FMI 3 type name ``t`` as a number; ValueError naming ``where``."""
    if t in ("Float64", "Float32"):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value):
            raise ValueError(f"{where}: expected a finite number, got {value!r}")
        return float(value)
    if t == "Boolean":
        if not isinstance(value, (bool, np.bool_)) and not (isinstance(value, (int, np.integer)) and value in (0, 1)):
            raise ValueError(f"{where}: expected True or False, got {value!r}")
        return int(bool(value))
    lo, hi = _RANGE[t]
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or not lo <= int(value) < hi:
        raise ValueError(f"{where}: expected an integer of type {t} ({lo} .. {hi - 1}), got {value!r}")
    if abs(int(value)) > 2 ** 53:
        raise ValueError(f"{where}: {value} is beyond 2^53, which cosim cannot pass exactly")
    return int(value)


def start_value(var, version, value, ref, max_size=None):
    """(kind, converted value) of a start value for ``var``: kind "r" (Float64), "i" (Int32), "b" (Boolean), "s"
    (String), "x" (Binary: bytes, at most ``max_size`` where the variable declares maxSize), "t" (another numeric
    type, moved as a double with its type code) or "a" (an array: the list of its elements as numbers, row-major);
    ValueError naming ``ref``."""
    where = f"start_values[{ref!r}]"
    if var.type == "String":
        if not isinstance(value, str):
            raise ValueError(f"{where}: expected a str for the String variable, got {value!r}")
        if "\0" in value:
            raise ValueError(f"{where}: a String start value must not contain NUL characters")
        return "s", value
    if var.type == "Binary":
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise ValueError(f"{where}: expected bytes for the Binary variable (e.g. bytes.fromhex('0a0b')), got "
                             f"{type(value).__name__}")
        value = bytes(value)
        if max_size is not None and len(value) > max_size:
            raise ValueError(f"{where}: {len(value)} bytes for the Binary variable {var.name!r}, whose maxSize is "
                             f"{max_size}")
        return "x", value
    t = base(var, version)
    if t is None:
        raise ValueError(f"{where}: variables of type {var.type} cannot be given start values")
    if is_array(var):
        flat = np.asarray(value, dtype=object).reshape(-1) if np.ndim(value) else None
        if flat is None or flat.size != size(var):
            raise ValueError(f"{where}: {var.name!r} is an array of shape {tuple(var.shape)}; expected "
                             f"{size(var)} values (row-major), got {value!r}")
        return "a", [_scalar(t, f"{where}[{e}]", v) for e, v in enumerate(flat)]
    v = _scalar(t, where, value)
    if t == "Float64":
        return "r", v
    if t == "Boolean":
        return "b", v
    return ("i", v) if t == "Int32" else ("t", float(v))


def type_class(name):
    """"Real", "Integer" or "Boolean": the class of an FMI 3 type name, for the connection rule of
    :func:`cosim.connect` (connected signals share a class unless the user asks for a conversion)."""
    if name in ("Float64", "Float32"):
        return "Real"
    return "Boolean" if name == "Boolean" else "Integer"
