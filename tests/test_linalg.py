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


def test_expm_matches_scipy_and_high_precision():
    """Against SciPy where its scaling is benign (‖A‖ <= 6) and against a 40-digit mpmath exponential everywhere:
    for ‖A‖ ~ 100 SciPy itself is off by up to 1e-11 (it scales the unbalanced matrix), cosim is not."""
    import mpmath as mp  # test dependency: exact-arithmetic reference
    mp.mp.dps = 40
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 20):   # 2..8 use the fixed-size products, the others the generic loop
        for s in (1e-3, 0.3, 2.0, 50.0):
            A = rng.normal(size=(n, n)) * s
            ours = _core.expm(A)
            if s <= 2.0:
                R = sl.expm(A)
                assert np.max(np.abs(ours - R)) <= 1e-12 * max(1.0, np.max(np.abs(R)))
            if n <= 9:
                X = np.array(mp.expm(mp.matrix(A.tolist())).tolist(), dtype=float)
                assert np.max(np.abs(ours - X)) <= 1e-13 * max(1.0, np.max(np.abs(X)))


def test_expm_badly_scaled_is_entrywise_accurate():
    """exp(D B D^-1) = D exp(B) D^-1: with B well scaled the right side is an accurate reference for every entry.
    cs_expm balances first, so it must reach each entry to a relative accuracy set by |D| |exp(B)| |D^-1|."""
    rng = np.random.default_rng(1)
    for n in (2, 4, 6, 9):
        for _ in range(20):
            B = rng.normal(size=(n, n)) * rng.uniform(0.1, 3.0)
            d = 10.0 ** rng.uniform(-5, 5, n)
            A = d[:, None] * B / d[None, :]
            R = sl.expm(B)
            ref = d[:, None] * R / d[None, :]
            scale = d[:, None] * np.max(np.abs(R)) / d[None, :]
            assert np.max(np.abs(_core.expm(A) - ref) / scale) <= 1e-12


def test_expm_van_loan_of_stiff_oscillator():
    """The stability maps' case: Van Loan's [[A H, B H], [0, N]] with ω = 1e3..1e4.5 (‖A H‖ up to 1e5) against the
    closed-form exponential of the damped oscillator block."""
    for w, zeta, H in ((1e3, 1e-3, 1e-4), (1e4, 0.2, 1e-2), (3e4, 1e-5, 1e-3)):
        A = np.array([[0.0, 1.0], [-w * w, -2 * zeta * w]])
        M = np.zeros((4, 4))
        M[:2, :2] = A * H
        M[:2, 2:3] = np.array([[0.0], [1.0]]) * H
        M[2, 3] = 1.0
        E = _core.expm(M)
        # exp(A H) of x'' + 2 ζ ω x' + ω^2 x = 0: λ = -ζ ω ± i ω_d
        wd = w * np.sqrt(1 - zeta ** 2)
        e, c, s = np.exp(-zeta * w * H), np.cos(wd * H), np.sin(wd * H)
        Phi = e * np.array([[c + zeta * w / wd * s, s / wd], [-w * w / wd * s, c - zeta * w / wd * s]])
        scale = np.array([[1.0, 1.0 / w], [w, 1.0]])  # natural units of the entries (position, velocity)
        assert np.max(np.abs(E[:2, :2] - Phi) / scale) <= 1e-11
        # Γ_0 = ∫_0^H exp(A (H - τ)) b dτ = A^-1 (Φ - I) b
        G0 = np.linalg.solve(A, (Phi - np.eye(2)) @ np.array([0.0, 1.0]))
        assert np.max(np.abs(E[:2, 2] - G0) / np.array([1.0 / w ** 2, 1.0 / w])) <= 1e-10


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


def _van_loan_reference(A, B, H, deg):
    """Φ and Γ_m of busch2016 eq. 20 from a 40-digit exponential of Van Loan's block matrix."""
    import mpmath as mp
    mp.mp.dps = 40
    nx, nu = B.shape
    N = nx + nu * (deg + 1)
    M = mp.zeros(N, N)
    for i in range(nx):
        for j in range(nx):
            M[i, j] = mp.mpf(A[i, j]) * mp.mpf(H)
        for j in range(nu):
            M[i, nx + j] = mp.mpf(B[i, j]) * mp.mpf(H)
    for m in range(deg):
        for j in range(nu):
            M[nx + m * nu + j, nx + (m + 1) * nu + j] = 1
    E = np.array(mp.expm(M).tolist(), dtype=float)
    fact = np.cumprod([1.0] + list(range(1, deg + 1)))
    Gam = np.array([fact[m] * E[:nx, nx + m * nu: nx + (m + 1) * nu] for m in range(deg + 1)])
    return E[:nx, :nx], Gam


@pytest.mark.parametrize("deg", [0, 1, 2, 3, 5])
def test_poly_propagator_matches_high_precision(deg):
    """Φ = φ_0(A H), Γ_m = H m! φ_{m+1}(A H) B (scaling and squaring of the φ functions) against Van Loan's
    exponential in 40 digits, for random systems and for stiff, badly scaled oscillators."""
    rng = np.random.default_rng(10 + deg)
    cases = []
    for nx, nu in ((1, 1), (2, 2), (3, 1), (4, 3), (6, 2)):
        cases.append((rng.normal(size=(nx, nx)) * rng.uniform(0.1, 5.0), rng.normal(size=(nx, nu)),
                      10.0 ** rng.uniform(-3, 0.5)))
    for w, zeta, H in ((1e3, 1e-3, 1e-4), (1e4, 0.3, 1e-2), (3e4, 1e-5, 1e-3), (10.0, 0.05, 1e-6)):
        cases.append((np.array([[0.0, 1.0], [-w * w, -2 * zeta * w]]), np.array([[0.0, 0.0], [w * w, 1.0]]), H))
    for A, B, H in cases:
        Phi, Gam = _core.poly_propagator(A, B, H, deg)
        Pr, Gr = _van_loan_reference(A, B, H, deg)
        d = np.diag(sl.matrix_balance(A, permute=False)[1])  # natural state units: A balanced by D
        assert _column_error(Phi, Pr, d) <= 1e-12
        for m in range(deg + 1):
            assert _column_error(Gam[m], Gr[m], d) <= 1e-11, m


def _column_error(X, R, d):
    """Error of each column (the state response to one initial state or input) in the natural state units d,
    relative to that column's size: max_j max_i |X_ij - R_ij| / d_i / max_i |R_ij| / d_i. An entrywise relative
    check would be wrong here: for ζ ω H = 30 some entries are e^-30 remnants of a decayed transient, not
    determined to relative accuracy by any algorithm (SciPy's expm is off by 16x on them)."""
    E = np.abs(X - R) / d[:, None]
    Rs = np.abs(R) / d[:, None]
    return float(np.max(E.max(axis=0) / np.maximum(Rs.max(axis=0), 1e-300)))
