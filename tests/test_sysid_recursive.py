"""The recursive MOESP window (issue 12 follow-up): push up-dates / down-dates the triangular factor of the stacked
Hankel data; the fit must equal the batch MOESP on the same samples to rounding (similarity-invariant quantities:
singular values of L22 / L32, eigenvalues of PhiA, Markov parameters D, C PhiB, C PhiA PhiB)."""
import numpy as np
import pytest

from cosim import sysid
from test_sysid import random_stable, simulate_standard


def markov(res, k=3):
    out = [res.D]
    P = res.B
    for _ in range(k):
        out.append(res.C @ P)
        P = res.A @ P
    return np.concatenate([m.reshape(-1) for m in out])


def assert_same_fit(a, b, rtol=1e-9):
    sa, sb = a.singular_values, b.singular_values
    np.testing.assert_allclose(sa, sb, rtol=rtol, atol=rtol * sb[0])
    ma, mb = markov(a), markov(b)
    np.testing.assert_allclose(ma, mb, rtol=rtol, atol=rtol * np.abs(mb).max())
    ea, eb = np.sort_complex(np.linalg.eigvals(a.A)), np.sort_complex(np.linalg.eigvals(b.A))
    np.testing.assert_allclose(ea, eb, atol=rtol * max(1.0, np.abs(eb).max()))


@pytest.mark.parametrize("method", ["moesp", "po-moesp"])
def test_recursive_window_equals_batch(method):
    rng = np.random.default_rng(3)
    A, B, C, D = random_stable(rng, 3, 2, 2)
    N, W, r = 1500, 120, 4
    u = rng.standard_normal((N, 2))
    y = simulate_standard(A, B, C, D, u) + 1e-3 * rng.standard_normal((N, 2))     # noisy: full-rank data
    span = r if method == "moesp" else 2 * r
    win = sysid.MOESPWindow(2, 2, window=W, order=3, block_rows=r, method=method, refactor_every=0)
    checked = 0
    for k in range(N):
        win.push(u[k], y[k])
        if k + 1 in (W // 2 + 2 * span, W + span - 1, 400, 977, N):         # growing, just full, sliding
            n = min(k + 1, W + span - 1)
            res = win.fit()
            batch = sysid.moesp(u[k + 1 - n:k + 1], y[k + 1 - n:k + 1], order=3, block_rows=r, method=method)
            assert res.columns == batch.columns == n - span + 1
            assert_same_fit(res, batch)
            checked += 1
    assert checked == 5
    st = win.stats
    assert st["refactorizations"] == 0 and st["failed_downdates"] == 0     # the fits above were all recursive
    assert st["pushes_since_refactor"] == N


def test_recursive_window_recovers_from_rank_loss():
    """A window whose data lose rank (zeros) makes a downdate fail: the next fit re-factors from the samples and
    still equals the batch fit; afterwards the recursion resumes."""
    rng = np.random.default_rng(5)
    A, B, C, D = random_stable(rng, 2, 1, 1)
    W, r = 60, 3
    u = rng.standard_normal((400, 1))
    y = simulate_standard(A, B, C, D, u) + 1e-4 * rng.standard_normal((400, 1))
    u[100:200] = 0.0
    y[100:200] = 0.0
    win = sysid.MOESPWindow(1, 1, window=W, order=2, block_rows=r, refactor_every=0)
    win.push(u[:330], y[:330])
    res = win.fit()
    n = W + r - 1
    assert_same_fit(res, sysid.moesp(u[330 - n:330], y[330 - n:330], order=2, block_rows=r, method="moesp"))
    st = win.stats
    assert st["failed_downdates"] >= 1 and st["refactorizations"] == 1
    win.push(u[330:], y[330:])
    res = win.fit()
    assert_same_fit(res, sysid.moesp(u[400 - n:], y[400 - n:], order=2, block_rows=r, method="moesp"))
    assert win.stats["refactorizations"] == 1      # no new failure: the recursion carried on


def test_refactor_every_bounds_the_recursion():
    rng = np.random.default_rng(8)
    A, B, C, D = random_stable(rng, 2, 1, 1)
    u = rng.standard_normal((700, 1))
    y = simulate_standard(A, B, C, D, u)
    win = sysid.MOESPWindow(1, 1, window=100, order=2, block_rows=3)          # default: re-factor every W pushes
    assert win.refactor_every == 100
    for k in range(700):
        win.push(u[k], y[k])
        if k % 10 == 9:
            win.fit()
    st = win.stats
    assert st["pushes_since_refactor"] == 0 and st["refactorizations"] == 7     # at the fits after 100, 200, .. 700
    assert_same_fit(win.fit(), sysid.moesp(u[-102:], y[-102:], order=2, block_rows=3, method="moesp"))


def test_refactor_every_argument():
    with pytest.raises(ValueError, match="refactor_every"):
        sysid.MOESPWindow(1, 1, 50, refactor_every=-1)
    with pytest.raises(TypeError, match="refactor_every"):
        sysid.MOESPWindow(1, 1, 50, refactor_every=1.5)
    with pytest.raises(TypeError, match="refactor_every"):
        sysid.MOESPWindow(1, 1, 50, refactor_every=True)
