"""Start-up of Kraft's controller (kraft2021 §4.3, §19): the first macro step is error-tested like every other one,
so the final error does not depend on the user's starting step H_init (issue 9 follow-up)."""
import math

import numpy as np
import pytest

import cosim
from cosim import control
from cosim.models import oscillator_chain

M1 = cosim.models.kraft_two_mass("M1")
STATES = ["S1.x1", "S1.v1", "S2.x2", "S2.v2"]
H_INITS = (1e-7, 1e-5, 1e-3, 1e-2)


def m1_error(est, H_init, rtol=1e-6, t_end=0.05):
    res = cosim.simulate(M1, t_end, H_init, approximation=cosim.Lagrange(k=2), solver=cosim.Exact(),
                         divergence_growth=math.inf, step_control=cosim.StepControl(est, rtol))
    ref = cosim.simulate_monolithic(M1, t_end=t_end, t_eval=res.t, solver=cosim.Exact())
    X = np.column_stack([res[n] for n in STATES])
    R = np.column_stack([ref[n] for n in STATES])
    return control.nrmse(X, R), res


@pytest.mark.parametrize("est", ["exMD", "exLE", "exCV"])
def test_final_error_on_M1_does_not_depend_on_H_init(est):
    """Before: exMD/exLE accepted the first step untested, H_init = 1e-2 gave NRMSE 1.0 against 3.7e-6 for 1e-7.
    Measured now (t_end = 0.1): exMD 2.5e-6 .. 6.7e-6 over H_init = 1e-7 .. 1e-2."""
    errs = {H: m1_error(est, H)[0] for H in H_INITS}
    assert max(errs.values()) / min(errs.values()) <= 4.0, errs
    assert max(errs.values()) <= 3e-5, errs


def test_a_too_large_H_init_is_rejected_and_resized_from_the_first_estimate():
    e, res = m1_error("exMD", 1e-2)
    rej_H = np.asarray(res.stats["rejected_H"])
    assert res.stats["rejected_steps"] >= 1 and rej_H[0] == 1e-2           # the first attempt fails its test
    assert res.H[0] < 1e-4                                                 # the accepted first step is small
    assert res.error_estimate[0] <= 1.0                                    # and it passed the test
    # the estimate sizes H below Listing 3.3's floor of 0.25 per attempt: fewer attempts than 0.25-steps need
    assert res.stats["rejected_steps"] < math.log(1e-2 / res.H[0]) / math.log(4.0)
    # the initial phase (§19) still runs from the first accepted step: H doubles while κ rises
    assert res.H[1] == pytest.approx(2 * res.H[0]) and res.k[1] >= res.k[0]


def test_short_chain_final_error_does_not_depend_on_H_init():
    """3-unit oscillator chain (kraft2021 §3), CVODE units: before, exMD's error grew 4000x from H_init = 1e-7 to
    1e-2 (3.4e-6 -> 1.3e-2)."""
    s = oscillator_chain(9, 3, masses=1.0, stiffness=1e4, damping=1.0,
                         x0=lambda i: 1e-3 * np.sin(np.asarray(i, float)), v0=0.0)
    T = 0.02
    t_eval = np.linspace(0.0, T, 6)
    solver = cosim.CVODE(rtol=1e-11, atol=1e-14)
    ref = cosim.simulate_monolithic(s, t_end=T, t_eval=t_eval, solver=solver)
    names = s.monitor["pos"] + s.monitor["vel"]
    for est in ("exMD", "exLE"):
        errs = []
        for H in H_INITS:
            r = cosim.simulate(s, T, H, solver=solver, divergence_growth=math.inf, t_eval=t_eval,
                               step_control=cosim.StepControl(est, 1e-6, k_max=4))
            errs.append(max(np.max(np.abs(r[n] - ref[n])) for n in names))
        assert max(errs) / min(errs) <= 4.0, (est, errs)


def test_a_failing_test_at_H_min_stops_even_when_T1_minus_T_rounds_above_H_min():
    """M3, exCV, rtol 1e-6, CVODE 1e-12 ran for more than 5 minutes: at the first contact (t ≈ 0.0874) the test fails
    down to H_min = 1e-13, and T1 − T = 1.00003e-13 > H_min (7000 ulps of t) made the controller repeat the same
    step forever. It now raises StepSizeError with the partial result within a second."""
    import time
    s = cosim.models.kraft_two_mass("M3")
    t0 = time.perf_counter()
    with pytest.raises(cosim.StepSizeError) as ei:
        cosim.simulate(s, 0.1, 1e-6, solver=cosim.CVODE(rtol=1e-12, atol=1e-12), divergence_growth=math.inf,
                       step_control=cosim.StepControl("exCV", 1e-6))
    assert time.perf_counter() - t0 < 60.0
    part = ei.value.result
    assert 0.08 < part.t[-1] < 0.09 and part.stats["macro_steps"] > 100
