"""Bit-identical results through every capability (tests/golden/cases.py against tests/golden/golden.npz).

The recorded arrays were produced by the tree before the API refactor of wave 3; every later change of the seam
between Python and C must reproduce them bit for bit (NaN where NaN was recorded), except the few that NumPy computes
with kernels chosen for the CPU (:data:`CPU_KERNELS`)."""
import numpy as np
import pytest

from golden.cases import CASES, compute
from golden.record import PATH

GOLDEN = np.load(PATH)

#: Arrays that NumPy, SciPy or OpenBLAS compute in Python after the engine's run, with kernels chosen for the CPU
#: at run time: the same code gives other last bits on another CPU. golden.npz was recorded with OpenBLAS' SkylakeX
#: kernels and NumPy's AVX-512 loops; an AMD EPYC (OpenBLAS' Zen kernels) and, forced, Haswell kernels or NumPy
#: without AVX-512 (NPY_DISABLE_CPU_FEATURES=X86_V4,AVX512_ICL) changed exactly these, by at most 2.8e-17 absolute
#: and 6.5e-16 relative (where the value is not a difference of close numbers or zero up to noise). They must agree
#: to 1e-13 relative plus 64 units in the last place of the largest value of the array named as their scale (moesp's
#: D, zero up to noise, is the zeroth Markov parameter). Every other array, all of cosim's C engine (built without
#: -march=native, against reference LAPACK), stays bit-identical.
CPU_KERNELS = {"monolithic": {"Y": "Y", "U": "U"},              # y = (I - D L)^-1 (C z + D r) by numpy.linalg
               "sysid-moesp": {"eig": "eig", "D": "markov", "markov": "markov"},   # numpy.linalg's SVDs
               "local-error": {"H": "H", "eps": "eps", "exact": "exact"},         # the estimate and its reference
               "stability-map": {"rho": "rho"}}                 # eigenvalues of numpy.linalg


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
        if not same and key in CPU_KERNELS.get(name, ()):
            scale = float(np.nanmax(np.abs(want[CPU_KERNELS[name][key]])))
            assert np.allclose(g, w, rtol=1e-13, atol=64 * np.spacing(scale), equal_nan=True), \
                f"{name}/{key}: differs by more than another CPU's kernels, max |diff| = {np.nanmax(np.abs(g - w)):.3e}"
            continue
        assert same, f"{name}/{key}: not bit-identical, max |diff| = {np.nanmax(np.abs(g - w)):.3e}"
