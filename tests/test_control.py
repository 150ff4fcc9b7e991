"""cosim.control: the pieces of Kraft's controller alone (kraft2021 §21 T1, T2, T4-T8)."""
from fractions import Fraction as F
from itertools import combinations

import numpy as np
import pytest

from cosim import control

# T1: constant-step constants (kraft2021 §8.1, exact rationals)
CPOS = [F(1, 2), F(1, 6), F(1, 8), F(19, 180), F(3, 32), F(863, 10080), F(275, 3456)]
CVEL = [F(1), F(1, 2), F(5, 12), F(3, 8), F(251, 720), F(95, 288), F(19087, 60480)]
RPOS = [F(1, 3), F(3, 4), F(38, 45), F(135, 152), F(863, 945), F(9625, 10356), F(135812, 144375)]
RVEL = [F(1, 2), F(5, 6), F(9, 10), F(251, 270), F(475, 502), F(19087, 19950), F(36799, 38174)]


@pytest.mark.parametrize("kappa", range(7))
def test_T1_constant_step_constants(kappa):
    cp, cv = control.error_constants(kappa, control.uniform_ratios(kappa))
    assert cp == pytest.approx(float(CPOS[kappa]), rel=1e-13, abs=0)
    assert cv == pytest.approx(float(CVEL[kappa]), rel=1e-13, abs=0)


@pytest.mark.parametrize("kappa", range(6))
def test_T1_ratios_and_imMD_factors(kappa):
    cp0, cv0 = control.error_constants(kappa, control.uniform_ratios(kappa))
    cp1, cv1 = control.error_constants(kappa + 1, control.uniform_ratios(kappa + 1))
    assert cp1 / cp0 == pytest.approx(float(RPOS[kappa]), rel=1e-12)
    assert cv1 / cv0 == pytest.approx(float(RVEL[kappa]), rel=1e-12)
    assert 1 - cp1 / cp0 == pytest.approx(float(1 - RPOS[kappa]), rel=1e-11)  # imMD factors (3.18)


def _quadrature(kappa, a):
    """(3.11)/(3.15) in s by Gauss-Legendre (exact for the polynomial integrands)."""
    s, w = np.polynomial.legendre.leggauss(12)
    s, w = 0.5 * (s + 1), 0.5 * w
    L = np.ones_like(s)
    for ai in [1.0] + list(a):
        L *= (s - 1 + ai) / ai
    return np.sum(w * (1 - s) * L), np.sum(w * L)


@pytest.mark.parametrize("kappa", [2, 3, 4, 5, 6, 7])
def test_T2_variable_step_closed_forms_against_quadrature(kappa):
    rng = np.random.default_rng(kappa)
    for _ in range(20):
        a = np.sort(rng.uniform(1, 5, kappa - 1))
        cp, cv = control.error_constants(kappa, a)
        qp, qv = _quadrature(kappa, a)
        assert cp == pytest.approx(qp, rel=1e-12, abs=1e-15)
        assert cv == pytest.approx(qv, rel=1e-12, abs=1e-15)


def test_T2_printed_kappa_2_3():
    a2, a3 = 1.7, 3.1
    cp, cv = control.error_constants(2, [a2])
    assert (cp, cv) == pytest.approx((1 / 6 - 1 / (12 * a2), 1 / 2 - 1 / (6 * a2)), rel=1e-14)
    cp, cv = control.error_constants(3, [a2, a3])
    assert cp == pytest.approx(1 / 6 - (1 / a2 + 1 / a3) / 12 + 1 / (20 * a2 * a3), rel=1e-14)
    assert cv == pytest.approx(1 / 2 - (1 / a2 + 1 / a3) / 6 + 1 / (12 * a2 * a3), rel=1e-14)


