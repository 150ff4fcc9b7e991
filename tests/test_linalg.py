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


# ----------------------------------------------------------------------------------------------------------------
# Small-matrix eigenvalue kernel (csrc/linalg/eig_small.c: balancing, Householder Hessenberg, Francis double-shift
# QR). _core.eigvals(A, "small") runs the kernel alone, "lapack" the LAPACK path alone, the default what the
# library uses (the kernel up to n = 32, LAPACK above or when the kernel does not converge).
from scipy.optimize import linear_sum_assignment  # noqa: E402

EPS = np.finfo(float).eps


def _dist(a, b):
    """Largest distance between two lists of eigenvalues paired one-to-one optimally (sorting would mis-pair
    eigenvalues whose real parts differ only by rounding)."""
    a, b = np.asarray(a, complex), np.asarray(b, complex)
    assert a.shape == b.shape
    if a.size == 0:
        return 0.0
    cost = np.abs(a[:, None] - b[None, :])
    i, j = linear_sum_assignment(cost)
    return float(cost[i, j].max())


def _companion(roots):
    """Companion matrix (first row -c_1..-c_n, ones on the subdiagonal) of the monic polynomial with these roots."""
    c = np.poly(roots).real
    n = len(roots)
    C = np.zeros((n, n))
    C[0] = -c[1:]
    C[np.arange(1, n), np.arange(n - 1)] = 1.0
    return C


