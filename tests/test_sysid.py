"""Acceptance tests of cosim.sysid: genser2020.md section 18.1 AT-7 .. AT-13 (plus AT-1 for the continuous IJ
conversion), noisy data at 40 dB SNR, and bad data. AT-14 (Lagrange input optimization) belongs to the pre-step
method, not to this layer."""
import warnings

import numpy as np
import pytest
from scipy.linalg import expm

from cosim import sysid


# ------------------------------------------------------------------------------------------------ helpers

def simulate_standard(A, B, C, D, u, x0=None):
    """x_{j+1} = A x_j + B u_j, y_j = C x_j + D u_j (standard form, aligned samples)."""
    x = np.zeros(A.shape[0]) if x0 is None else np.array(x0, float)
    y = np.zeros((len(u), C.shape[0]))
    for k in range(len(u)):
        y[k] = C @ x + D @ u[k]
        x = A @ x + B @ u[k]
    return y


def random_stable(rng, n, nu, ny, rmin=0.2, rmax=0.9, sep=0.1):
    """Random real (A, B, C, D) with eigenvalue moduli in [rmin, rmax] and pairwise distance >= sep."""
    while True:
        A = rng.standard_normal((n, n))
        A *= rng.uniform(0.5, rmax) / np.max(np.abs(np.linalg.eigvals(A)))
        ev = np.linalg.eigvals(A)
        if np.min(np.abs(ev)) > rmin and (n < 2 or min(abs(ev[i] - ev[j]) for i in range(n)
                                                      for j in range(i + 1, n)) > sep):
            return A, rng.standard_normal((n, nu)), rng.standard_normal((ny, n)), rng.standard_normal((ny, nu))


def eig_match_error(e_true, e_est):
    """Largest distance after greedy nearest matching (both sets of the same size)."""
    assert len(e_true) == len(e_est)
    rest, worst = list(e_est), 0.0
    for e in e_true:
        i = int(np.argmin([abs(e - f) for f in rest]))
        worst = max(worst, abs(e - rest.pop(i)))
    return worst


def markov_true(A, B, C, D, count):
    out, M = [D], B
    for _ in range(count - 1):
        out.append(C @ M)
        M = A @ M
    return out


# ------------------------------------------------------------------------------------------------ AT-1, AT-7

def test_at1_dmo_s2_continuous_ij():
    """AT-1: IJ of the DMO subsystem S2 (spec 10.1) from (2.12-2.14) with pinv."""
    m2, c2, d2 = 10.0, 1e7, 2.0
    for ck, dk, sy, su in [(1e5, 1e3, -10098.990120988, [-9.998990120988e8, -9.998990120988e6]),
                           (2e5, 200.0, -1019.998000202, [-1.999996000404e8, -1.99999600040e5])]:
        A2 = np.array([[0, 1], [-(c2 + ck) / m2, -(d2 + dk) / m2]])
        B2 = np.array([[0, 0], [ck / m2, dk / m2]])
        C2 = np.array([[ck, dk]])
        D2 = np.array([[-ck, -dk]])
        ij = sysid.ij_continuous(A2, B2, C2, D2)
        np.testing.assert_allclose(ij.dSdy, [[sy]], rtol=1e-10)
        # the spec prints 12 significant digits for the second case's second entry, so rel 1e-10 there
        np.testing.assert_allclose(ij.dSdu, [su], rtol=1e-10)
        np.testing.assert_allclose(ij.dSdud, D2, rtol=0)


def test_at7_continuous_discrete_consistency():
    """AT-7: D = 0, C = I: discrete IJ via (2.18-2.20) with exact Phi gives Sy = e^{A dT}, Su^+ = PhiB."""
    A = np.array([[0.0, 1.0], [-1e4, -10.0]])
    B = np.array([[0.0, 0.5], [1.0, -2.0]])
    dt = 1e-3
    PhiA, PhiB = sysid.discretize(A, B, dt)
    # independent reference: exponential of the augmented matrix (scipy)
    M = np.zeros((4, 4))
    M[:2, :2], M[:2, 2:] = A, B
    E = expm(M * dt)
    np.testing.assert_allclose(PhiA, expm(A * dt), rtol=0, atol=1e-12 * np.abs(PhiA).max())
    np.testing.assert_allclose(PhiB, E[:2, 2:], rtol=0, atol=1e-12 * np.abs(PhiB).max())
    ij = sysid.ij_discrete(PhiA, PhiB, np.eye(2), np.zeros((2, 2)), form="thesis")
    np.testing.assert_allclose(ij.Sy, expm(A * dt), rtol=0, atol=1e-12 * np.abs(PhiA).max())
    np.testing.assert_allclose(ij.Su_plus, E[:2, 2:], rtol=0, atol=1e-12 * np.abs(PhiB).max())
    np.testing.assert_array_equal(ij.Su_minus, 0.0)


def test_thesis_form_time_shift():
    """(2.18/2.19) use C^{k-1}, D^{k-1} of the previous identification."""
    rng = np.random.default_rng(3)
    PhiA, PhiB = rng.standard_normal((2, 2)), rng.standard_normal((2, 1))
    C, D, Cp, Dp = rng.standard_normal((2, 2)), rng.standard_normal((2, 1)), rng.standard_normal((2, 2)), \
        rng.standard_normal((2, 1))
    ij = sysid.ij_discrete(PhiA, PhiB, C, D, form="thesis", C_prev=Cp, D_prev=Dp)
    Sy = C @ PhiA @ np.linalg.inv(Cp)
    np.testing.assert_allclose(ij.Sy, Sy, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ij.Su_minus, -Sy @ Dp, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ij.Su_plus, C @ PhiB + D, rtol=1e-12, atol=1e-12)


