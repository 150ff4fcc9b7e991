"""Reduced helicopter study (examples/helicopter_study.py, genser2020 §15.2) with ZOH, and the one definition of
σ_mono / evar (cosim.metrics) the study and cosim.stability_theory use.

Thesis claims checked here with the reconstructed controller: ZOH stable up to ΔT = 0.14 s and unstable above
(thesis: "ZOH unstable for ΔT > 0.14 s"; here by design of the controller gain), σ_mono,global rising sharply at the
limit. The pre-step claims (AT-31..AT-34) are in tests/test_helicopter_prestep.py.
"""
import importlib.util
import math
import os

import numpy as np
import pytest

import cosim
from cosim import metrics, models

_PATH = os.path.join(os.path.dirname(__file__), "..", "examples", "helicopter_study.py")


@pytest.fixture(scope="module")
def study():
    spec = importlib.util.spec_from_file_location("helicopter_study", _PATH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_zoh_sweep_reduced(study):
    rows = study.sweep(dts=[0.05, 0.1, 0.14, 0.16], methods=["zoh"], t_end=40.0)
    by = {r["dt"]: r for r in rows}
    assert by[0.05]["stable"] and by[0.1]["stable"] and by[0.14]["stable"]
    assert not by[0.16]["stable"] and by[0.16]["sigma"] == 1.0
    # measured (40 s): sigma 1.5e-8, 2.0e-7, 1.3e-3; eps 0.026, 0.047, 0.065
    assert by[0.05]["sigma"] < by[0.1]["sigma"] < by[0.14]["sigma"] < 0.01
    assert by[0.05]["eps"] < by[0.1]["eps"] < by[0.14]["eps"] < 0.2
    assert study.max_stable_dt(rows, "zoh") == 0.14


def _evar_reference(e):
    """Garcia's evar written out from genser2020.md §11.2 (the definition the removed private helper of
    cosim.stability_theory used), to check cosim.metrics.evar against."""
    from scipy.fft import dct
    from scipy.optimize import minimize_scalar
    y = np.asarray(e, dtype=float).reshape(-1)
    n = y.size
    S = (2.0 * (1.0 - np.cos(np.pi * np.arange(n) / n))) ** 2
    Y2 = dct(y, norm="ortho") ** 2

    def s_of(h):
        return (((1 + np.sqrt(1 + 8 * h ** 2)) / (4 * h ** 2)) ** 2 - 1) / 16

    def nv(Lg):
        M = 1.0 - 1.0 / (1.0 + 10.0 ** Lg * S)
        return np.mean(Y2 * M ** 2), np.mean(M)

    Lg = minimize_scalar(lambda L: nv(L)[0] / nv(L)[1] ** 2, bounds=(np.log10(s_of(0.99)), np.log10(s_of(1e-6))),
                         method="bounded", options=dict(xatol=0.1)).x
    return float(nv(Lg)[0])


def test_metrics_evar_is_the_spec_definition():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 1, 20000)
    smooth = np.sin(2 * np.pi * t)
    for sig in (smooth + rng.normal(0, np.sqrt(0.02), t.size), smooth * 0 + 3.0, np.cumsum(rng.normal(size=500)),
                np.exp(3 * t[:300]) * np.sin(40 * t[:300])):
        ref = _evar_reference(sig)
        assert math.isclose(metrics.evar(sig), ref, rel_tol=1e-12, abs_tol=1e-300)
    assert abs(metrics.evar(smooth + rng.normal(0, np.sqrt(0.02), t.size)) - 0.02) < 0.05 * 0.02   # AT-18-like
    assert metrics.evar(smooth * 0 + 3.0) < 1e-12


def test_sigma_mono_over_s1_s2_equals_metrics_on_helicopter():
    """σ_mono,global (4.11) over S1 and S2 as the study defined it = cosim.metrics.sigma_mono on the whole system (the
    pilot's outputs are identical in both runs and add sqrt(evar(0)) = 0)."""
    s = models.helicopter(pilot_input=True)
    sol = {"S1": cosim.Exact(), "S2": cosim.Exact(), "pilot": cosim.Euler()}
    res = cosim.simulate(s, 20.0, 0.14, solver=sol, last_step="shorten")
    ref = cosim.simulate_monolithic(s, 20.0, t_eval=res.t)
    by_hand = sum(np.mean([math.sqrt(max(_evar_reference(res.y[n][:, i] - ref.y[n][:, i]), 0.0))
                           for i in range(res.y[n].shape[1])]) for n in ("S1", "S2"))
    assert by_hand > 0
    assert math.isclose(metrics.sigma_mono(res, ref, saturate=False), by_hand, rel_tol=1e-12)


def test_unknown_method(study):
    with pytest.raises(ValueError, match="methods"):
        study.sweep(dts=[0.1], methods=["nepce"], t_end=1.0)
    with pytest.raises(ValueError, match="method"):
        study.prestep("prestep_moesp")
    with pytest.raises(ValueError, match="loaded"):
        study.prestep("prestep_rls_loaded")
