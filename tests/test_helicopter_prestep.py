"""The pre-step on the helicopter (genser2020 §15, spec §18.3 AT-31..AT-34) with the *reconstructed* controller.

Reduced runs: 40 s instead of 150 s (pilot v1 up to its second heave pulse), ΔT ∈ {0.1, 0.14, 0.16, 0.2, 0.3} s,
stability as in examples/helicopter_study.py (σ_mono,global < 0.5 and no divergence). The thesis's controller and
pilot commands are not published, so only orderings are compared. Each test says which thesis claim holds and which
does not (strict xfail with the measured figure). Measured (40 s; σ / ε_mono,global):

    ΔT     ZOH             exact IJs        RLS 12 s        RLS loaded 2 s
    0.10   2.0e-7 / 0.047  2.2e-7 / 0.132   2.6e-3 / 0.063  4.9e-3 / 0.238
    0.14   1.3e-3 / 0.065  1.8e-6 / 0.178   6.3e-3 / 0.086  3.4e-3 / 0.293
    0.16   65 (unstable)   0.014 / 0.235    0.016 / 0.135   0.020 / 1 (sat.)
    0.20   diverged        6.7 (unstable)   6.3 (unstable)  0.12 / 1 (sat.)
    0.30   diverged        2.3e3 (unst.)    1.0e3 (unst.)   0.030 / 0.43
"""
import importlib.util
import os

import numpy as np
import pytest

import cosim
from cosim import models