# ------------------------------------------------------------------------------------------------ AT-8 (RLS)

def _rls_at8_data(N, jump=None, seed=1):
    rng = np.random.default_rng(seed)
    w = rng.choice([-1.0, 1.0], N)
    a = np.full(N, 0.9)
    if jump is not None:
        a[jump:] = 0.7
    y = np.zeros(N)
    for k in range(1, N):
        y[k] = a[k] * y[k - 1] + 0.5 * w[k - 1]
    return w, y, a


def test_at8_rls_converges_noise_free():
    """AT-8 part 1: y^k = 0.9 y^{k-1} + 0.5 w^{k-1}, lambda = 1, P(0) = 1e6 I: p -> (0.9, 0.5) after 50 samples."""
    w, y, _ = _rls_at8_data(60)
    r = sysid.RLS(1, 1, n_a=1, n_b=1, lam=1.0, P0=1e6)
    r.update(0.0, y[0])                  # y^0: history only
    for k in range(1, 51):
        r.update(w[k - 1], y[k])         # w^{k-1}: input applied during the step that produced y^k
    a, b = r.parameters
    assert abs(a[0, 0] - 0.9) < 1e-6 and abs(b[0, 0, 0] - 0.5) < 1e-6


def _rls_jump_errors(lam=0.98, N=800, jump=200):
    w, y, a_true = _rls_at8_data(N, jump)
    r = sysid.RLS(1, 1, lam=lam, P0=1e6)
    r.update(0.0, y[0])
    err = np.zeros(N)
    for k in range(1, N):
        r.update(w[k - 1], y[k])
        a, b = r.parameters
        err[k] = np.hypot(a[0, 0] - a_true[k], b[0, 0, 0] - 0.5)
    return err[jump:]            # err after n = 0, 1, ... samples of the new parameters


def test_at8_rls_reconvergence_rate_is_lambda_power_n():
    """AT-8 part 2 (as the issue asks): after the jump a 0.9 -> 0.7 with lambda = 0.98 the parameter error decays like
    lambda^n. Fit log(err) over n in [50, 400) (the error is still far above round-off there): slope = log(lambda)
    within 10 % (measured: -0.01984 vs log 0.98 = -0.02020)."""
    err = _rls_jump_errors()
    n = np.arange(50, 400)
    slope = np.polyfit(n, np.log(err[50:400]), 1)[0]
    assert slope == pytest.approx(np.log(0.98), rel=0.10)
    # and it does re-converge to the 1e-3 tolerance of the spec within a few time constants 1/(1 - lambda) = 50
    assert np.argmax(err < 1e-3) < 400
    assert err[550] < 1e-5


@pytest.mark.xfail(strict=True, reason="spec AT-8: 're-converges within 250 samples to 1e-3' does not reproduce: "
                                       "measured 287 samples (seed 1; an independent check found 300-350). The real "
                                       "property, the lambda^n decay, is tested above.")
def test_at8_spec_250_samples():
    err = _rls_jump_errors()
    assert np.all(err[250:] < 1e-3)


def test_rls_forgetting_slows_with_larger_lambda():
    """Decay rate follows lambda: lambda = 0.99 decays about half as fast as 0.98."""
    err = _rls_jump_errors(lam=0.99, N=900)
    slope = np.polyfit(np.arange(100, 600), np.log(err[100:600]), 1)[0]
    assert slope == pytest.approx(np.log(0.99), rel=0.10)


def test_rls_mimo_miso_structure_and_batch_equals_single():
    """MIMO RLS = independent MISO filters (no cross-output terms), n_a = 2, n_b = 2, two inputs."""
    rng = np.random.default_rng(5)
    N, ny, nu = 400, 2, 2
    a = np.array([[1.2, -0.5], [0.3, 0.2]])            # stable AR parts
    b = rng.standard_normal((ny, nu, 2))
    U = rng.standard_normal((N, nu))
    Y = np.zeros((N, ny))
    for k in range(2, N):
        for i in range(ny):
            Y[k, i] = a[i] @ Y[k - 2:k, i][::-1] + sum(b[i, j] @ U[k - 2:k, j][::-1] for j in range(nu))
    # here U[k-1] is the input that produced Y[k]: feed (U[k-1], Y[k])
    r1 = sysid.RLS(ny, nu, n_a=2, n_b=2, lam=1.0, P0=1e8)
    E = r1.update_many(np.vstack([np.zeros((1, nu)), U[:-1]]), Y)
    a1, b1 = r1.parameters
    np.testing.assert_allclose(a1, a, atol=1e-6)
    np.testing.assert_allclose(b1, b, atol=1e-6)
    assert np.all(E[:2] == 0)                           # history filling: no update
    r2 = sysid.RLS(ny, nu, n_a=2, n_b=2, lam=1.0, P0=1e8)
    for k in range(N):
        r2.update(U[k - 1] if k else np.zeros(nu), Y[k])
    np.testing.assert_array_equal(r2.parameters[0], a1)
    np.testing.assert_array_equal(r2.parameters[1], b1)
    # one-step prediction of the next output
    yhat = r1.predict(U[-1])
    ynext = np.array([a[i] @ Y[-1:-3:-1, i] + sum(b[i, j] @ U[-1:-3:-1, j] for j in range(nu)) for i in range(ny)])
    np.testing.assert_allclose(yhat, ynext, rtol=1e-6, atol=1e-9)
    # P stays exactly symmetric
    P = r1.covariance
    np.testing.assert_array_equal(P, np.swapaxes(P, 1, 2))


