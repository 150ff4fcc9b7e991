"""Coupling approximations (busch2016 §2, kraft2021 §4, moshagen §2.2) through the C weights."""
import numpy as np
import pytest

import cosim
from cosim import _core

LAGRANGE, C0, C1, HERMITE = 0, 1, 2, 3


def poly_from_weights(W, values, derivs=None):
    v = np.zeros(8)
    v[: len(values)] = values
    c = W[:, 0, :] @ v
    if derivs is not None:
        d = np.zeros(8)
        d[: len(derivs)] = derivs
        c = c + W[:, 1, :] @ d
    return c  # coefficients in s, increasing degree


def ev(c, s):
    return np.polynomial.polynomial.polyval(s, c)


def random_grid(rng, n, TN):
    """n sample times <= TN on a random non-equidistant grid, newest first, T[0] == TN."""
    steps = rng.uniform(0.2, 1.5, n - 1)
    return TN - np.concatenate([[0.0], np.cumsum(steps)])


@pytest.mark.parametrize("k", range(6))
@pytest.mark.parametrize("interpolate", [False, True])
def test_lagrange_reproduces_degree_k_polynomials(rng, k, interpolate):
    for _ in range(20):
        H = rng.uniform(0.3, 1.5)
        TN = rng.uniform(-1, 1)
        T = random_grid(rng, k + 1, TN + H if interpolate else TN)
        p = rng.normal(size=k + 1)
        W, deg, npts = _core.approx_weights(LAGRANGE, k, interpolate, T, TN, H)
        assert deg == k and npts == k + 1
        c = poly_from_weights(W, np.polyval(p, T))
        s = np.linspace(0, 1, 7)
        np.testing.assert_allclose(ev(c, s), np.polyval(p, TN + s * H), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("k", range(6))
def test_hermite_reproduces_degree_k_polynomials(rng, k):
    for _ in range(20):
        H, TN = rng.uniform(0.3, 1.5), rng.uniform(-1, 1)
        T = random_grid(rng, 4, TN)
        p = rng.normal(size=k + 1)
        W, deg, npts = _core.approx_weights(HERMITE, k, False, T, TN, H)
        assert deg == k and npts == (k + 2) // 2
        c = poly_from_weights(W, np.polyval(p, T), np.polyval(np.polyder(p), T) if k else np.zeros(4))
        s = np.linspace(0, 1, 7)
        np.testing.assert_allclose(ev(c, s), np.polyval(p, TN + s * H), rtol=1e-10, atol=1e-10)


def test_lagrange_degree_drops_during_startup():
    W, deg, npts = _core.approx_weights(LAGRANGE, 3, False, np.array([0.0, -1.0]), 0.0, 1.0)
    assert deg == 1 and npts == 2


def extripol_sequence(rng, kind, k, nsteps=8):
    """Piecewise polynomials of EXTRIPOL on consecutive steps of a random non-uniform grid for a smooth signal."""
    T = np.cumsum(np.concatenate([[0.0], rng.uniform(0.5, 1.5, nsteps + k + 3)]))
    f = lambda t: np.sin(1.3 * t) + 0.2 * t**2
    pieces = []
    for N in range(k + 2, k + 2 + nsteps):
        hist = T[N::-1][: k + 2]
        H = T[N + 1] - T[N]
        W, deg, npts = _core.approx_weights(kind, k, False, hist, T[N], H)
        assert npts == k + 2
        pieces.append((T[N], H, poly_from_weights(W, f(hist))))
    return pieces


@pytest.mark.parametrize("k", range(4))
def test_extripol_c0_is_continuous(rng, k):
    pieces = extripol_sequence(rng, C0, k)
    for (T0, H0, c0), (T1, H1, c1) in zip(pieces[:-1], pieces[1:]):
        assert abs(ev(c0, 1.0) - ev(c1, 0.0)) < 1e-12
    # and its slope generally jumps (C0 only)
    jumps = [abs(np.polynomial.polynomial.polyval(1.0, np.polynomial.polynomial.polyder(c0)) / H0
                 - np.polynomial.polynomial.polyval(0.0, np.polynomial.polynomial.polyder(c1)) / H1)
             for (T0, H0, c0), (T1, H1, c1) in zip(pieces[:-1], pieces[1:])]
    assert max(jumps) > 1e-6


@pytest.mark.parametrize("k", range(4))
def test_extripol_c1_is_continuously_differentiable(rng, k):
    pieces = extripol_sequence(rng, C1, k)
    der = np.polynomial.polynomial.polyder
    for (T0, H0, c0), (T1, H1, c1) in zip(pieces[:-1], pieces[1:]):
        assert abs(ev(c0, 1.0) - ev(c1, 0.0)) < 1e-12
        assert abs(ev(der(c0), 1.0) / H0 - ev(der(c1), 0.0) / H1) < 1e-10


@pytest.mark.parametrize("k", range(4))
def test_extripol_c1_end_value_is_lagrange_extrapolation(rng, k):
    """At h = H the C1 approximation equals the Lagrange value Phi_{N+1} (busch2016 §5)."""
    T = np.array([0.0, -0.8, -1.9, -2.5, -3.7, -4.1])
    vals = rng.normal(size=6)
    H = 0.9
    Wc, _, _ = _core.approx_weights(C1, k, False, T, 0.0, H)
    Wl, _, _ = _core.approx_weights(LAGRANGE, k, False, T, 0.0, H)
    assert abs(ev(poly_from_weights(Wc, vals), 1.0) - ev(poly_from_weights(Wl, vals), 1.0)) < 1e-12


def test_extripol_c0_k1_exact_for_linear_signals():
    """Degree-1 extrapolants of a linear signal are exact, so is their linear join."""
    T = np.array([0.0, -0.7, -1.6])
    f = lambda t: 0.3 - 1.7 * t
    W, _, _ = _core.approx_weights(C0, 1, False, T, 0.0, 0.8)
    c = poly_from_weights(W, f(T))
    np.testing.assert_allclose(ev(c, np.linspace(0, 1, 5)), f(0.8 * np.linspace(0, 1, 5)), atol=1e-13)


def test_approximation_objects_validate():
    with pytest.raises(ValueError, match="k must be in"):
        cosim.Lagrange(k=cosim.approximations.MAXDEG + 1)
    with pytest.raises(TypeError, match="k must be an int"):
        cosim.Lagrange(k=1.5)
    with pytest.raises(ValueError, match="continuity"):
        cosim.ExtrapolatedInterpolation(k=1, continuity=2)
    with pytest.raises(ValueError, match="mode"):
        cosim.Hermite(k=1, mode="fast")
    assert cosim.ZOH().spec() == (0, 0, 0)
