"""CoupEle / combined closed-loop matrix, Bohl exponents and boundedness (genser2020 §13.3; AT-5, AT-6, AT-17, AT-19)."""
import importlib

import numpy as np
import pytest

import cosim
from cosim import analysis, models
from cosim import stability_theory as st
from cosim.sysid import ij_discrete

heli = importlib.import_module("cosim.models.helicopter")


def test_at5_exact_ij_surrogate_of_thesis_is_unstable():
    """AT-5: Step 2's surrogate from the printed (4.5), (4.6), (4.9), (4.10) with u1 = y2, u2 = −y1 is unstable:
    max Re λ = +0.92541 ± 1.48107i although the true monolithic loop is stable."""
    ij = heli.THESIS_IJ
    Sy = np.block([[ij["dS1dy"], np.zeros((6, 4))], [np.zeros((4, 6)), ij["dS2dy"]]])
    Su = np.block([[ij["dS1du"], np.zeros((6, 6))], [np.zeros((4, 4)), ij["dS2du"]]])
    L = models.helicopter(pilot=None).L
    M = analysis.extrapolation_matrix(Sy, Su, np.zeros_like(Su), L)
    lam = np.linalg.eigvals(M)
    top = lam[np.argmax(lam.real)]
    assert abs(top.real - 0.92541) < 1e-3 and abs(abs(top.imag) - 1.48107) < 1e-3
    assert abs(np.min(lam.real) - (-485.62)) < 0.01 * 485.62


def test_at6_thesis_controller_ij_eigenvalues():
    """AT-6: eig(4.9) = {−486.71, −13.833, −4.2316, +1.9948}: the controller's IJ surrogate is itself unstable."""
    lam = np.sort(np.linalg.eigvals(heli.THESIS_IJ["dS2dy"]).real)
    assert np.allclose(lam, [-486.71, -13.833, -4.2316, 1.9948], atol=1e-2)


def test_extrapolation_matrix_dmo_at4():
    """The §10.1 global extrapolation matrix of the DMO (AT-4 eigenvalues) from the continuous IJs."""
    from cosim.sysid import ij_continuous
    s = models.two_mass_oscillator(1e5, 1e3)
    ijs = [ij_continuous(x.A, x.B, x.C, x.D) for x in s.subsystems]
    blk = lambda k: st._blkdiag([getattr(i, k) for i in ijs])  # noqa: E731
    lam = np.sort_complex(np.linalg.eigvals(analysis.extrapolation_matrix(blk("dSdy"), blk("dSdu"), blk("dSdud"),
                                                                          s.L)))
    assert np.allclose(lam, np.sort_complex([-10099.98, -49.5555 + 327.772j, -49.5555 - 327.772j]), rtol=1e-5)


@pytest.mark.parametrize("use_error_de", [True, False])
@pytest.mark.parametrize("input_optimization", [True, False])
@pytest.mark.parametrize("case", ["dmo", "helicopter"])
def test_at17_coupele_matrix_equals_algorithmic_step(case, use_error_de, input_optimization):
    """AT-17: φ_{A,comb} Z equals one step of the pre-step algorithm (EDE, extrapolation, Lagrange / least-squares
    input optimisation by their own solves, subsystems stepped with held inputs) for random Z and 20 chained steps.
    The DMO has both non-square cases (S1: 2 outputs, 1 input; S2: 1 output, 2 inputs, feed-through)."""
    system, H = (models.two_mass_oscillator(2e5, 200), 1e-3) if case == "dmo" else \
        (models.helicopter(pilot=None), 0.1)
    cs = analysis.prestep_closed_loop(system, H, use_error_de=use_error_de, input_optimization=input_optimization)
    mdl = st._lti_models(system, H)
    ijs = [ij_discrete(*p, form="thesis") for p in mdl]
    rng = np.random.default_rng(1)
    Z = rng.standard_normal(cs.phi_A.shape[0])
    for _ in range(20):
        Z_alg = st._prestep_reference_step(Z, cs, ijs, system.L, mdl, use_error_de=use_error_de,
                                           input_optimization=input_optimization)
        Z_mat = cs.phi_A @ Z
        assert np.max(np.abs(Z_mat - Z_alg)) <= 1e-10 * max(1.0, np.max(np.abs(Z_alg)))
        Z = Z_alg
    if not use_error_de:
        assert np.all(cs.phi_A[cs.blocks["delta"]] == 0)