def test_rls_save_load_roundtrip(tmp_path):
    rng = np.random.default_rng(2)
    U, Y = rng.standard_normal((300, 2)), rng.standard_normal((300, 1))
    r = sysid.RLS(1, 2, n_a=2, n_b=3, lam=0.99, P0=1e3)
    r.update_many(U[:100], Y[:100])
    np.savez(tmp_path / "rls.npz", **r.save())
    e1 = r.update_many(U[100:], Y[100:])
    p1 = r.parameters
    r2 = sysid.RLS(1, 2, n_a=2, n_b=3, lam=0.99, P0=1e3)
    r2.load(np.load(tmp_path / "rls.npz"))
    e2 = r2.update_many(U[100:], Y[100:])
    np.testing.assert_array_equal(e1, e2)
    np.testing.assert_array_equal(p1[1], r2.parameters[1])
    with pytest.raises(ValueError, match="state"):
        sysid.RLS(1, 2, n_a=1, n_b=3).load(r.save())


def test_rls_initial_parameters_and_covariance():
    r = sysid.RLS(2, 1, p0=(np.array([[0.5], [0.2]]), np.array([[[1.0]], [[2.0]]])), P0=np.diag([1.0, 2.0]))
    a, b = r.parameters
    np.testing.assert_array_equal(a, [[0.5], [0.2]])
    np.testing.assert_array_equal(b[:, 0, 0], [1.0, 2.0])
    np.testing.assert_array_equal(r.covariance[1], np.diag([1.0, 2.0]))


def test_rls_trace_bound():
    """With lambda < 1 and no excitation, P grows like lambda^-n; trace_max bounds it."""
    r = sysid.RLS(1, 1, lam=0.9, P0=1.0, trace_max=50.0)
    r.update_many(np.zeros((200, 1)), np.zeros((200, 1)))
    assert np.trace(r.covariance[0]) <= 50.0 + 1e-9
    r2 = sysid.RLS(1, 1, lam=0.9, P0=1.0)
    r2.update_many(np.zeros((200, 1)), np.zeros((200, 1)))
    assert np.trace(r2.covariance[0]) > 1e6


# ------------------------------------------------------------------------------------------------ AT-9, AT-9b (MOESP)

@pytest.mark.parametrize("method", ["moesp", "po-moesp"])
@pytest.mark.parametrize("nu,ny", [(1, 1), (2, 2), (1, 2), (2, 1)])
def test_at9_moesp_noise_free(nu, ny, method):
    """AT-9: known 2nd-order stable system, white-noise input, W = 500, r = 4, n = 2: eig(PhiA) and Markov parameters
    D, C PhiB, C PhiA PhiB within 1e-6; for plain MOESP and PO-MOESP (W = N - 2 r + 1 there)."""
    rng = np.random.default_rng(10 + 3 * nu + ny)
    A = np.array([[0.7, 0.4], [-0.4, 0.7]])            # eigenvalues 0.7 +- 0.4i
    B, C, D = rng.standard_normal((2, nu)), rng.standard_normal((ny, 2)), rng.standard_normal((ny, nu))
    r = 4
    span = r if method == "moesp" else 2 * r
    N = 500 + span - 1                                  # W = 500 Hankel columns
    u = rng.standard_normal((N, nu))
    y = simulate_standard(A, B, C, D, u, x0=rng.standard_normal(2))
    res = sysid.moesp(u, y, order=2, block_rows=r, method=method)
    assert res.columns == 500 and res.reliable
    assert eig_match_error(np.linalg.eigvals(A), res.eigenvalues()) < 1e-6
    for Mt, Mi in zip(markov_true(A, B, C, D, 3), res.markov(3)):
        np.testing.assert_allclose(Mi, Mt, rtol=0, atol=1e-6)


@pytest.mark.parametrize("method", ["moesp", "po-moesp"])
def test_moesp_automatic_order(method):
    rng = np.random.default_rng(4)
    A, B, C, D = random_stable(rng, 3, 2, 2)
    u = rng.standard_normal((600, 2))
    res = sysid.moesp(u, simulate_standard(A, B, C, D, u), block_rows=5, threshold=1e-8, method=method)
    assert res.order == 3
    assert res.singular_values[3] < 1e-9 * res.singular_values[0]
    assert eig_match_error(np.linalg.eigvals(A), res.eigenvalues()) < 1e-8


