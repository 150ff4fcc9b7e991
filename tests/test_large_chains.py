"""Kraft's large-model studies (issue 32 part 3; kraft2021 §16.2, §18.9-18.10): the Sec. 5.6 and Sec. 5.7 chain
presets (Tables 5.7 and 5.8), the time model's fit of the scaling order P and eqs. (4.2)/(4.4), and a reduced
co-simulation against the monolithic solve at equal accuracy (benchmarks/large_chains.py has the timings)."""
import math

import numpy as np
import pytest

import cosim
from cosim.models import chain_states, oscillator_chain
from cosim.timing import cosim_time_estimate, scaling_order


def _rows(system, kind):
    return system.params["forces"][kind]


def test_table57_preset_has_the_thesis_values_and_the_chosen_ones():
    s = oscillator_chain(preset="table5.7", n_bodies=10_000, n_subsystems=10, contacts=True)
    p = s.params
    assert (p["n_bodies"], p["n_subsystems"], p["t_end"]) == (10_000, 10, 1e-3)
    # chosen (Table 5.7 is lost): Table 4.2's homogeneous chain, at rest
    for key, value in (("m", 5e-2), ("c", 2.5e9), ("d", 2.5e2), ("C", 1e17), ("D", 1e-1), ("x0", 0.0), ("v0", 0.0)):
        assert np.all(p[key] == value), key
    har = _rows(s, "harmonic")                    # (body, ΔF_H, Ω_H, φ_H): every body excited (Sec. 5.6)
    assert np.array_equal(har[:, 0], np.arange(1, 10_001))
    assert np.all((np.abs(har[:, 1]) >= 3e3) & (np.abs(har[:, 1]) <= 3e4))
    assert np.any(har[:, 1] < 0) and np.any(har[:, 1] > 0)
    assert np.all((har[:, 2] >= 1e3) & (har[:, 2] <= 1e4)) and np.all(har[:, 3] == 0.0)
    con = _rows(s, "contact")                     # (body, A_C, B_C) on a random 0.3 % of the bodies
    assert len(con) == 30 and len(np.unique(con[:, 0])) == 30
    assert np.all(con[:, 1] == -1.0e-2) and np.all(con[:, 2] == 2.5e4)
    assert len(_rows(oscillator_chain(preset="table5.7", n_bodies=10_000, n_subsystems=10), "contact")) == 0


@pytest.mark.parametrize("n", [1000, 3000, 100_000])
def test_table57_contacts_on_three_per_mille(n):
    s = oscillator_chain(preset="table5.7", n_bodies=n, n_subsystems=10, contacts=True)
    assert len(_rows(s, "contact")) == round(0.003 * n)


def test_table58_preset_has_the_thesis_values():
    s = oscillator_chain(preset="table5.8", n_bodies=500)
    p = s.params
    assert (p["n_bodies"], p["n_subsystems"], p["t_end"]) == (500, 10, 1.0)
    for key, value in (("m", 10.0), ("c", 1e5), ("d", 1.0), ("C", 1e9), ("D", 1e4), ("e_x", 3.0), ("e_v", 3.0)):
        assert np.all(p[key] == value), key
    assert np.all(np.abs(p["x0"]) <= 1.0) and np.all(np.abs(p["v0"]) <= 1e2)
    assert np.std(p["x0"]) > 0.3 and np.std(p["v0"]) > 30           # random, not constant
    sine = _rows(s, "sine")                       # (body, ΔF_S, Ω_S, φ_S, A_S) on a random 10 %
    assert len(sine) == 50 and len(np.unique(sine[:, 0])) == 50
    assert np.all((np.abs(sine[:, 1]) >= 1e7) & (np.abs(sine[:, 1]) <= 1e8))
    assert np.all(sine[:, 2] == 50.0) and np.all(sine[:, 4] == 95)


@pytest.mark.parametrize("preset, kw", [("table5.7", dict(n_bodies=3000, n_subsystems=10, contacts=True)),
                                        ("table5.8", dict(n_bodies=300))])
def test_presets_are_reproducible_from_their_seed(preset, kw):
    a, b = oscillator_chain(preset=preset, **kw), oscillator_chain(preset=preset, **kw)
    c = oscillator_chain(preset=preset, seed=2, **kw)
    for key in ("x0", "v0"):
        assert np.array_equal(a.params[key], b.params[key])
    for kind in ("harmonic", "sine", "contact"):
        assert np.array_equal(_rows(a, kind), _rows(b, kind))
    kind = "contact" if preset == "table5.7" else "sine"
    assert not np.array_equal(_rows(a, kind)[:, 0], _rows(c, kind)[:, 0])     # another seed: other bodies


