"""Error messages built in C (issue 33): CPython's PyErr_Format/PyUnicode_FromFormat know no float conversions
(``%g`` makes Python 3.12 raise SystemError, 3.11 prints it literally), so every message with a float in it is
formatted by vsnprintf (cs_py_errorf) and read back here with its numbers."""
import math
import pathlib
import re
import sys

import numpy as np
import pytest

import cosim
from cosim import _core, models

CSRC = pathlib.Path(__file__).resolve().parent.parent / "csrc"
# CPython's own formatter (Objects/unicodeobject.c, "PyUnicode_FromFormat"): flags '-' and '0', width and
# precision, the length modifiers l, ll, z, t, j, and these conversions; nothing for floats.
_CPYTHON_CONVERSION = re.compile(r"%(?:%|[-0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:ll|l|z|t|j)?[cdiuxXsVpASRUTN])")
_ANY_CONVERSION = re.compile(r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|h|ll|l|L|z|t|j)?[a-zA-Z%]")
_CALL = re.compile(r"\b(PyErr_Format|PyUnicode_FromFormat|PyErr_WarnFormat|PyBytes_FromFormat)\s*\(")


def _format_strings():
    """(file:line, format string) of every call of CPython's formatters in csrc/."""
    for path in sorted(CSRC.rglob("*.c")):
        text = path.read_text()
        for m in _CALL.finditer(text):
            # the format is the first run of adjacent string literals after the call's opening parenthesis
            rest = text[m.end():]
            lit = re.match(r'[^"]*?((?:"(?:[^"\\]|\\.)*"\s*)+)', rest, re.S)
            fmt = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', lit.group(1)))
            yield f"{path.relative_to(CSRC)}:{text.count(chr(10), 0, m.start()) + 1}", fmt


def test_every_cpython_format_string_uses_conversions_cpython_knows():
    found = list(_format_strings())
    assert len(found) > 20                      # the scan does see the bindings' messages
    bad = [(where, conv) for where, fmt in found for conv in _ANY_CONVERSION.findall(fmt)
           if not _CPYTHON_CONVERSION.fullmatch(conv)]
    assert not bad, f"conversions CPython's formatter does not support (use cs_py_errorf): {bad}"


def test_the_scan_catches_a_float_conversion():
    assert not _CPYTHON_CONVERSION.fullmatch("%.3g") and not _CPYTHON_CONVERSION.fullmatch("%f")
    assert _CPYTHON_CONVERSION.fullmatch("%ld") and _CPYTHON_CONVERSION.fullmatch("%.200s")


def test_record_memory_limit_message_has_its_numbers(monkeypatch):
    sim = sys.modules["cosim.simulate"]
    monkeypatch.setattr(sim, "_record_limit", lambda: 1e4)
    with pytest.raises(MemoryError) as e:
        cosim.simulate(models.two_mass_oscillator(), 1.0, 1e-3)
    # room for 1002 rows (1001 macro points and a spare) of t + 4 states + 3 outputs + 3 inputs: 88 176 bytes
    assert str(e.value).startswith("t_end/H: recording all 1e+03 points of this run needs 8.82e-05 GB "
                                   "(limit 1e-05 GB)"), str(e.value)


@pytest.fixture
def stepper():
    return cosim.Stepper(models.two_mass_oscillator()["S1"], cosim.Euler())


@pytest.mark.parametrize("call, message", [
    (lambda st: _core.stepper_step(st._cap, math.inf, 1e-3, np.zeros((1, 1))), "T: must be finite, got inf"),
    (lambda st: _core.stepper_step(st._cap, 0.0, -2.5, np.zeros((1, 1))), "H: must be positive and finite, got -2.5"),
    (lambda st: _core.stepper_step(st._cap, 1.5e308, 1.5e308, np.zeros((1, 1))),
     "H: T + H = 1.5e+308 + 1.5e+308 is not finite"),
    (lambda st: _core.sysid_resample(np.ones(3), np.ones(3), 2.5e9), "ratio: must be in (0, 1e+06], got 2.5e+09"),
    (lambda st: _core.sysid_rls_set(cosim.sysid.RLS(1, 1, 1, 1)._cap, "reset", -0.5),
     "P0: must be finite and > 0, got -0.5"),
], ids=["stepper-T", "stepper-H", "stepper-T+H", "resample-ratio", "rls-P0"])
def test_c_messages_with_floats(stepper, call, message):
    with pytest.raises(ValueError) as e:
        call(stepper)
    assert str(e.value) == message