def test_at9b_ij_convention_moesp():
    """AT-9b: data of a discrete model in the spec 1.3 convention (u^k applied during (T^{k-1}, T^k], y^k at T^k),
    MOESP on the aligned pairs (u^k, y^k), standard-form conversion: y^{k+1} = Sy y^k + Su^- u^k + Su^+ u^{k+1}
    reproduces the data to rel 1e-8. Applying (2.18-2.20) to the standard-form matrices does not (the wrong
    convention), which shows that the test can fail."""
    rng = np.random.default_rng(7)
    A, B, C, D = random_stable(rng, 2, 1, 2)            # n_x = n_y = 2 so that C^+ C = I
    u = rng.standard_normal((400, 1))
    y = simulate_standard(A, B, C, D, u)
    res = sysid.moesp(u, y, order=2, block_rows=3)
    ij = sysid.ij_discrete(res.A, res.B, res.C, res.D, form="standard")
    yb = ij.predict(y, u)
    scale = np.abs(y).max()
    assert np.abs(yb[1:] - y[1:]).max() < 1e-8 * scale
    wrong = sysid.ij_discrete(res.A, res.B, res.C, res.D, form="thesis").predict(y, u)
    assert np.abs(wrong[1:] - y[1:]).max() > 1e-2 * scale
    # eps_SI of the exact IJs is round-off, of the wrong ones it is not
    assert sysid.eps_si(y, yb)[1:].max() < 1e-8
    assert sysid.eps_si(y, wrong)[1:].max() > 1e-3


def test_at9b_ij_convention_rls_gilbert():
    """AT-9b with RLS -> Gilbert -> IJ (spec 6.4): y_i^k = a_i y_i^{k-1} + sum_j b_ij u_j^k with u^k the input of the
    step ending at T^k. Identified IJs (Sy = diag(a), Su^- = 0, Su^+ = B) reproduce the data."""
    rng = np.random.default_rng(8)
    a, B = np.array([0.8, -0.3, 0.5]), rng.standard_normal((3, 2))
    N = 200
    u = rng.standard_normal((N, 2))
    y = np.zeros((N, 3))
    for k in range(1, N):
        y[k] = a * y[k - 1] + B @ u[k]
    r = sysid.RLS(3, 2, lam=1.0, P0=1e8)
    r.update_many(u, y)
    ij = r.ij()
    np.testing.assert_allclose(ij.Sy, np.diag(a), atol=1e-7)
    np.testing.assert_allclose(ij.Su_plus, B, atol=1e-7)
    np.testing.assert_array_equal(ij.Su_minus, 0.0)
    yb = ij.predict(y, u)
    assert np.abs(yb[1:] - y[1:]).max() < 1e-8 * np.abs(y).max() * 10


def test_moesp_window_slides_and_tracks_change():
    """Online MOESP: the window grows, then slides; once it holds only data of the new system it identifies that."""
    rng = np.random.default_rng(9)
    A1, A2 = np.diag([0.9, 0.5]), np.diag([0.6, -0.4])
    B, C, D = rng.standard_normal((2, 1)), rng.standard_normal((1, 2)), np.zeros((1, 1))
    u = rng.standard_normal((1000, 1))
    y1 = simulate_standard(A1, B, C, D, u[:500])
    x = np.zeros(2)
    for k in range(500):               # state at the switch
        x = A1 @ x + B @ u[k]
    y2 = simulate_standard(A2, B, C, D, u[500:], x0=x)
    y = np.vstack([y1, y2])
    win = sysid.MOESPWindow(1, 1, window=200, order=2, block_rows=3)
    assert not win.ready
    with pytest.raises(ValueError, match="too few samples"):
        win.fit()
    win.push(u[:300], y[:300])
    assert win.count == 202 and win.ready
    res = win.fit()
    assert eig_match_error([0.9, 0.5], res.eigenvalues()) < 1e-8
    # equals the batch fit on the same samples
    batch = sysid.moesp(u[98:300], y[98:300], order=2, block_rows=3)
    np.testing.assert_allclose(res.eigenvalues().real, batch.eigenvalues().real, atol=1e-12)
    for k in range(300, 800):
        win.push(u[k], y[k])
    res = win.fit()
    assert eig_match_error([0.6, -0.4], res.eigenvalues()) < 1e-8
    win.clear()
    assert win.count == 0


# ------------------------------------------------------------------------------------------------ AT-10 (Gilbert)

def _H_rls(a, b, z):
    """H(z) of the RLS model with the minus-sign denominator (erratum E8)."""
    ny, nu, nb = b.shape
    H = np.zeros((ny, nu), complex)
    for i in range(ny):
        den = 1 - sum(a[i, l] * z ** -(l + 1) for l in range(a.shape[1]))
        for j in range(nu):
            H[i, j] = sum(b[i, j, l] * z ** -(l + 1) for l in range(nb)) / den
    return H


def _H_ss(R, z):
    return R.C @ np.linalg.solve(z * np.eye(R.order) - R.A, R.B) + R.D


def _random_z(rng, count=10):
    return rng.uniform(-2, 2, count) + 1j * rng.uniform(-2, 2, count)


@pytest.mark.parametrize("na,nb,ny,nu", [(1, 1, 3, 2), (2, 2, 2, 3), (3, 2, 2, 2), (2, 3, 1, 2)])
def test_at10_gilbert_matches_transfer_function(na, nb, ny, nu):
    """AT-10: C (zI - PhiA)^-1 PhiB = H(z) at 10 random z (rel 1e-10); nx = sum rank(R_i) = ny max(na, nb) for
    generic distinct poles (one pole belongs to one output, rank 1). Complex poles become real 2x2 blocks."""
    rng = np.random.default_rng(100 + na * 7 + nb)
    a = rng.uniform(-0.6, 0.6, (ny, na))
    b = rng.standard_normal((ny, nu, nb))
    R = sysid.gilbert(a, b)
    assert R.minimal and np.isrealobj(R.A)
    assert R.order == ny * max(na, nb)
    for z in _random_z(rng):
        H = _H_rls(a, b, z)
        assert np.abs(_H_ss(R, z) - H).max() <= 1e-10 * max(1.0, np.abs(H).max())


