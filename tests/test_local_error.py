"""Local error of one macro step (busch2016 eq. 26): exact solutions at T_{N-p..N} fed into one co-simulation step,
compared with the exact solution at T_{N+1}. Built from cosim.Stepper and the engine's approximation weights, so it
checks the building blocks the master uses. busch2016 §5: EXTRIPOL-C1 has the local-error order of Lagrange;
EXTRIPOL-C0's is bounded by 3 (linear join)."""
import numpy as np
import pytest
from scipy.linalg import expm

import cosim
from cosim import _core, models
from conftest import fitted_order

CK, DK = 1e5, 1e3
A = models.monolithic_matrix(ck=CK, dk=DK)
Z0 = np.array([0.1, 0.0, 0.0, 0.0])


def exact_z(t):
    return expm(A * t) @ Z0


def exact_y(t):
    z = exact_z(t)
    return np.array([z[0], z[1]]), np.array([CK * (z[2] - z[0]) + DK * (z[3] - z[1])])


def input_poly(kind, k, interpolate, times, values, TN, H):
    """Coefficients (deg+1, n) of the approximation polynomial of the signals `values` (rows = samples)."""
    W, deg, npts = _core.approx_weights(kind, k, interpolate, np.asarray(times), TN, H)
    V = np.zeros((8, values.shape[1]))
    V[: len(values)] = values
    return W[:, 0, :] @ V


def local_error(kind, k, H, scheme, TN=0.004):
    s = models.two_mass_oscillator(ck=CK, dk=DK)
    n = 8
    hist_T = TN - H * np.arange(n)  # newest first
    y1 = np.array([exact_y(t)[0] for t in hist_T])
    y2 = np.array([exact_y(t)[1] for t in hist_T])
    z = exact_z(TN)
    st1 = cosim.Stepper(s["S1"], cosim.Exact(), x0=z[:2], t0=TN)
    st2 = cosim.Stepper(s["S2"], cosim.Exact(), x0=z[2:], t0=TN)
    st1.do_step(TN, H, input_poly(kind, k, False, hist_T, y2, TN, H))
    if scheme == "gauss-seidel":  # S2 interpolates S1's new outputs (busch2016 eq. 13)
        y1_new = st1.x
        u2 = input_poly(kind, k, True, np.concatenate([[TN + H], hist_T[:-1]]), np.vstack([y1_new, y1[:-1]]), TN, H)
    else:
        u2 = input_poly(kind, k, False, hist_T, y1, TN, H)
    st2.do_step(TN, H, u2)
    return np.max(np.abs(np.concatenate([st1.x, st2.x]) - exact_z(TN + H))) / np.max(np.abs(exact_z(TN + H)))


HS = np.array([1.6e-4, 8e-5, 4e-5, 2e-5])  # local errors stay above the round-off floor (~5e-15)
LAGRANGE, C0, C1 = 0, 1, 2


@pytest.mark.parametrize("scheme", ["gauss-seidel", "jacobi"])
@pytest.mark.parametrize("k", range(4))
def test_extripol_c1_has_the_local_order_of_lagrange(scheme, k):
    lag = fitted_order(HS, [local_error(LAGRANGE, k, H, scheme) for H in HS])
    c1 = fitted_order(HS, [local_error(C1, k, H, scheme) for H in HS])
    assert lag >= k + 1.7  # at least O(H^{k+2}) (velocity level; positions one higher)
    assert abs(c1 - lag) <= 0.3


@pytest.mark.parametrize("scheme", ["gauss-seidel", "jacobi"])
@pytest.mark.parametrize("k", range(4))
def test_extripol_c0_local_order_bounded_by_3(scheme, k):
    c0 = fitted_order(HS, [local_error(C0, k, H, scheme) for H in HS])
    assert c0 <= 3.3
    if k >= 1:
        assert c0 >= 2.7  # the bound is attained: the linear join costs the higher orders