def _roots(rng, n):
    """n distinct roots: real ones and complex-conjugate pairs with moduli in [0.2, 3]."""
    npairs = int(rng.integers(0, n // 2 + 1))
    r = list(rng.uniform(0.2, 3.0, n - 2 * npairs) * rng.choice([-1.0, 1.0], n - 2 * npairs))
    for _ in range(npairs):
        z = rng.uniform(0.2, 3.0) * np.exp(1j * rng.uniform(0.1, np.pi - 0.1))
        r += [z, np.conj(z)]
    return np.array(r, complex)


def test_eig_small_random_matrices_match_numpy():
    """3600 dense and sparse random matrices, n = 1..12, three magnitudes: error <= 1e-10 ||A||."""
    rng = np.random.default_rng(20261122)
    for n in range(1, 13):
        for k in range(300):
            A = rng.normal(size=(n, n)) * (1e-3, 1.0, 1e4)[k % 3]
            if k % 2:
                A[rng.random((n, n)) < 0.4] = 0.0
            ours = _core.eigvals(A, "small")
            assert _dist(ours, np.linalg.eigvals(A)) <= 1e-10 * np.linalg.norm(A), (n, k)
            np.testing.assert_array_equal(_core.eigvals(A), ours)  # the library path is the kernel here


@pytest.mark.parametrize("n", [13, 16, 20, 25, 32])
def test_eig_small_up_to_threshold(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        A = rng.normal(size=(n, n))
        assert _dist(_core.eigvals(A, "small"), np.linalg.eigvals(A)) <= 1e-10 * np.linalg.norm(A)


@pytest.mark.parametrize("n", [1, 5, 16, 25, 33, 40])
def test_eigvals_lapack_path_matches_numpy(n):
    """The LAPACK path (fallback, and n > 32) stays tested now that small matrices no longer take it."""
    rng = np.random.default_rng(100 + n)
    A = rng.normal(size=(n, n))
    ref = np.linalg.eigvals(A)
    assert _dist(_core.eigvals(A, "lapack"), ref) <= 1e-10 * np.linalg.norm(A)
    assert _dist(_core.eigvals(A), ref) <= 1e-10 * np.linalg.norm(A)


@pytest.mark.parametrize("spread", [4.5, 9.0])
def test_eig_small_badly_scaled_similarity(spread):
    """D A D^-1 with d_i = 10^U(-spread, spread): entries span 1e-9..1e9 (spread 4.5) or 1e-18..1e18, eigenvalues
    are those of A. Without balancing the error would be ~eps ||D A D^-1||, i.e. up to 1e2 ||A||."""
    rng = np.random.default_rng(int(spread * 10))
    for n in range(2, 13):
        for _ in range(100):
            A = rng.normal(size=(n, n))
            d = 10.0 ** rng.uniform(-spread, spread, n)
            S = A * d[:, None] / d[None, :]
            assert _dist(_core.eigvals(S, "small"), np.linalg.eigvals(A)) <= 1e-10 * np.linalg.norm(A)


def test_eig_small_companion_known_roots():
    """Companion matrices of polynomials with known distinct roots (real and complex pairs), n = 2..12. Root
    finding through the companion matrix is ill-conditioned for the higher degrees: the bound is 1e-7 relative
    (NumPy/LAPACK reach 3e-9 at worst on these; the kernel's errors are of the same size, see
    benchmarks/README.md), and 1e-12 up to degree 6."""
    rng = np.random.default_rng(7)
    for n in range(2, 13):
        for _ in range(30):
            r = _roots(rng, n)
            err = _dist(_core.eigvals(_companion(r), "small"), r) / np.abs(r).max()
            assert err <= (1e-12 if n <= 6 else 1e-7), (n, err)


@pytest.mark.parametrize("roots, mult", [
    ([1, 1, -0.5, 0.3 + 0.4j, 0.3 - 0.4j], 2),
    ([1j, 1j, -1j, -1j, 0.7], 2),
    ([2, 2, 2, -1], 3),
    ([0.5, 0.5, 0.5, 0.5, -2, 1.5], 4),
])
def test_eig_small_companion_multiple_roots(roots, mult):
    """A root of multiplicity m moves by ~(eps)^(1/m) under rounding: bound 10 (eps ||C||)^(1/m); the mean of the
    cluster (a trace) stays accurate to 1e-12."""
    r = np.array(roots, complex)
    C = _companion(r)
    ours = _core.eigvals(C, "small")
    assert _dist(ours, r) <= 10 * (EPS * np.linalg.norm(C)) ** (1 / mult)
    z = r[np.argmax(np.sum(np.abs(r[:, None] - r[None, :]) == 0, axis=1))]  # the multiple root
    near = ours[np.argsort(np.abs(ours - z))[:mult]]
    assert abs(near.mean() - z) <= 1e-12 * np.linalg.norm(C)


def test_eig_small_exact_structures():
    """Zero, diagonal and upper triangular matrices: the eigenvalues are the diagonal, exactly (balancing only
    changes exponents off the diagonal, the Hessenberg and QR steps find nothing to do)."""
    rng = np.random.default_rng(3)
    for n in range(1, 13):
        np.testing.assert_array_equal(_core.eigvals(np.zeros((n, n)), "small"), np.zeros(n))
        d = rng.normal(size=n) * 10.0 ** rng.uniform(-5, 5, n)
        for A in (np.diag(d), np.triu(rng.normal(size=(n, n)), 1) + np.diag(d)):
            ours = _core.eigvals(A, "small")
            np.testing.assert_array_equal(np.sort(ours.real), np.sort(d))
            np.testing.assert_array_equal(ours.imag, 0.0)
        J = 2.0 * np.eye(n) + np.diag(np.ones(n - 1), 1)  # Jordan block, upper triangular
        np.testing.assert_array_equal(_core.eigvals(J, "small"), np.full(n, 2.0))


@pytest.mark.parametrize("n", [2, 3, 5, 8, 12])
def test_eig_small_jordan_block_dense(n):
    """Q J Q^T for a Jordan block J (eigenvalue 2, multiplicity n): the computed eigenvalues form a circle of
    radius ~(eps)^(1/n) around 2, and their mean (the trace / n) is accurate."""
    rng = np.random.default_rng(n)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    A = Q @ (2.0 * np.eye(n) + np.diag(np.ones(n - 1), 1)) @ Q.T
    ours = _core.eigvals(A, "small")
    assert np.max(np.abs(ours - 2.0)) <= 10 * (EPS * np.linalg.norm(A)) ** (1 / n)
    assert abs(ours.mean() - 2.0) <= 1e-13


def test_eig_small_zero_subdiagonal_entries():
    """Hessenberg matrices with exact zeros on the subdiagonal split into independent blocks."""
    rng = np.random.default_rng(5)
    for n in range(3, 13):
        for _ in range(20):
            H = np.triu(rng.normal(size=(n, n)), -1)
            zeros = rng.choice(np.arange(1, n), size=rng.integers(1, n), replace=False)
            H[zeros, zeros - 1] = 0.0
            assert _dist(_core.eigvals(H, "small"), np.linalg.eigvals(H)) <= 1e-12 * np.linalg.norm(H)


def test_eig_small_rotations_on_unit_circle():
    rng = np.random.default_rng(11)
    for th in np.linspace(0.0, np.pi, 25):
        R = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
        ours = _core.eigvals(R, "small")
        assert np.max(np.abs(np.abs(ours) - 1.0)) <= 1e-14
        assert _dist(ours, [np.exp(1j * th), np.exp(-1j * th)]) <= 1e-14
    for n in range(2, 13):  # orthogonal matrices Q B Q^T, B block diagonal with rotations (and +-1)
        for _ in range(20):
            B = np.zeros((n, n))
            for i in range(0, n - 1, 2):
                th = rng.uniform(0.0, np.pi)
                B[i:i + 2, i:i + 2] = [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]]
            if n % 2:
                B[-1, -1] = rng.choice([-1.0, 1.0])
            Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
            assert np.max(np.abs(np.abs(_core.eigvals(Q @ B @ Q.T, "small")) - 1.0)) <= 1e-14


@pytest.mark.parametrize("A, expected", [
    ([[1e200, 1e200], [-1e200, 1e200]], [1e200 + 1e200j, 1e200 - 1e200j]),       # p^2 + bc would overflow
    ([[1e-200, 1e-200], [-1e-200, 1e-200]], [1e-200 + 1e-200j, 1e-200 - 1e-200j]),  # ... underflow
    ([[0.0, 1e150], [-1e-150, 0.0]], [1j, -1j]),
    ([[1e-150, 1e150], [1e150, 1e-150]], [1e150, -1e150]),
    ([[1e150, 1e150], [1e-150, 1e-150]], [1e150, 0.0]),
    ([[3.0, 1e300], [1e-300, 3.0]], [4.0, 2.0]),
])
def test_eig_small_2x2_extreme_entries(A, expected):
    ours = _core.eigvals(np.array(A), "small")
    assert np.all(np.isfinite(ours))
    assert _dist(ours, expected) <= 1e-14 * np.max(np.abs(expected))


def test_eig_small_block_companion_shift_structure():
    """The stability problems' shape: a dense top block row over identity blocks that shift the history
    (X_{N+1} = (top X_N; y_N; y_{N-1}; ..)), with entries of mixed units (diagonal similarity 1e-9..1e9)."""
    rng = np.random.default_rng(13)
    for p, k in [(1, 4), (2, 2), (2, 3), (3, 2), (2, 4), (4, 2), (3, 3), (2, 5), (4, 3), (6, 2), (3, 4)]:
        n = p * k
        for _ in range(40):
            M = np.zeros((n, n))
            M[:p] = rng.normal(size=(p, n)) * 0.5
            M[p:, :-p] = np.eye(n - p)
            d = 10.0 ** rng.uniform(-4.5, 4.5, n)
            S = M * d[:, None] / d[None, :]
            assert _dist(_core.eigvals(S, "small"), np.linalg.eigvals(M)) <= 1e-10 * np.linalg.norm(M)


def test_spectral_radius_matches_numpy():
    """cs_spectral_radius on random matrices scaled to rho = 0.5, 0.99, 1.01, 2 (stable and unstable)."""
    rng = np.random.default_rng(17)
    for n in range(1, 13):
        for target in (0.5, 0.99, 1.01, 2.0):
            for _ in range(10):
                A = rng.normal(size=(n, n))
                A *= target / np.max(np.abs(np.linalg.eigvals(A)))
                ref = np.max(np.abs(np.linalg.eigvals(A)))
                assert abs(_core.spectral_radius(A) - ref) <= 1e-12 * ref


def test_eig_small_nonconvergence_reported_and_exceptional_shift():
    """A cyclic permutation matrix stalls the standard Francis shifts (they stay 0); the ad hoc shift after 10
    sweeps gets it going. With the sweep cap below that, the kernel reports non-convergence."""
    for n in range(3, 9):
        P = np.roll(np.eye(n), 1, axis=0)
        with pytest.raises(ArithmeticError, match="did not converge"):
            _core.eigvals(P, "small", maxit=9)
        ours = _core.eigvals(P, "small")
        assert _dist(ours, np.exp(2j * np.pi * np.arange(n) / n)) <= 1e-14


def test_eigvals_falls_back_to_lapack():
    """Entries of ~5e307 overflow inside the kernel's sweeps; it reports non-convergence and cs_eigvals hands the
    matrix to LAPACK, whose result it returns (no random non-converging case was found for the kernel)."""
    A = np.array([[-3.6973840406315736e+307, 5.459898473383395e+307, -4.498464253092557e+307],
                  [-3.4241344112693157e+307, -5.369779277556295e+307, 4.828191415467467e+307],
                  [3.453908670101349e+306, -3.684878768290031e+307, 2.6304721298887387e+307]])
    with pytest.raises(ArithmeticError, match="did not converge"):
        _core.eigvals(A, "small")
    np.testing.assert_array_equal(_core.eigvals(A), _core.eigvals(A, "lapack"))
    assert _dist(_core.eigvals(A), np.linalg.eigvals(A)) <= 1e-12 * np.max(np.abs(A))


def test_eigvals_method_argument():
    with pytest.raises(ValueError, match="method"):
        _core.eigvals(np.eye(2), "qr")
    with pytest.raises(ValueError, match="NaN"):
        _core.eigvals(np.array([[1.0, np.inf], [0.0, 1.0]]), "small")


def test_exponentials_of_overflowing_matrices_are_defined():
    """Finite entries whose column sums overflow (1e308 + 1e308): the squaring count stays defined (no undefined
    int conversion of inf) and the result is the honest overflow, inf, not garbage or a crash."""
    A = np.full((2, 2), 1e308)
    assert np.isinf(_core.expm(A)).all()
    Phi, Gam = _core.poly_propagator(A, np.ones((2, 1)), 1.0, 1)
    assert np.isinf(Phi).all()


def _absmax_reference(V, bounds):
    out = np.full((len(bounds) - 1, V.shape[1]), -np.inf)
    for g in range(len(bounds) - 1):
        seg = V[bounds[g]:bounds[g + 1]]
        if len(seg):
            out[g] = np.abs(seg).max(axis=0)   # NaN propagates
    return out


@pytest.mark.parametrize("layout", ["contiguous", "strided", "reversed", "fortran"])
def test_absmax_segments_matches_numpy(layout):
    """cs_absmax_segments (the divergence criterion's window maxima): every layout read in place, NaN and inf
    propagate, empty segments are -inf, every remainder of the 4-way unrolled loop."""
    rng = np.random.default_rng(7)
    V = rng.standard_normal((1003, 5))
    V[500, 1] = np.nan
    V[7, 2] = -np.inf
    V[1002, 4] = -1e300
    V = {"contiguous": V, "strided": V[::2, ::2], "reversed": V[::-1], "fortran": np.asfortranarray(V)}[layout]
    n = V.shape[0]
    for bounds in ([0, n], [0, 0, 3, 4, 9, n], [0, 5, n // 2, n // 2 + 1, n - 2, n]):
        got = _core.absmax_segments(V, bounds)
        np.testing.assert_array_equal(got, _absmax_reference(V, bounds))


def test_absmax_segments_rejects_bad_bounds():
    V = np.zeros((10, 2))
    for bounds in ([], [0, 11], [-1, 5], [0, 5, 3]):
        with pytest.raises(ValueError, match="bounds"):
            _core.absmax_segments(V, bounds)
    with pytest.raises(ValueError):
        _core.absmax_segments(np.zeros(10), [0, 10])