def test_at10_gilbert_shared_poles_is_minimal():
    """Two outputs with the same denominator and one input: residues R_i are rank 1 (not 2), so nx = na, not 2 na."""
    a = np.array([[0.5, 0.2], [0.5, 0.2]])
    b = np.array([[[1.0, 0.3]], [[-2.0, 0.7]]])
    R = sysid.gilbert(a, b)
    # independent count: residues of the shared poles, rank by numpy
    poles = np.roots([1, -0.5, -0.2])
    ranks = []
    for p in poles:
        other = poles[poles != p][0]
        res = np.array([[np.polyval(b[i, 0], p) / (p - other)] for i in range(2)])
        ranks.append(np.linalg.matrix_rank(res))
    assert R.order == sum(ranks) == 2 and R.minimal
    rng = np.random.default_rng(0)
    for z in _random_z(rng):
        assert np.abs(_H_ss(R, z) - _H_rls(a, b, z)).max() <= 1e-10 * max(1, np.abs(_H_rls(a, b, z)).max())


def test_at10_gilbert_first_order_is_diag():
    """AT-10: n_a = n_b = 1 gives PhiA = diag(a), PhiB = [b_ij], C = I (1e-10)."""
    a = np.array([[0.9], [-0.3], [0.5]])
    b = np.array([[[0.5], [1.0]], [[-2.0], [0.1]], [[0.3], [-0.7]]])
    R = sysid.gilbert(a, b)
    np.testing.assert_allclose(R.A, np.diag(a[:, 0]), atol=1e-10)
    np.testing.assert_allclose(R.B, b[:, :, 0], atol=1e-10)
    np.testing.assert_allclose(R.C, np.eye(3), atol=1e-10)
    np.testing.assert_array_equal(R.D, 0.0)


def test_gilbert_repeated_pole_fallback():
    """A double pole (z - 0.5)^2 in one output: Gilbert does not apply; the observable-form fallback is flagged
    non-minimal and still realizes H(z)."""
    a = np.array([[1.0, -0.25]])                        # 1 - z^-1 + 0.25 z^-2 = (1 - 0.5 z^-1)^2
    b = np.array([[[1.0, 0.5]]])
    R = sysid.gilbert(a, b)
    assert not R.minimal and R.order == 2
    rng = np.random.default_rng(1)
    for z in _random_z(rng):
        assert abs(_H_ss(R, z) - _H_rls(a, b, z)).max() <= 1e-10 * max(1, abs(_H_rls(a, b, z)).max())


def test_gilbert_pole_zero_cancellation_drops_state():
    """b(z) = (1 - 0.5 z^-1) z^-1 over (1 - 0.5 z^-1)(1 - 0.2 z^-1): the pole 0.5 has zero residue."""
    a = np.array([[0.7, -0.1]])                         # (1 - 0.5 z^-1)(1 - 0.2 z^-1)
    b = np.array([[[1.0, -0.5]]])
    R = sysid.gilbert(a, b)
    assert R.order == 1
    np.testing.assert_allclose(R.A, [[0.2]], atol=1e-12)


# ------------------------------------------------------------------------------------------------ AT-11 .. AT-13

def test_at11_resampling_values():
    for ratio, at, bt in [(2, 0.81, 0.95), (3, 0.729, 1.355), (2.5, 0.7695, 1.1525)]:
        a2, b2 = sysid.resample(0.9, 0.5, ratio)
        assert a2 == pytest.approx(at, abs=1e-12) and b2 == pytest.approx(bt, abs=1e-12)


def test_at11_resampling_equals_repeated_steps():
    """Simulating the original model with held input q times equals one step of the resampled model."""
    rng = np.random.default_rng(11)
    a, b = rng.uniform(-0.95, 0.95, 3), rng.standard_normal((3, 2))
    y0, u = rng.standard_normal(3), rng.standard_normal(2)
    for q in (1, 2, 3, 5):
        y = y0.copy()
        for _ in range(q):
            y = a * y + b @ u
        at, bt = sysid.resample(a, b, q)
        np.testing.assert_allclose(at * y0 + bt @ u, y, rtol=0, atol=1e-12 * max(1, np.abs(y).max()))


def test_at12_switch_factors():
    Ts, tsw = 0.22, 0.05
    f = sysid.switch_factor(np.array([Ts, Ts + tsw / 2, Ts + tsw]), Ts, tsw)
    np.testing.assert_allclose(f, [4.53979e-5, 0.5, 0.9999546], rtol=0, atol=1e-7)
    assert sysid.switch_factor(Ts + tsw / 2, Ts, tsw) == pytest.approx(0.5, abs=1e-15)


def test_at13_eps_si_invariance():
    rng = np.random.default_rng(13)
    y = np.cumsum(rng.standard_normal((300, 3)), axis=0)
    yb = y + 0.05 * rng.standard_normal(y.shape)
    e1 = sysid.eps_si(y, yb)
    e2 = sysid.eps_si(1000 * y + 273.15, 1000 * yb + 273.15)
    # k = 0: the running range is still zero, (2.92) divides by eps alone; invariance holds from k = 1 on
    np.testing.assert_allclose(e2[1:], e1[1:], rtol=1e-9)
    # definition (2.92) by hand for one k
    k = 150
    rng_ = y[:k + 1].max(0) - y[:k + 1].min(0)
    assert e1[k] == pytest.approx(np.mean(np.abs(y[k] - yb[k]) / (rng_ + 1e-12)), rel=1e-14)
    assert sysid.eps_si_global([0.3, 0.4]) == pytest.approx(0.5)