def test_combined_matrix_blocks_and_coupele():
    s = models.two_mass_oscillator()
    cs = analysis.prestep_closed_loop(s, 1e-3)
    assert cs.sizes == dict(u_prev=3, u=3, delta=3, y_prev=3, y=3, x=4)
    assert cs.phi_A.shape == (19, 19)
    ce = cs.coupele
    assert ce.phi_A.shape == (9, 9) and ce.phi_B.shape == (9, 6) and ce.C.shape == (3, 9)
    # CoupEle's u^{k+1} row: Mat_y^k = G_ŷ Ê (I + Ĉ D̃ L) + G_y (3.27)
    n = 3
    assert np.allclose(ce.mats["y"], ce.G_yhat @ ce.E_hat @ (np.eye(n) + ce.C_hat @ ce.D_t @ s.L) + ce.G_y)


def test_helicopter_exact_ij_prestep_unstable_and_dmo_stable():
    """Deterministic counterpart of AT-31 (the discrete version, frozen exact IJs with pinv(C), reconstructed
    controller): ρ(φ_{A,comb}) > 1 at ΔT = 0.1 s (measured 1.0032); stable without the EDE (0.99954) and at
    ΔT = 0.01 s (0.99997). The DMO (C1 = I, no dynamics cancelled) is stable at 1 ms."""
    s = models.helicopter(pilot=None)
    assert analysis.prestep_closed_loop(s, 0.1).rho > 1.001
    assert analysis.prestep_closed_loop(s, 0.1, use_error_de=False).rho < 1
    assert analysis.prestep_closed_loop(s, 0.01).rho < 1
    assert analysis.prestep_closed_loop(models.two_mass_oscillator(2e5, 200), 1e-3).rho < 1


def test_at19_bohl_time_invariant_converges_to_spectral_radius():
    """AT-19: a time-invariant non-normal Φ with ρ = 0.9: β̄_m → 0.9 (within 1e-2 at m = 2000)."""
    Phi = np.array([[0.9, 5.0], [0.0, 0.5]])
    b = analysis.bohl_exponent(Phi, [1, 10, 100, 2000])
    assert b[0] > 1                                   # one step: ||Φ|| > 1 although stable
    assert abs(b[-1] - 0.9) < 1e-2
    assert np.all(np.diff(b[1:]) < 0)                 # decreasing towards 0.9
    assert isinstance(analysis.bohl_exponent(Phi, 5), float)


def test_at19_bohl_switched_systems_with_known_growth():
    """AT-19: switched systems. (a) A1 = diag(2, 1/4), A2 = swap: (A2 A1)^2 = I/2, so β̄ = 0.5^{1/4} = 0.8409
    although ||A1|| = 2 (stable by the Bohl exponent, not by the pointwise norms). (b) A1 with A2 = I: growth
    2 per 2 steps, β̄ = sqrt(2)."""
    A1, A2 = np.diag([2.0, 0.25]), np.array([[0.0, 1.0], [1.0, 0.0]])
    seq = [A1 if k % 2 == 0 else A2 for k in range(400)]
    assert abs(analysis.bohl_exponent(seq, 200) - 0.5 ** 0.25) < 1e-2
    seq = np.stack([A1 if k % 2 == 0 else np.eye(2) for k in range(400)])
    assert abs(analysis.bohl_exponent(seq, 200) - np.sqrt(2)) < 1e-2
    assert abs(analysis.bohl_exponent(seq, 200, stride=7) - np.sqrt(2)) < 1e-2


def test_bohl_of_recurrence_and_combined_system():
    s = models.two_mass_oscillator(1e5, 1e3)
    rec = analysis.recurrence(s, 1e-3)
    assert abs(analysis.bohl_exponent(rec, 5000) - rec.rho) < 1e-2
    cs = analysis.prestep_closed_loop(models.two_mass_oscillator(2e5, 200), 2e-3, use_error_de=False)
    assert abs(analysis.bohl_exponent(cs, 3000) - cs.rho) < 1e-2


