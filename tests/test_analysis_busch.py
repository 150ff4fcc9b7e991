"""Qualitative findings of busch2016 §4/5 (Figs. 9-15) on Busch's parameters (m1 = m2 = 10, c1 = 1e6, c2 = 1e7,
d1 = 1, d2 = 2) with wide log grids: ck in [1e3, 1e9], dk in [1e0, 1e6], H in [1e-6, 1e-2], 12 points each.

The paper does not give its grids; the figures are qualitative. Every claim is asserted where it holds on this grid;
claims that do not hold are strict xfails whose reason carries the counts we measured (unstable points out of 1728
per map). Busch's output update is eq. 19 (y = C z + D ũ(T_{N+1})), i.e. update="simplified"; the engine default
"consistent" differs only for force/displacement Jacobi (S2 has feed-through) and is checked separately.
"""
import numpy as np
import pytest

from cosim import analysis as an
from cosim.approximations import ExtrapolatedInterpolation, Lagrange
from cosim.models.two_mass import two_mass_oscillator

CK, DK, H = np.logspace(3, 9, 12), np.logspace(0, 6, 12), np.logspace(-6, -2, 12)
FD, DD = "force/displacement", "displacement/displacement"
GS, JAC = "gauss-seidel", "jacobi"
METHODS = {"lagrange": Lagrange, "c1": lambda k: ExtrapolatedInterpolation(k, 1),
           "c0": lambda k: ExtrapolatedInterpolation(k, 0)}


@pytest.fixture(scope="module")
def maps():
    out = {}
    for cp in (FD, DD):
        for sch in (GS, JAC):
            for name, make in METHODS.items():
                for k in range(4):
                    out[cp, sch, name, k] = an.two_mass_stability_map(CK, DK, H, cp, sch, make(k), update="simplified")
    for name, make in METHODS.items():
        for k in range(4):
            out[FD, JAC, name, k, "consistent"] = an.two_mass_stability_map(CK, DK, H, FD, JAC, make(k))
    for m in out.values():
        assert m.nfail == 0
    return out


def U(maps, *key):
    return maps[key].count_unstable()


def with_instability(maps):
    """Maps with unstable points except D/D degree 0 (D/D Gauss-Seidel Lagrange k=0 has none, busch2016 Fig. 12(b);
    the other D/D degree-0 maps are unstable only at weak damping, see test_dd_degree0_parameter_trends)."""
    empty = [key for key, m in maps.items() if m.count_unstable() == 0]
    assert empty == [(DD, GS, "lagrange", 0)]
    return {key: m for key, m in maps.items() if m.count_unstable() > 0 and not (key[0] == DD and key[3] == 0)}


def _dk_trend(m):
    per_dk = (~m.stable).sum(axis=(0, 2))
    return per_dk[-1] > per_dk[DK >= 1e3][0]            # dk = 1e6 vs dk = 1e3


def _H_trend(m):
    per_H = (~m.stable).sum(axis=(0, 1))
    return per_H[0] < per_H[-1] and per_H[0] <= 0.3 * per_H.max()


# ---------------------------------------------------------------------------------------------------------------
# "increasing ck or dk entails a numerical instability; reducing H always stabilises (zero-stable)"
def test_ck_destabilises(maps):
    for key, m in with_instability(maps).items():
        u = ~m.stable
        assert u[6:].sum() > u[:6].sum(), key           # upper half of the ck decades vs lower half
        per_ck = u.sum(axis=(1, 2))
        assert per_ck[-1] > per_ck[0], key


def test_dk_destabilises_above_1e3(maps):
    for key, m in with_instability(maps).items():
        assert _dk_trend(m), key


@pytest.mark.xfail(strict=True, reason="measured for D/D degree 0 (unstable counts per dk slice, dk = 1..1e6): "
                   "GS C1 61 57 51 43 32 21 12 4 0 0 0 0; Jacobi Lagrange 73 70 63 53 44 29 22 13 5 5 9 8 - these "
                   "are weak-damping instabilities that damping removes; per H slice (H = 1e-6..1e-2) GS C1 "
                   "10 14 19 20 26 32 33 38 38 21 23 7, i.e. largest at intermediate H")
def test_dd_degree0_parameter_trends(maps):
    for sch in (GS, JAC):
        for name in METHODS:
            m = maps[DD, sch, name, 0]
            if m.count_unstable():
                assert _dk_trend(m) and _H_trend(m), (sch, name)


@pytest.mark.xfail(strict=True, reason="measured: the unstable count per dk slice is monotone over dk in [1, 1e6] "
                   "for only 2 of 48 maps; for small dk (weak damping) instability *decreases* with dk first (e.g. "
                   "F/D GS Lagrange k=0: 104, 97, 88, 80, 73, 66, 61, then 63 ... 112)")