@pytest.mark.parametrize("kappa", range(5))
def test_T4_newton_identity(kappa):
    rng = np.random.default_rng(10 + kappa)
    T = np.cumsum(rng.uniform(0.2, 1.5, kappa + 2))[::-1]  # newest first
    u = rng.normal(size=kappa + 2)
    t = T[0] + rng.uniform(0.1, 1.0)
    p_hi = np.polyval(np.polyfit(T, u, kappa + 1), t)
    p_lo = np.polyval(np.polyfit(T[:kappa + 1], u[:kappa + 1], kappa), t)
    assert control.newton_difference(kappa, T, u, t) == pytest.approx(p_hi - p_lo, rel=1e-9, abs=1e-10)
    # κ! u[...] is the κ-th derivative of the interpolant
    c = np.polyfit(T[:kappa + 1], u[:kappa + 1], kappa)[0]
    assert control.divided_difference(T[:kappa + 1], u[:kappa + 1]) == pytest.approx(c, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("h, expect", [(0.95, 1.0), (0.6, 0.5), (0.4, 0.4), (0.91, 1.0)])
def test_T5_land_micro_step(h, expect):
    assert control.land_micro_step(h, 1.0) == pytest.approx(expect, rel=1e-15)


@pytest.mark.parametrize("r, n_fail, expect", [(3, 0, 1.5), (1.2, 0, 1.0), (0.95, 0, 0.9), (0.3, 0, 0.5),
                                               (0.5, 1, 0.45), (0.2, 1, 0.25), (2.0, 1, 0.9), (0.5, 2, 0.25),
                                               (3.0, 5, 0.25)])
def test_T6_limit_step_ratio(r, n_fail, expect):
    assert control.limit_step_ratio(r, n_fail, 0.5, 1.5, dead_zone=True) == pytest.approx(expect, rel=1e-15)


def test_T6_corrector_failure_and_no_dead_zone():
    assert control.limit_step_ratio(1.3, 0, corrector_failed=True) == 0.25
    assert control.limit_step_ratio(1.2, 0, 0.5, 1.5, dead_zone=False) == pytest.approx(1.2)
    assert control.limit_step_ratio(0.95, 0, 0.5, 1.5, dead_zone=False) == pytest.approx(0.95)
    assert control.limit_step_ratio(0.1, 0, 0.5, 1.5, dead_zone=False) == pytest.approx(0.5)


@pytest.mark.parametrize("kappa, sdn, n_succ, n_fail, expect", [
    (1, [0.4, 1.0], 0, 0, 0),                        # (a)
    (2, [1, 0.5, 2], 0, 0, 1),                       # (b)
    (2, [1, 0.5, 0.2, 0.1], 3, 0, 3),                # (c)
    (2, [1, 0.5, 0.2, 0.3], 3, 0, 2),                # (d)
    (2, [1, 0.5, 0.6, 0.7], 3, 0, 1),                # (e)
    (0, [1, 0.4], 1, 0, 1),                          # (f)
    (3, [1, 0.5, 0.25, 0.12, 0.06], 0, 6, 0),        # (g) N_fail = 6
    (2, [1, 0.5, 0.2, 0.1], 2, 0, 2),                # (h) N_succ <= κ: no increase
])
def test_T7_listing_3_2(kappa, sdn, n_succ, n_fail, expect):
    assert control.select_order(kappa, sdn, n_succ, n_fail, 5, "ida") == expect


def test_T7_nfail_4_caps_at_one_and_listing_3_1():
    assert control.select_order(3, [1, 0.5, 0.25, 0.12, 0.06], 0, 4, 5, "ida") <= 1
    assert control.select_order(3, [1, 0.5, 0.6, 0.1], 0, 0, 5, "conservative") == 1
    assert control.select_order(2, [1, 0.5, 0.2, 0.1], 3, 0, 5, "conservative") == 3
    assert control.select_order(2, [1, 0.5, 0.2, 0.1], 3, 0, 2, "conservative") == 2   # κ_max


def test_T8_wrms_and_nrmse_hand_computed():
    assert control.wrms([3.0, 4.0], [1.0, 1.0]) == pytest.approx(np.sqrt(12.5), rel=1e-15)
    assert control.wrms([1e-6, 2e-6], [1e6, 5e5]) == pytest.approx(1.0, rel=1e-15)
    w = control.error_weights([10.0, -2.0], 1e-3, 1e-2)
    assert w == pytest.approx([1 / 0.02, 1 / 0.012])
    ref = np.array([[0.0, 1.0], [1.0, 3.0], [2.0, 5.0]])     # means 1, 3; variances*n 2, 8
    x = ref + np.array([[0.1, 0.0], [0.0, 0.2], [-0.1, 0.0]])
    expect = np.hypot(np.sqrt(0.02 / 2), np.sqrt(0.04 / 8))
    assert control.nrmse(x, ref) == pytest.approx(expect, rel=1e-14)
    assert control.nrmse(ref[:, 0], ref[:, 0]) == 0.0


@pytest.mark.parametrize("call, name", [
    (lambda: control.error_constants(control.KMAX_CONSTANTS + 1, []), "kappa"),
    (lambda: control.error_constants(3, [2.0]), "a"),
    (lambda: control.wrms([1, 2], [1]), "weights"),
    (lambda: control.select_order(1, [1, 2], 0, 0, 5, "bdf"), "strategy"),
    (lambda: control.limit_step_ratio(1.0, 0, 1.5, 0.5), "r_min"),
    (lambda: control.land_micro_step(-1, 1.0), "h"),
    (lambda: control.nrmse([[1, 2]], [[1, 2, 3]]), "ref"),
    (lambda: control.newton_difference(2, [0, 1], [1, 2], 3.0), "T/u"),
])
def test_bad_arguments_name_the_argument(call, name):
    with pytest.raises((ValueError, TypeError), match=name):
        call()
