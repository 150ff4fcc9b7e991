"""Bit-identical results through every capability (tests/golden/cases.py against tests/golden/golden.npz).

The recorded arrays were produced by the tree before the API refactor of wave 3; every later change of the seam
between Python and C must reproduce them bit for bit (NaN where NaN was recorded)."""
import numpy as np
import pytest

from golden.cases import CASES, compute
from golden.record import PATH

GOLDEN = np.load(PATH)


def _recorded(name):
    prefix = f"{name}/"
    return {k[len(prefix):]: GOLDEN[k] for k in GOLDEN.files if k.startswith(prefix)}


def test_every_case_is_recorded():
    recorded = {k.split("/", 1)[0] for k in GOLDEN.files}
    assert recorded == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_bit_identical(name):
    want = _recorded(name)
    got = compute(name)
    assert sorted(got) == sorted(want), f"{name}: recorded fields {sorted(want)}, now {sorted(got)}"
    for key, w in want.items():
        g = got[key]
        assert g.dtype == w.dtype and g.shape == w.shape, f"{name}/{key}: {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        same = (g.view(np.uint8) == w.view(np.uint8)).all() if g.size else True
        assert same, f"{name}/{key}: not bit-identical, max |diff| = {np.nanmax(np.abs(g - w)):.3e}"