# ------------------------------------------------------------------------------------------------ noisy data, 40 dB

def test_moesp_noisy_40db_random_mimo():
    """30 random stable 3rd-order systems, 2 inputs, 2 outputs, N = 4000 white-noise samples, white output noise at
    40 dB SNR (noise std = 1 % of each output's std).

    Tolerances: MOESP with white output noise is consistent; the noise enters L22 at the level of the noise
    singular values sigma_{n+1} (about 1 % of the signal level / sqrt(N) per Hankel entry, averaged over N), so:
    * Markov parameters D, C PhiB, C PhiA PhiB, C PhiA^2 PhiB: relative error (to the largest entry) <= 5e-3
      (measured worst over the 30 systems: 2.1e-3);
    * eigenvalues: first-order subspace perturbation is rho = sigma_{n+1} / sigma_n (noise floor over the weakest
      mode), so |d lambda| <= 0.1 rho + 2e-3 (measured worst ratio |d lambda| / rho = 0.041; one system has a mode
      at the noise floor, rho = 0.91, where its eigenvalue is only known to 0.037);
    * well-separated cases (rho < 0.1) are accurate to 5e-3 (measured worst 2.2e-3)."""
    worst_markov = 0.0
    for seed in range(30):
        rng = np.random.default_rng(seed)
        A, B, C, D = random_stable(rng, 3, 2, 2)
        u = rng.standard_normal((4000, 2))
        y = simulate_standard(A, B, C, D, u)
        yn = y + rng.standard_normal(y.shape) * y.std(axis=0) * 10 ** (-40 / 20)
        res = sysid.moesp(u, yn, order=3, block_rows=6, method="moesp")
        rho = res.singular_values[3] / res.singular_values[2]
        de = eig_match_error(np.linalg.eigvals(A), res.eigenvalues())
        assert de <= 0.1 * rho + 2e-3, (seed, de, rho)
        if rho < 0.1:
            assert de < 5e-3, (seed, de)
        mt, mi = markov_true(A, B, C, D, 4), res.markov(4)
        scale = max(np.abs(m).max() for m in mt)
        err = max(np.abs(x - y_).max() for x, y_ in zip(mt, mi)) / scale
        assert err <= 5e-3, (seed, err)
        worst_markov = max(worst_markov, err)
    assert worst_markov > 1e-5    # the noise is really there (noise-free fits are at 1e-12)


def test_po_moesp_noisy_40db_at_least_as_accurate():
    """PO-MOESP (past inputs and outputs as instruments) against plain MOESP on the data of
    test_moesp_noisy_40db_random_mimo: 30 random stable 3rd-order systems, n_u = n_y = 2, N = 4000, 40 dB white output
    noise, r = 6 for both.

    Measured (seeds 0..29): mean eigenvalue error 2.20e-3 (plain) vs 1.00e-3 (PO), ratio 0.45; worst 3.7e-2 vs
    5.0e-3 (plain's worst case is a mode near the noise floor of L22, which the instruments remove from L32);
    PO better on 19 of 30 systems. Asserted with margin: mean ratio <= 0.7 (measured 0.45, i.e. not merely
    "<= 1" by luck of a few systems), median ratio <= 1.1 (measured 0.83: the typical system is not worse), worst
    PO error <= 1e-2, and the Markov-parameter tolerance of the plain test (5e-3 relative) holds for PO as well."""
    e_plain, e_po = [], []
    for seed in range(30):
        rng = np.random.default_rng(seed)
        A, B, C, D = random_stable(rng, 3, 2, 2)
        u = rng.standard_normal((4000, 2))
        y = simulate_standard(A, B, C, D, u)
        yn = y + rng.standard_normal(y.shape) * y.std(axis=0) * 10 ** (-40 / 20)
        ev = np.linalg.eigvals(A)
        plain = sysid.moesp(u, yn, order=3, block_rows=6, method="moesp")
        po = sysid.moesp(u, yn, order=3, block_rows=6, method="po-moesp")
        assert po.reliable and po.columns == 4000 - 2 * 6 + 1
        e_plain.append(eig_match_error(ev, plain.eigenvalues()))
        e_po.append(eig_match_error(ev, po.eigenvalues()))
        mt, mi = markov_true(A, B, C, D, 4), po.markov(4)
        scale = max(np.abs(m).max() for m in mt)
        assert max(np.abs(x - y_).max() for x, y_ in zip(mt, mi)) / scale <= 5e-3, seed
    e_plain, e_po = np.array(e_plain), np.array(e_po)
    assert e_po.mean() <= 0.7 * e_plain.mean(), (e_po.mean(), e_plain.mean())
    assert np.median(e_po) <= 1.1 * np.median(e_plain), (np.median(e_po), np.median(e_plain))
    assert e_po.max() <= 1e-2, e_po.max()
    assert e_po.min() > 1e-6          # the noise is really there