@pytest.mark.parametrize("P", [0.5, 1.0, 1.2, 3.0])
def test_scaling_order_recovers_P_from_synthetic_times(P):
    n = np.array([1e2, 1e3, 1e4, 1e5])
    fit_P, a = scaling_order(n, 3e-6 * n ** P)
    assert fit_P == pytest.approx(P, abs=1e-12) and a == pytest.approx(3e-6, rel=1e-10)
    noisy = 3e-6 * n ** P * np.exp(np.random.default_rng(1).normal(0.0, 0.05, n.size))   # ±5 % timing noise
    assert scaling_order(n, noisy)[0] == pytest.approx(P, abs=0.05)


def test_scaling_order_rejects_bad_data():
    with pytest.raises(ValueError, match="n: need at least two"):
        scaling_order([10, 10], [1.0, 2.0])
    with pytest.raises(ValueError, match="t: must be finite and positive"):
        scaling_order([10, 100], [1.0, 0.0])
    with pytest.raises(ValueError, match="t: expected one time per size"):
        scaling_order([10, 100, 1000], [1.0, 2.0])
    with pytest.raises(TypeError, match="n: expected a real"):
        scaling_order("abc", [1.0])


def test_time_model_eqs_4_2_and_4_4():
    # (4.2): T_monolith / n_s^P; (4.4): (1 + n̄_cor) T_monolith / n_s^P (Sec. 5.7: n̄_cor ≈ 2.3)
    assert cosim_time_estimate(100.0, 10, 3.0) == pytest.approx(0.1)
    assert cosim_time_estimate(100.0, 10, 1.2, corrector_iterations=2.3) == pytest.approx(3.3 * 100 / 10 ** 1.2)
    with pytest.raises(ValueError, match="n_subsystems"):
        cosim_time_estimate(1.0, 0, 1.0)
    with pytest.raises(ValueError, match="corrector_iterations"):
        cosim_time_estimate(1.0, 2, 1.0, corrector_iterations=-1)


def _error_at_end(system, res, ref):
    x, v = chain_states(system, res.X[-1:])
    xr, vr = chain_states(system, ref.X[-1:])
    return max(np.max(np.abs(x - xr)) / np.max(np.abs(xr)), np.max(np.abs(v - vr)) / np.max(np.abs(vr)))


def test_reduced_table58_cosimulation_is_as_accurate_as_the_monolithic_solve():
    """Sec. 5.7's setting reduced (n_K = 40, n_s = 4, t = 2e-3 s): imMD (rtol 1e-3) with CVODE units at Kraft's
    subsystem tolerances is at least as accurate at t_end as the monolithic solve at rtol 1e-4 (measured: 1.2e-6
    against 8.8e-6; 1.3e-6 at rtol 1e-5, 1.3e-8 at 1e-6), the equal-accuracy pairing the benchmark times; the run
    reports its time per part and corrector iterations (n̄_cor of eq. 4.4)."""
    s = oscillator_chain(preset="table5.8", n_bodies=40, n_subsystems=4)
    t_end, rtol = 2e-3, 1e-3
    band = dict(linear_solver="band", bandwidth=(3, 3))

    def mono(r, atol):
        return cosim.simulate_monolithic(s, t_end=t_end, H=t_end / 4, solver=cosim.CVODE(rtol=r, atol=atol, **band))
    ref = mono(1e-11, 1e-13)
    res = cosim.simulate(s, t_end=t_end, H=1e-9, approximation=cosim.Lagrange(k=0), last_step="shorten",
                         step_control=cosim.StepControl(estimator="imMD", rtol=rtol,
                                                        atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}),
                         scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
                         solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **band), timing=True, divergence_growth=math.inf,
                         output_interval=t_end / 4)
    e_cosim = _error_at_end(s, res, ref)
    assert e_cosim <= 1e-5
    assert e_cosim <= _error_at_end(s, mono(1e-4, 1e-7), ref)
    tm = res.stats["timing"]
    for key in ("solver_time", "idle_time", "interface_time", "save_time"):
        assert tm[key] >= 0.0
    assert res.stats["iterations"] > res.stats["macro_steps"]        # a corrector: n̄_cor > 0 in eq. (4.4)
