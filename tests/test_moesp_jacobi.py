"""The per-step MOESP fit solves its small SVD and least-squares problems by one-sided Jacobi (csrc/sysid/jsvd.c)
instead of LAPACK's dgesvd / dgelsd (issue 12 follow-up, speed). It must give the MOESP of the spec (6.1) to
rounding: compared here with a plain-MOESP written with NumPy's LAPACK SVD and lstsq, on similarity-invariant
quantities (singular values of L22, eigenvalues of PhiA, Markov parameters), for full-rank (noisy) and
rank-deficient (noise-free: L22 has r ny - n zero singular values) data, and for the C^+ of the IJ conversion."""
import warnings

import numpy as np
import pytest

from cosim import sysid
from test_sysid import random_stable, simulate_standard


def numpy_moesp(u, y, n, r):
    """Plain MOESP (spec 6.1) with NumPy/LAPACK: singular values of L22 and (PhiA, PhiB, C, D)."""
    N, nu = u.shape
    ny = y.shape[1]
    W = N - r + 1
    Hu = np.hstack([u[i:i + W] for i in range(r)])
    Hy = np.hstack([y[i:i + W] for i in range(r)])
    L = np.linalg.qr(np.hstack([Hu, Hy]), mode="r").T
    p = r * nu
    L11, L21, L22 = L[:p, :p], L[p:, :p], L[p:, p:]
    Us, sv, _ = np.linalg.svd(L22)
    G = Us[:, :n] * np.sqrt(sv[:n])
    A = np.linalg.lstsq(G[:-ny], G[ny:], rcond=None)[0]
    Un = Us[:, n:].T
    M = np.linalg.lstsq(L11.T, (Un @ L21).T, rcond=None)[0].T
    K, R = [], []
    for i in range(r):
        Ni = np.zeros((Un.shape[0], n))
        for j in range(i + 1, r):
            Ni += Un[:, j * ny:(j + 1) * ny] @ G[(j - i - 1) * ny:(j - i) * ny]
        K.append(np.hstack([Un[:, i * ny:(i + 1) * ny], Ni]))
        R.append(M[:, i * nu:(i + 1) * nu])
    X = np.linalg.lstsq(np.vstack(K), np.vstack(R), rcond=None)[0]
    return sv, sysid.StateSpace(A=A, B=X[ny:], C=G[:ny], D=X[:ny])


def invariants(m, k=4):
    return np.concatenate([x.reshape(-1) for x in m.markov(k)])


@pytest.mark.parametrize("noise", [0.0, 0.05])
@pytest.mark.parametrize("nu,ny,n,r", [(1, 1, 1, 2), (1, 2, 2, 3), (2, 2, 3, 4), (2, 1, 2, 5)])
def test_jacobi_moesp_equals_lapack_moesp(nu, ny, n, r, noise):
    rng = np.random.default_rng(100 * nu + 10 * ny + r)
    A, B, C, D = random_stable(rng, n, nu, ny)
    N = 400
    u = rng.standard_normal((N, nu))
    y = simulate_standard(A, B, C, D, u) + noise * rng.standard_normal((N, ny))
    res = sysid.moesp(u, y, order=n, block_rows=r, method="moesp")
    sv, ref = numpy_moesp(u, y, n, r)
    # singular values: the leading ones to 1e-12 relative; the noise-free null space (~1e-15 sigma_1) to rounding
    np.testing.assert_allclose(res.singular_values, sv, rtol=1e-12, atol=1e-13 * sv[0])
    scale = np.abs(invariants(ref)).max()
    np.testing.assert_allclose(invariants(res), invariants(ref), rtol=0, atol=1e-11 * scale)
    np.testing.assert_allclose(np.sort_complex(res.eigenvalues()), np.sort_complex(np.linalg.eigvals(ref.A)),
                               rtol=0, atol=1e-11)