def test_bohl_no_overflow():
    assert abs(analysis.bohl_exponent(np.array([[1e3]]), 500) - 1e3) < 1e-6
    assert abs(analysis.bohl_exponent(np.array([[1e-3]]), 500) - 1e-3) < 1e-12


def test_boundedness():
    seq = [np.diag([2.0, 0.25]), np.eye(2) * 3]
    b = analysis.boundedness(seq, [np.ones((2, 1)), np.ones((2, 1))])
    assert b.bounded and b.sup_A == pytest.approx(3.0) and b.sup_B == pytest.approx(np.sqrt(2))
    assert not analysis.boundedness(seq, bound=2.5).bounded


def test_plots(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    seq = [np.diag([2.0, 0.25]) if k % 2 == 0 else np.array([[0.0, 1.0], [1.0, 0.0]]) for k in range(100)]
    ax = cosim.plot.bohl_plot(seq, [1, 2, 4, 8, 16, 32])
    assert len(ax.lines) == 2
    ax = cosim.plot.norm_plot(seq)
    ax.figure.savefig(tmp_path / "n.png")


@pytest.mark.parametrize("call, exc, match", [
    (lambda: analysis.bohl_exponent(np.eye(2), 0), ValueError, "m"),
    (lambda: analysis.bohl_exponent(np.eye(2), [3, -1]), ValueError, "m"),
    (lambda: analysis.bohl_exponent(np.eye(2), 1.5), TypeError, "m"),
    (lambda: analysis.bohl_exponent(np.ones((2, 3)), 2), ValueError, "phi"),
    (lambda: analysis.bohl_exponent([np.eye(2), np.eye(3)], 1), ValueError, "phi"),
    (lambda: analysis.bohl_exponent(np.ones((3, 2, 3)), 1), ValueError, "phi"),
    (lambda: analysis.bohl_exponent([np.eye(2)] * 3, 4), ValueError, "m"),
    (lambda: analysis.bohl_exponent(np.eye(2), 2, stride=0), ValueError, "stride"),
    (lambda: analysis.bohl_exponent(np.array([[np.nan]]), 2), ValueError, "phi"),
    (lambda: analysis.boundedness(np.eye(2), np.ones((3, 1))), ValueError, "phi_B"),
    (lambda: analysis.boundedness(np.eye(2), bound=-1), ValueError, "bound"),
    (lambda: analysis.extrapolation_matrix(np.eye(2), np.ones((3, 1)), np.ones((3, 1)), np.ones((1, 2))),
     ValueError, "Su"),
    (lambda: analysis.extrapolation_matrix(np.eye(2), np.ones((2, 1)), np.ones((2, 1)), np.ones((2, 2))),
     ValueError, "L"),
    (lambda: analysis.extrapolation_matrix(np.ones((2, 3)), np.ones((2, 1)), np.ones((2, 1)), np.ones((1, 2))),
     ValueError, "Sy"),
    (lambda: analysis.extrapolation_matrix([[0.0]], [[0.0]], [[1.0]], [[1.0]]), ValueError, "Sd"),
    (lambda: analysis.coupele([(np.eye(2), np.ones((2, 1)), np.ones((3, 1)))], np.ones((1, 2))), ValueError,
     "Su_plus"),
    (lambda: analysis.coupele([(np.eye(2), np.ones((2, 1)), np.ones((2, 1)))], np.ones((1, 2)),
                              use_error_de=1), TypeError, "use_error_de"),
    (lambda: analysis.coupele("exact", np.ones((1, 2))), TypeError, "ijs"),
    (lambda: analysis.coupele_matrix([(np.eye(1), [[1.0]], [[0.0]])], [[0.0]], [(np.eye(2), np.ones((2, 1)),
                                                                                   np.ones((2, 2)), [[0.0]])]),
     ValueError, "C"),
    (lambda: analysis.coupele_matrix([(np.eye(1), [[1.0]], [[0.0]])], [[0.0]], []), ValueError, "models"),
    (lambda: analysis.prestep_closed_loop(models.two_mass_oscillator(), -1.0), ValueError, "H"),
    (lambda: analysis.prestep_closed_loop(models.two_mass_oscillator(), 1e-3, ijs="rls"), ValueError, "ijs"),
    (lambda: analysis.prestep_closed_loop(models.helicopter(), 0.1), ValueError, "system"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
