"""The dense kernels of csrc/linalg against NumPy/SciPy."""
import numpy as np
import pytest
import scipy.linalg as sl

from cosim import _core


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 15, 16, 25])
def test_eigvals_match_numpy(n):
    rng = np.random.default_rng(n)
    for scale in (1e-3, 1.0, 1e4):
        A = rng.normal(size=(n, n)) * scale
        A[rng.random((n, n)) < 0.3] = 0.0               # sparse, like companion matrices
        D = np.diag(10.0 ** rng.uniform(-4, 4, n))       # badly scaled: balancing matters
        A = D @ A @ np.linalg.inv(D)
        ours = np.sort_complex(_core.eigvals(A))
        ref = np.sort_complex(np.linalg.eigvals(A))
        assert np.max(np.abs(ours - ref)) <= 1e-9 * max(1.0, np.max(np.abs(ref)))


def test_eigvals_companion_and_rejects_nan():
    c = np.array([1.0, -6.0, 11.0, -6.0])                # (z-1)(z-2)(z-3)
    C = np.zeros((3, 3))
    C[0] = -c[1:]
    C[1, 0] = C[2, 1] = 1.0
    np.testing.assert_allclose(np.sort(_core.eigvals(C).real), [1.0, 2.0, 3.0], rtol=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        _core.eigvals(np.array([[1.0, np.nan], [0.0, 1.0]]))


def test_expm_matches_scipy():
    rng = np.random.default_rng(0)
    for n in (1, 3, 8, 20):
        for s in (1e-3, 0.3, 2.0, 50.0):
            A = rng.normal(size=(n, n)) * s
            R = sl.expm(A)
            assert np.max(np.abs(_core.expm(A) - R)) <= 1e-12 * max(1.0, np.max(np.abs(R)))


@pytest.mark.parametrize("n", [1, 2, 6, 16, 17, 40])
def test_solve_paths_match_numpy(n):
    """Small systems use our partial-pivoting LU, larger ones LAPACK's dgesv: both must agree with NumPy."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    A[0, 0] = 1e-14  # forces pivoting
    B = rng.normal(size=(n, 3))
    X = np.linalg.solve(A, B)
    ours = _core.solve(A, B)
    assert np.max(np.abs(ours - X)) <= 1e-10 * max(1.0, np.max(np.abs(X)))
    with pytest.raises(ArithmeticError, match="singular"):
        _core.solve(np.zeros((n, n)), B)