_PATH = os.path.join(os.path.dirname(__file__), "..", "examples", "helicopter_study.py")
DTS = (0.1, 0.14, 0.16, 0.2, 0.3)
METHODS = ("zoh", "prestep_exact", "prestep_rls", "prestep_rls_loaded")


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("helicopter_study_prestep", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rows(study):
    rows = study.sweep(dts=DTS, methods=METHODS, t_end=40.0)
    return {(r["method"], r["dt"]): r for r in rows}, rows


def test_prestep_takes_loaded_initial_rls_parameters():
    """jacobians={name: RLS} with set parameters: the run starts from them (logged at T^0; the pilot is still at 0,
    so no update moves them before t = 1 s) and the given identifiers are not modified."""
    s = models.helicopter(pilot_input=True)
    sol = {"S1": cosim.Exact(), "S2": cosim.Exact(), "pilot": cosim.Euler()}
    rng = np.random.default_rng(1)
    ids, given = {}, {}
    for sub in s.subsystems:
        r = cosim.sysid.RLS(sub.ny, sub.nu, lam=0.996, P0=1e4)
        a, b = rng.uniform(0.5, 1.0, (sub.ny, 1)), rng.normal(size=(sub.ny, sub.nu, 1))
        r.set_parameters(a, b)
        ids[sub.name], given[sub.name] = r, (a, b)
    res = cosim.simulate(s, 0.3, 0.1, solver=sol, coupling=cosim.PreStep("discrete", ids, timeLearning=2.0))
    zero = cosim.simulate(s, 0.3, 0.1, solver=sol,
                          coupling=cosim.PreStep("discrete", cosim.sysid.RLS(1, 1, lam=0.996), timeLearning=2.0))
    for name, (a, b) in given.items():
        p = res.coupling_log["params"][name]
        assert np.array_equal(p["a"][0], a[:, 0]) and np.array_equal(p["b"][0], b[:, :, 0])
        assert np.array_equal(ids[name].parameters[0], a)
        assert np.all(zero.coupling_log["params"][name]["a"][0] == 0)


def test_loaded_parameters_are_resampled_with_4_13(study):
    """The study's loaded variant: parameters of a ΔT = 0.1 s RLS run at t = 8 s, resampled to ΔT = 0.2 s (ratio 2:
    ã = a², b̃ = a b + b, eq. 4.13) and given to PreStep as its initial parameters."""
    system = models.helicopter(pilot_input=True)
    loaded = study.loaded_parameters(system)
    assert loaded["dt"] == 0.1 and abs(loaded["t"] - 8.0) < 1e-9
    a, b = loaded["params"]["S1"]
    assert a.shape == (6,) and b.shape == (6, 4) and np.all(np.isfinite(a)) and np.any(a != 0)
    cp = study.prestep("prestep_rls_loaded", loaded, 0.2)
    assert cp.timeLearning == 2.0 and cp.identified
    at, bt = cp.jacobians["S1"].parameters
    assert np.allclose(at[:, 0], a ** 2, rtol=1e-12, atol=1e-15)
    assert np.allclose(bt[:, :, 0], a[:, None] * b + b, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------------------------------------------- AT-31
def test_at31_exact_ijs_less_accurate_than_zoh_and_rls(rows):
    """AT-31, the part that holds (§15.1 "exact IJs do not guarantee better results; approximated ones can be much
    better"): at ΔT = 0.1 s the exact-IJ continuous pre-step (12 s learning) deviates from the monolithic solution
    more than ZOH and than the RLS pre-step. Measured ε_mono,global 0.132 vs 0.047 (ZOH) and 0.063 (RLS)."""
    by, _ = rows
    e_exact, e_zoh, e_rls = (by[(m, 0.1)]["eps"] for m in ("prestep_exact", "zoh", "prestep_rls"))
    assert e_exact > 2 * e_zoh and e_exact > 2 * e_rls


@pytest.mark.xfail(strict=True, reason="AT-31 does not hold with the reconstructed controller: the exact-IJ "
                   "continuous pre-step stays stable after the learning phase (σ_mono,global = 2.2e-7 after 40 s, "
                   "1.2e-7 after 150 s at ΔT = 0.1 s; ZOH 2.0e-7); its error is an offset, not an oscillation")
def test_at31_exact_ij_prestep_unstable_after_learning(rows):
    by, _ = rows
    r = by[("prestep_exact", 0.1)]
    assert not r["stable"] or r["sigma"] > 10 * by[("zoh", 0.1)]["sigma"]


# ---------------------------------------------------------------------------------------------------- AT-32
def test_at32_rls_prestep_extends_the_stable_step(study, rows):
    """AT-32, holds: ZOH is stable up to 0.14 s and unstable at 0.16 s (σ = 65 after 40 s); the RLS pre-step with
    12 s learning is stable at 0.16 s (σ = 0.016), so its max stable ΔT exceeds ZOH's; like the thesis's it is
    unstable at 0.2 s ("becomes unstable at ΔT ≈ 0.2 s": σ = 6.3)."""
    by, all_rows = rows
    assert study.max_stable_dt(all_rows, "zoh") == 0.14
    assert study.max_stable_dt(all_rows, "prestep_rls") == 0.16
    assert not by[("zoh", 0.16)]["stable"] and by[("prestep_rls", 0.16)]["stable"]
    assert by[("prestep_rls", 0.16)]["sigma"] < 0.05
    assert not by[("prestep_rls", 0.2)]["stable"]


@pytest.mark.xfail(strict=True, reason="AT-32's 'pre-step SI is the only stable method in [0.16, 0.2] s' does not "
                   "hold: the exact-IJ pre-step is stable at 0.16 s too (σ_mono,global = 0.014, ε = 0.23)")
def test_at32_rls_prestep_only_stable_method_at_016(rows):
    by, _ = rows
    assert not by[("prestep_exact", 0.16)]["stable"]


# ---------------------------------------------------------------------------------------------------- AT-33
def test_at33_loaded_parameters_stable_up_to_03(study, rows):
    """AT-33, holds: loaded (resampled) initial parameters + 2 s learning are stable at 0.2 s and 0.3 s with
    σ_mono,global below the 12 s / zero-initialised variant's (measured 0.12 and 0.030 vs 6.3 and 1.0e3)."""
    by, all_rows = rows
    assert study.max_stable_dt(all_rows, "prestep_rls_loaded") == 0.3
    for dt in (0.2, 0.3):
        lo, cl = by[("prestep_rls_loaded", dt)], by[("prestep_rls", dt)]
        assert lo["stable"] and lo["sigma"] < 0.5
        assert lo["sigma"] < cl["sigma"]


@pytest.mark.xfail(strict=True, reason="AT-33/§15.4 accuracy does not hold: at ΔT = 0.2 s the loaded variant is "
                   "stable but far from the monolithic solution (ε_mono,global = 1, saturated; 0.24 even at 0.1 s, "
                   "where the 12 s variant has 0.063); the thesis's run 'nearly coincides with the monolithic one'")
def test_at33_loaded_variant_accurate_at_02(rows):
    by, _ = rows
    assert by[("prestep_rls_loaded", 0.2)]["eps"] < 0.1


# ---------------------------------------------------------------------------------------------------- AT-34
def _eps_si(by, dt):
    log = by[("prestep_rls", dt)]["result"].coupling_log
    return np.asarray(log["t"]), np.asarray(log["eps_si"], dtype=float), log


def test_at34_identification_error_small_after_20s(rows):
    """AT-34, holds: with 12 s learning at ΔT = 0.1 s the median ε_SI,global after 20 s is < 0.05 (measured 0.011;
    the thesis's "≈ 0.02 typically") and the run stays in the pre-step phases after learning."""
    by, _ = rows
    t, e, log = _eps_si(by, 0.1)
    assert np.median(e[t >= 20.0]) < 0.05
    assert set(log["phase"][t >= 13.0]) <= {"MBC", "MOD"}


@pytest.mark.xfail(strict=True, reason="AT-34's 'ε_SI,global stays < 0.15 (peaks 0.1-0.15 at the end of learning)' "
                   "does not hold: max after the learning phase 0.26 at ΔT = 0.1 s, so th_mod = 0.21 is reached and "
                   "a few modified-method steps occur (the thesis: never)")
def test_at34_identification_error_below_015_after_learning(rows):
    by, _ = rows
    t, e, _ = _eps_si(by, 0.1)
    assert np.max(e[t >= 12.0]) < 0.15
