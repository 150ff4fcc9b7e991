"""The Westland Lynx helicopter and the reconstructed controller (genser2020 §10.4, App. A, C; AT-2)."""
import math

import numpy as np
import pytest

import cosim
from cosim import models
from cosim.analysis import spectral_radius
import importlib
heli = importlib.import_module("cosim.models.helicopter")  # the module (cosim.models.helicopter is the function)
from cosim.sysid import ij_continuous


def _printed_tol(p):
    """Half a unit of the last of 3 printed significant digits; printed values below 1e-10 are rounding noise of the
    thesis's computation (e.g. −3.29e-16) and mean 0."""
    p = np.abs(np.asarray(p))
    with np.errstate(divide="ignore"):
        tol = 0.5 * 10.0 ** (np.floor(np.log10(np.where(p > 0, p, 1.0))) - 2)
    return np.where(p < 1e-10, 1e-10, tol)


def test_at2_helicopter_ij_matches_thesis():
    """AT-2: C A C^+ equals (4.5) and C B equals (4.6) to the printed digits; max Re λ(A1) = 0.2342 (0.234198)."""
    s1 = models.helicopter_plant()
    ij = ij_continuous(s1.A, s1.B, s1.C, s1.D)
    for got, printed in ((ij.dSdy, heli.THESIS_IJ["dS1dy"]), (ij.dSdu, heli.THESIS_IJ["dS1du"])):
        err = np.abs(got - printed)
        assert np.all(err <= _printed_tol(printed)), np.max(err / _printed_tol(printed))
    assert np.all(ij.dSdud == 0)
    assert abs(np.max(np.linalg.eigvals(s1.A).real) - 0.234198) < 1e-4


def test_plant_names_and_sizes():
    s1 = models.helicopter_plant()
    assert (s1.nx, s1.nu, s1.ny) == (8, 4, 6)
    assert s1.states[0] == "theta" and s1.outputs == list(heli.OUTPUTS) and s1.inputs == list(heli.INPUTS)
    assert not s1.feedthrough


def test_controller_stabilises_monolithic_loop_and_zoh_limit():
    K = models.helicopter_controller()
    d = K.design
    assert (K.nx, K.nu, K.ny) == (16, 6, 4) and not K.feedthrough
    assert d["gamma"] > d["gamma_min"] > 1
    A, B, C, D = models.helicopter_closed_loop(K)
    assert np.max(np.linalg.eigvals(A).real) < 0
    assert np.max(np.linalg.eigvals(K.A).real) < 0          # the controller itself is stable
    # the design target: ZOH/Jacobi with exact subsystems stable at ΔT = 0.14 s, unstable from 0.15 s (thesis §15.2)
    rho = spectral_radius(models.helicopter(K, pilot=None), np.array([0.1, 0.14, 0.15, 0.2]))
    assert rho[0] < 1 and rho[1] < 1 and rho[2] > 1 and rho[3] > rho[2]


def test_closed_loop_tracks_heave_and_heading_rate():
    """Static gain of the closed loop from (Ḣ_ref, ψ̇_ref) to (Ḣ, ψ̇) is 1 (the near-integral action)."""
    A, B, C, D = models.helicopter_closed_loop()
    G0 = -C @ np.linalg.solve(A, B) + D
    assert abs(G0[0, 0] - 1) < 0.01 and abs(G0[3, 3] - 1) < 0.02


def test_pilot_v1_pattern():
    t = np.linspace(0, 150, 15001)
    r = models.pilot_v1(t)
    assert r.shape == (t.size, 4)
    assert np.all(np.count_nonzero(np.abs(r) > 0, axis=1) <= 1)      # never two commands at once
    # no discontinuities: steps of at most the largest pulse slope π a/w = π/10 per second times dt = 0.01 s
    assert np.max(np.abs(np.diff(r, axis=0))) <= np.pi / 10 * 0.01 * (1 + 1e-6)
    assert math.isclose(np.max(r[:, 0]), 1.0, rel_tol=1e-6)
    for a, b in ((1, 11), (35, 45), (81, 91), (115, 125)):           # heave changes where the thesis has them
        assert np.all(r[(t > a) & (t < b), 0] != 0)
    assert np.all(r[(t > 11) & (t < 35), 0] == 0)