def test_po_moesp_window_equals_batch():
    """Sliding-window PO-MOESP: capacity W + 2 r - 1 samples; a fit equals the batch fit on the held samples."""
    rng = np.random.default_rng(12)
    A, B, C, D = random_stable(rng, 2, 1, 1)
    u = rng.standard_normal((400, 1))
    y = simulate_standard(A, B, C, D, u)
    win = sysid.MOESPWindow(1, 1, window=150, order=2, block_rows=3, method="po-moesp")
    with pytest.raises(ValueError, match="too few samples"):
        win.fit()
    win.push(u[:300], y[:300])
    assert win.count == 150 + 2 * 3 - 1 and win.ready
    res = win.fit()
    batch = sysid.moesp(u[300 - win.count:300], y[300 - win.count:300], order=2, block_rows=3, method="po-moesp")
    assert res.columns == batch.columns == 150
    np.testing.assert_allclose(np.sort(res.eigenvalues().real), np.sort(batch.eigenvalues().real), atol=1e-12)
    assert eig_match_error(np.linalg.eigvals(A), res.eigenvalues()) < 1e-8


def test_rls_noisy_40db():
    """RLS (n_a = n_b = 1, 2 outputs, 2 inputs) with 40 dB white output noise: equation-error bias of a is about
    -a sigma_e^2 / var(y) = 1e-4 relative, the random error about sigma_e / (std(y) sqrt(N)) ~ 1e-4: tolerance 5e-3."""
    rng = np.random.default_rng(21)
    a, B = np.array([0.8, 0.4]), rng.standard_normal((2, 2))
    N = 5000
    u = rng.standard_normal((N, 2))
    y = np.zeros((N, 2))
    for k in range(1, N):
        y[k] = a * y[k - 1] + B @ u[k]
    yn = y + rng.standard_normal(y.shape) * y.std(axis=0) * 1e-2
    r = sysid.RLS(2, 2, lam=1.0, P0=1e4)
    r.update_many(u, yn)
    ah, bh = r.parameters
    assert np.abs(ah[:, 0] - a).max() < 5e-3
    assert np.abs(bh[:, :, 0] - B).max() < 5e-3 * np.abs(B).max()
    assert np.abs(ah[:, 0] - a).max() > 1e-6      # noise has an effect


# ------------------------------------------------------------------------------------------------ bad data

def test_moesp_bad_arguments():
    rng = np.random.default_rng(0)
    u, y = rng.standard_normal((100, 1)), rng.standard_normal((100, 1))
    with pytest.raises(ValueError, match="too few samples"):
        sysid.moesp(u[:10], y[:10], order=2, block_rows=4)
    with pytest.raises(ValueError, match="mismatched lengths"):
        sysid.moesp(u, y[:90], order=2)
    bad = y.copy()
    bad[5] = np.nan
    with pytest.raises(ValueError, match="^y: .*NaN"):
        sysid.moesp(u, bad, order=2)
    with pytest.raises(ValueError, match="^u: .*NaN"):
        sysid.moesp(np.full((100, 1), np.inf), y, order=2)
    with pytest.raises(ValueError, match="order"):
        sysid.moesp(u, y, order=-1)
    with pytest.raises(ValueError, match="order"):
        sysid.moesp(u, y, order=5, block_rows=3)
    with pytest.raises(ValueError, match="block_rows"):
        sysid.moesp(u, y, order=1, block_rows=1)
    with pytest.raises(ValueError, match="threshold"):
        sysid.moesp(u, y, threshold=2.0)
    with pytest.raises(TypeError, match="order"):
        sysid.moesp(u, y, order=1.5)
    with pytest.raises(TypeError, match="u"):
        sysid.moesp("abc", y)
    with pytest.raises(ValueError, match="u"):
        sysid.moesp(np.zeros((100, 1, 1)), y)
    with pytest.raises(ValueError, match="window"):
        sysid.MOESPWindow(1, 1, window=3, order=2)
    # PO-MOESP: 2 r (n_u + n_y) + 2 r - 1 samples, 2 r (n_u + n_y) window columns, known method names only
    with pytest.raises(ValueError, match="too few samples: PO-MOESP .* needs at least 23"):
        sysid.moesp(u[:22], y[:22], order=2, block_rows=4, method="po-moesp")
    sysid.moesp(u[:23], y[:23], order=2, block_rows=4, method="po-moesp")      # the minimum is enough
    with pytest.raises(ValueError, match="^y: .*NaN"):
        sysid.moesp(u, bad, order=2, method="po-moesp")
    with pytest.raises(ValueError, match="order"):
        sysid.moesp(u, y, order=5, block_rows=3, method="po-moesp")
    with pytest.raises(ValueError, match="method"):
        sysid.moesp(u, y, order=2, method="n4sid")
    with pytest.raises(TypeError, match="method"):
        sysid.moesp(u, y, order=2, method=1)
    with pytest.raises(ValueError, match="window: must be >= 2 \\* block_rows"):
        sysid.MOESPWindow(1, 1, window=11, order=2, block_rows=3, method="po-moesp")
    with pytest.raises(ValueError, match="method"):
        sysid.MOESPWindow(1, 1, window=100, order=2, method="PO")
    # data near overflow: either a clear ArithmeticError or finite matrices, never a crash or NaNs
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sysid.moesp(1e300 * u, 1e300 * y, order=1)
        assert all(np.all(np.isfinite(m)) for m in (res.A, res.B, res.C, res.D))
    except ArithmeticError as e:
        assert "not finite" in str(e)