def test_dk_destabilises_monotonically(maps):
    for key, m in maps.items():
        if len(key) == 4:
            assert np.all(np.diff((~m.stable).sum(axis=(0, 2))) >= 0), key


def test_smaller_H_restabilises(maps):
    for key, m in with_instability(maps).items():
        assert _H_trend(m), key


@pytest.mark.xfail(strict=True, reason="measured at H = 1e-6 (update='simplified'): 336 unstable points in the 48 "
                   "maps; ZOH with ck >= 1e8 and weak damping (rho - 1 <= 6.3e-5, cf. kraft2021 T14: ZOH is "
                   "unstable for every H when undamped) and F/D Jacobi k=3 at dk = 1e6 (rho - 1 = 0.34, H dk/m2 = "
                   "0.1 is not yet small)")
def test_all_stable_at_smallest_H(maps):
    for key, m in maps.items():
        assert np.all(m.stable[..., 0]), key


# ---------------------------------------------------------------------------------------------------------------
# polynomial degree
def test_degree_1_more_stable_than_degree_0_force_displacement(maps):
    for sch in (GS, JAC):
        for name in METHODS:
            assert U(maps, FD, sch, name, 1) < U(maps, FD, sch, name, 0), (sch, name)


@pytest.mark.xfail(strict=True, reason="measured for D/D (unstable of 1728, k=0 vs k=1): GS Lagrange 0 vs 455, "
                   "C1 281 vs 510, C0 272 vs 493; Jacobi Lagrange 394 vs 639: degree 0 is the more stable one")
def test_degree_1_more_stable_than_degree_0_displacement_displacement(maps):
    for sch in (GS, JAC):
        for name in METHODS:
            assert U(maps, DD, sch, name, 1) < U(maps, DD, sch, name, 0), (sch, name)


def test_degree_3_less_stable_than_degree_1(maps):
    # holds in 10 of the 12 (coupling, scheme, method) combinations; the two exceptions are in the xfail below
    for cp in (FD, DD):
        for sch in (GS, JAC):
            for name in METHODS:
                if (cp, sch, name) in ((FD, GS, "lagrange"), (FD, GS, "c0")):
                    continue
                assert U(maps, cp, sch, name, 3) > U(maps, cp, sch, name, 1), (cp, sch, name)


@pytest.mark.xfail(strict=True, reason="measured unstable counts k=0..3: F/D GS Lagrange 1003, 688, 666, 684; F/D "
                   "GS C0 1067, 688, 661, 673; F/D Jacobi Lagrange 1109, 800, 787, 912 - degree 2 is more stable "
                   "than degree 1 for every F/D combination (k=2 > k=1 holds in 5 of 12 combinations, all D/D), and "
                   "for F/D GS Lagrange/C0 degree 3 is not less stable than degree 1 (the issue's check found this)")
def test_degrees_2_and_3_progressively_less_stable(maps):
    for cp in (FD, DD):
        for sch in (GS, JAC):
            for name in METHODS:
                c = [U(maps, cp, sch, name, k) for k in (1, 2, 3)]
                assert c[0] < c[1] < c[2], (cp, sch, name, c)


# ---------------------------------------------------------------------------------------------------------------
# schemes
def test_jacobi_less_stable_than_gauss_seidel(maps):
    for cp in (FD, DD):
        for name in METHODS:
            for k in range(4):
                assert U(maps, cp, JAC, name, k) > U(maps, cp, GS, name, k), (cp, name, k)


def test_consistent_update_force_displacement_jacobi_k0_is_more_stable_than_gauss_seidel(maps):
    """Documented finding: with the engine's consistent update (kraft2021 eq. 2.22) instead of Busch's eq. 19, F/D
    Jacobi with degree 0 is *more* stable than Gauss-Seidel (the independent check of the issue saw this); for
    k >= 1 Jacobi is less stable as Busch says."""
    for name in METHODS:
        assert U(maps, FD, JAC, name, 0, "consistent") < U(maps, FD, GS, name, 0), name
        for k in (1, 2, 3):
            assert U(maps, FD, JAC, name, k, "consistent") > U(maps, FD, GS, name, k), (name, k)


# ---------------------------------------------------------------------------------------------------------------
# EXTRIPOL versus Lagrange
def test_c1_stability_similar_to_lagrange_force_displacement(maps):
    for sch in (GS, JAC):
        for k in range(4):
            a, b = maps[FD, sch, "lagrange", k], maps[FD, sch, "c1", k]
            assert np.mean(a.stable == b.stable) >= 0.95, (sch, k)          # pointwise classification agrees
            assert abs(b.count_unstable() - a.count_unstable()) <= 0.1 * a.count_unstable(), (sch, k)