def test_helicopter_system_coupling():
    s = models.helicopter()
    assert s.names == ["S1", "S2", "pilot"]
    L, r = s.connection_matrix()
    # u1 = y2, u2 = r - y1
    assert np.array_equal(L[:4, 6:10], np.eye(4)) and np.array_equal(L[4:10, :6], -np.eye(6))
    assert np.array_equal(L[4:8, 10:14], np.eye(4))
    s0 = models.helicopter(pilot=None)
    assert s0.is_lti and s0.names == ["S1", "S2"]


def test_pilot_samples_and_callable():
    ts = np.array([0.0, 10.0])
    rs = np.array([[0, 0, 0, 0], [1.0, 0, 0, 0]])
    s = models.helicopter(pilot=(ts, rs))
    assert np.allclose(s["pilot"].output(5.0, np.zeros(0), np.zeros(0)), [0.5, 0, 0, 0])
    s = models.helicopter(pilot=lambda t: [0, 0, 0, 0.01 * t])
    assert np.allclose(s["pilot"].output(2.0, np.zeros(0), np.zeros(0)), [0, 0, 0, 0.02])


def test_zoh_cosim_follows_monolithic_and_diverges_beyond_limit():
    """Reduced run (40 s, first heave pulse): ZOH at ΔT = 0.05 s follows the monolithic loop; at 0.2 s it diverges."""
    s = models.helicopter()
    sol = {"S1": cosim.Exact(), "S2": cosim.Exact(), "pilot": cosim.Euler()}
    res = cosim.simulate(s, 40.0, 0.05, solver=sol)
    ref = cosim.simulate_monolithic(s, 40.0, t_eval=res.t)
    hdot, hdot_ref = res["S1.Hdot"], ref["S1.Hdot"]
    assert np.max(np.abs(hdot)) > 0.9                        # the pulse is tracked
    assert np.max(np.abs(hdot - hdot_ref)) < 0.05
    with pytest.raises(cosim.DivergenceError):
        cosim.simulate(s, 40.0, 0.2, solver=sol, divergence_growth=100.0)


@pytest.mark.parametrize("kw, match", [
    (dict(gain=-1.0), "gain"), (dict(gain="a"), "gain"), (dict(pole=2.0), "pole"), (dict(zero=math.nan), "zero"),
    (dict(gamma_factor=1.0), "gamma_factor"), (dict(rate_weight=0.0), "rate_weight")])
def test_controller_bad_arguments(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        models.helicopter_controller(**kw)


def test_helicopter_bad_arguments():
    with pytest.raises(ValueError, match="pilot"):
        models.helicopter(pilot="v9")
    with pytest.raises(TypeError, match="pilot"):
        models.helicopter(pilot=3)
    with pytest.raises(ValueError, match="pilot"):
        models.helicopter(pilot=lambda t: [0.0, 1.0])
    with pytest.raises(ValueError, match=r"pilot\[1\]"):
        models.helicopter(pilot=([0, 1], np.zeros((2, 3))))
    with pytest.raises(ValueError, match="controller"):
        models.helicopter(controller=cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="S2"))
    with pytest.raises(TypeError, match="controller"):
        models.helicopter(controller="hinf")
    with pytest.raises(ValueError, match="x0"):
        models.helicopter(x0=[1.0, 2.0])
    with pytest.raises(ValueError, match="t"):
        models.pilot_v1([0.0, math.nan])


def test_pilot_v1_scalar_path_equals_array_path():
    t = np.linspace(0, 150, 3001)
    assert np.array_equal(np.array([models.pilot_v1(float(x)) for x in t]), models.pilot_v1(t))
    assert models.pilot_v1(np.float64(5.0)).shape == (4,) and models.pilot_v1(3).shape == (4,)
    with pytest.raises(ValueError, match="t"):
        models.pilot_v1(math.inf)


def test_pilot_input_for_prestep():
    s = models.helicopter(pilot_input=True)
    p = s["pilot"]
    assert (p.nu, p.ny) == (1, 4) and p.inputs == ["unused"]
    assert s.connection_matrix()[0].shape == (11, 14)
    assert np.allclose(p.output(5.0, np.zeros(0), np.zeros(1)), models.pilot_v1(5.0))
    with pytest.raises(TypeError, match="pilot_input"):
        models.helicopter(pilot_input=1)