@pytest.mark.parametrize("method", ["moesp", "po-moesp"])
@pytest.mark.parametrize("kind", ["zero", "constant", "duplicate"])
def test_moesp_non_exciting_input_is_flagged(kind, method):
    """Zero, constant or rank-deficient (two identical channels) inputs: PhiB/D are not determined; the fit still
    runs and returns a result flagged unreliable with a RuntimeWarning."""
    rng = np.random.default_rng(1)
    N = 300
    if kind == "zero":
        u = np.zeros((N, 1))
    elif kind == "constant":
        u = np.ones((N, 1))
    else:
        c = rng.standard_normal((N, 1))
        u = np.hstack([c, c])
    A, B, C, D = random_stable(rng, 2, u.shape[1], 1)
    y = simulate_standard(A, B, C, D, u, x0=[1.0, -1.0]) + 1e-3 * rng.standard_normal((N, 1))
    with pytest.warns(RuntimeWarning, match="unreliable"):
        res = sysid.moesp(u, y, order=2, block_rows=3, method=method)
    assert not res.reliable and res.rank_u < 3 * u.shape[1]


@pytest.mark.parametrize("method", ["moesp", "po-moesp"])
def test_moesp_exciting_input_not_flagged(method):
    rng = np.random.default_rng(1)
    A, B, C, D = random_stable(rng, 2, 1, 1)
    u = rng.standard_normal((300, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = sysid.moesp(u, simulate_standard(A, B, C, D, u), order=2, block_rows=3, method=method)
    assert res.reliable and res.rank_u == 3


def test_rls_bad_arguments():
    for lam in (0.0, -0.5, 1.5, np.nan):
        with pytest.raises(ValueError, match="lam"):
            sysid.RLS(1, 1, lam=lam)
    with pytest.raises(ValueError, match="n_a"):
        sysid.RLS(1, 1, n_a=-1)
    with pytest.raises(ValueError, match="n_a, n_b"):
        sysid.RLS(1, 1, n_a=0, n_b=0)
    with pytest.raises(ValueError, match="n_y"):
        sysid.RLS(0, 1)
    with pytest.raises(ValueError, match="P0"):
        sysid.RLS(1, 1, P0=-1.0)
    with pytest.raises(ValueError, match="P0"):
        sysid.RLS(1, 1, P0=np.array([[1.0, 2.0], [2.0, 1.0]]))       # not positive definite
    with pytest.raises(ValueError, match="P0"):
        sysid.RLS(1, 1, P0=np.eye(3))
    with pytest.raises(TypeError, match="n_b"):
        sysid.RLS(1, 1, n_b="2")
    r = sysid.RLS(2, 1)
    with pytest.raises(ValueError, match="^y: .*NaN"):
        r.update([1.0], [1.0, np.nan])
    with pytest.raises(ValueError, match="^u"):
        r.update([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="^y"):
        r.update([1.0], [1.0])
    with pytest.raises(ValueError, match="mismatched lengths"):
        r.update_many(np.zeros((5, 1)), np.zeros((4, 2)))
    with pytest.raises(ValueError, match="a"):
        r.set_parameters(np.zeros((1, 1)), np.zeros((2, 1, 1)))
    assert r.samples == 0   # failed calls did not change the state


def test_gilbert_ij_qa_bad_arguments():
    with pytest.raises(ValueError, match="a"):
        sysid.gilbert(np.array([[np.nan]]), np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="b"):
        sysid.gilbert(np.ones((2, 1)), np.ones((1, 1, 1)))
    with pytest.raises(ValueError, match="C"):
        sysid.ij_continuous(np.eye(2), np.ones((2, 1)), np.ones((1, 3)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="PhiA"):
        sysid.ij_discrete(np.ones((2, 3)), np.ones((2, 1)), np.ones((1, 2)), np.ones((1, 1)))
    with pytest.raises(ValueError, match="form"):
        sysid.ij_discrete(np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.ones((1, 1)), form="classic")
    with pytest.raises(ValueError, match="dt"):
        sysid.discretize(np.eye(2), np.ones((2, 1)), 0.0)
    with pytest.raises(ValueError, match="ratio"):
        sysid.resample(0.9, 0.5, -1.0)
    with pytest.raises(ValueError, match="y_pred"):
        sysid.eps_si(np.ones((5, 2)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="t_switch"):
        sysid.switch_factor(0.1, 0.0, 0.0)


def test_overflowing_data_raises_instead_of_aborting_the_process():
    """Reference LAPACK stops the process when a NaN reaches dgesvd's scaling (XERBLA). Data whose LQ factor
    overflows must raise ArithmeticError instead; run in a subprocess so an abort would fail this test."""
    import subprocess
    import sys
    code = (
        "import numpy as np, warnings\n"
        "warnings.simplefilter('ignore')\n"
        "from cosim import sysid\n"
        "for m in ('moesp', 'po-moesp'):\n"
        "    try:\n"
        "        sysid.moesp(np.full((100, 1), 1e308), np.ones((100, 1)), order=2, method=m)\n"
        "        raise SystemExit('no error for overflowing data')\n"
        "    except ArithmeticError:\n"
        "        pass\n"
        "w = sysid.MOESPWindow(n_u=1, n_y=1, window=60, order=2)\n"
        "for k in range(80):\n"
        "    w.push([1e308 * np.sin(k)], [1e308])\n"
        "try:\n"
        "    w.fit()\n"
        "except ArithmeticError:\n"
        "    pass\n"
        "print('survived')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "survived" in out.stdout, out.stdout + out.stderr