def test_c1_marginally_less_stable_than_lagrange_jacobi(maps):
    for k in (1, 2, 3):
        assert U(maps, FD, JAC, "c1", k) > U(maps, FD, JAC, "lagrange", k), k
    for k in range(4):  # with the consistent update also for k = 0
        assert U(maps, FD, JAC, "c1", k, "consistent") > U(maps, FD, JAC, "lagrange", k, "consistent"), k


@pytest.mark.xfail(strict=True, reason="measured F/D Jacobi k=0 (update='simplified', Busch eq. 19): EXTRIPOL-C1 "
                   "1087 vs Lagrange 1109 unstable points - C1 is slightly *more* stable at degree 0")
def test_c1_marginally_less_stable_than_lagrange_jacobi_k0(maps):
    assert U(maps, FD, JAC, "c1", 0) > U(maps, FD, JAC, "lagrange", 0)


def test_c0_slightly_more_stable_than_c1_force_displacement(maps):
    for sch in (GS, JAC):
        for k in range(4):
            assert U(maps, FD, sch, "c0", k) <= U(maps, FD, sch, "c1", k), (sch, k)
        assert sum(U(maps, FD, sch, "c0", k) for k in range(4)) < sum(U(maps, FD, sch, "c1", k) for k in range(4))


def test_displacement_displacement_degree0_lagrange_stable_c1_unstable_at_large_ck(maps):
    lag, c1 = maps[DD, GS, "lagrange", 0], maps[DD, GS, "c1", 0]
    assert lag.count_unstable() == 0
    u = ~c1.stable
    assert u.sum() > 0
    assert CK[np.where(u.any(axis=(1, 2)))[0].min()] >= 1e5    # only at large coupling stiffness
    # "small" region: measured 281 of 1728 points (16 %)
    assert u.mean() < 0.2


def test_displacement_displacement_degree3_extripol_more_stable_than_lagrange(maps):
    assert U(maps, DD, GS, "c1", 3) < U(maps, DD, GS, "lagrange", 3)
    assert U(maps, DD, GS, "c0", 3) < U(maps, DD, GS, "lagrange", 3)


# ---------------------------------------------------------------------------------------------------------------
# local error (Fig. 15): orders of max|ε| over all states and outputs
HL = np.logspace(-6, -4, 9)


def _order(coupling, scheme, method, k, update="simplified"):
    s = two_mass_oscillator(ck=1e5, dk=1e3, coupling=coupling)
    le = an.local_error(s, HL, scheme, METHODS[method](k), update=update, t=0.01)
    return an.fit_order(HL, le.norm("all"), scale=np.max(np.abs(le.exact)))


@pytest.fixture(scope="module")
def orders():
    return {(cp, sch, m, k): _order(cp, sch, m, k) for cp in (FD, DD) for sch in (GS, JAC) for m in METHODS
            for k in range(4)}


def test_local_error_orders_lagrange(orders):
    # Gauss-Seidel and D/D: local error O(H^{k+2}); F/D Jacobi one less (see below)
    for k in range(4):
        assert orders[FD, GS, "lagrange", k] == pytest.approx(k + 2, abs=0.3)
        assert orders[DD, GS, "lagrange", k] == pytest.approx(k + 2, abs=0.3)
        assert orders[DD, JAC, "lagrange", k] == pytest.approx(k + 2, abs=0.3)
        assert orders[FD, JAC, "lagrange", k] == pytest.approx(k + 1, abs=0.3)


def test_local_error_c1_same_order_as_lagrange(orders):
    for cp in (FD, DD):
        for sch in (GS, JAC):
            for k in range(4):
                assert orders[cp, sch, "c1", k] == pytest.approx(orders[cp, sch, "lagrange", k], abs=0.4), (cp, sch, k)


def test_local_error_c0_order_bounded_by_3(orders):
    for cp in (FD, DD):
        for sch in (GS, JAC):
            for k in range(4):
                assert orders[cp, sch, "c0", k] <= 3.3, (cp, sch, k)
            assert orders[cp, sch, "c0", 3] < orders[cp, sch, "lagrange", 3] - 0.7


def test_local_error_jacobi_order_drop_force_displacement_only(orders):
    for m in ("lagrange", "c1"):
        for k in range(4):
            assert orders[FD, GS, m, k] - orders[FD, JAC, m, k] == pytest.approx(1.0, abs=0.3), (m, k)
            assert abs(orders[DD, GS, m, k] - orders[DD, JAC, m, k]) < 0.4, (m, k)


def test_local_error_consistent_update_has_no_jacobi_drop():
    """Documented finding: the F/D Jacobi order drop comes from the output update with the extrapolated input
    (busch2016 eq. 19); with the consistent update (kraft2021 eq. 2.22) Jacobi has the Gauss-Seidel order."""
    for k in range(3):
        assert _order(FD, JAC, "lagrange", k, "consistent") == pytest.approx(k + 2, abs=0.3)