def test_jacobi_moesp_window_slides_like_lapack_refit():
    """Sliding window (recursive factor + Jacobi fit) against the NumPy re-fit of the same samples, many steps."""
    rng = np.random.default_rng(7)
    A, B, C, D = random_stable(rng, 2, 1, 2)
    N, W, r = 300, 120, 3
    u = rng.standard_normal((N, 1))
    y = simulate_standard(A, B, C, D, u) + 0.01 * rng.standard_normal((N, 2))
    w = sysid.MOESPWindow(1, 2, window=W, order=2, block_rows=r, method="moesp")
    worst = 0.0
    for k in range(N):
        w.push(u[k], y[k])
        if k + 1 >= W + r - 1 and k % 17 == 0:
            res = w.fit()
            _, ref = numpy_moesp(u[k + 2 - W - r:k + 1], y[k + 2 - W - r:k + 1], 2, r)
            a, b = invariants(res), invariants(ref)
            worst = max(worst, np.abs(a - b).max() / np.abs(b).max())
    assert worst < 1e-10, worst


@pytest.mark.parametrize("nx,ny", [(1, 1), (2, 1), (1, 2), (3, 2), (2, 3)])
def test_ij_conversion_pinv_equals_numpy(nx, ny):
    """Standard-form IJs Sy = C PhiA C^+, Su^- = C PhiB - Sy D, Su^+ = D with the Jacobi C^+ equal NumPy's pinv."""
    rng = np.random.default_rng(nx * 10 + ny)
    nu = 2
    PhiA, PhiB = rng.standard_normal((nx, nx)), rng.standard_normal((nx, nu))
    C, D = rng.standard_normal((ny, nx)), rng.standard_normal((ny, nu))
    ij = sysid.ij_discrete(PhiA, PhiB, C, D, form="standard")
    Sy = C @ PhiA @ np.linalg.pinv(C)
    np.testing.assert_allclose(ij.Sy, Sy, rtol=0, atol=1e-12 * max(1.0, np.abs(Sy).max()))
    np.testing.assert_allclose(ij.Su_minus, C @ PhiB - Sy @ D, rtol=0, atol=1e-12 * max(1.0, np.abs(Sy).max()) * 10)
    np.testing.assert_allclose(ij.Su_plus, D, rtol=0, atol=0)


def test_ij_conversion_pinv_rank_deficient_c():
    """A rank-1 C (2 x 2): the pseudo-inverse drops the zero singular value, as NumPy's pinv does."""
    C = np.array([[1.0, 2.0], [2.0, 4.0]])
    PhiA, PhiB, D = np.array([[0.5, 0.1], [0.0, 0.3]]), np.ones((2, 1)), np.zeros((2, 1))
    ij = sysid.ij_discrete(PhiA, PhiB, C, D, form="standard")
    np.testing.assert_allclose(ij.Sy, C @ PhiA @ np.linalg.pinv(C), rtol=0, atol=1e-13)


@pytest.mark.parametrize("scale", [1e-150, 1e150, 1e270])
def test_jacobi_moesp_is_scale_invariant(scale):
    """u and y scaled by one factor: singular values scale with it and eig(PhiA) stays, also where squared norms of
    the data would overflow or underflow (the Jacobi SVD scales by a power of two). (PhiB and D are not compared:
    Gamma_r = U_s S^(1/2) scales with the square root of the data, so at such scales the [D; PhiB] problem is
    badly column-scaled and rank-cut by rcond, with LAPACK's dgelsd as well.)"""
    rng = np.random.default_rng(3)
    A, B, C, D = random_stable(rng, 2, 1, 2)
    u = rng.standard_normal((200, 1))
    y = simulate_standard(A, B, C, D, u) + 0.01 * rng.standard_normal((200, 2))
    ref = sysid.moesp(u, y, order=2, block_rows=3, method="moesp")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # the [D; PhiB] rank cut (see above) is reported as unreliable
        res = sysid.moesp(scale * u, scale * y, order=2, block_rows=3, method="moesp")
    np.testing.assert_allclose(res.singular_values / scale, ref.singular_values, rtol=1e-12,
                               atol=1e-13 * ref.singular_values[0])
    np.testing.assert_allclose(np.sort_complex(res.eigenvalues()), np.sort_complex(ref.eigenvalues()), rtol=0,
                               atol=1e-11)
