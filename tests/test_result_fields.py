"""issue 24 part 5: a Result declares its fields (solve_ivp's OdeResult shape), accepted step sizes under one name,
one status; no private parameter in a public signature; Result._repr_html_."""
import inspect

import numpy as np
import pytest

import cosim
from cosim import models

BOND = [("chassis.v", "chassis.F", "wheel.F", "wheel.v")]
FIELDS = ("t", "x", "y", "u", "X", "Y", "U", "system", "stats", "status", "message", "options", "step_sizes", "k",
          "error_estimate", "balance_t", "balance_error", "energy_t", "energy_residual")


def _two_mass():
    return models.two_mass_oscillator(ck=1e5, dk=1e3, coupling="force/displacement")


def test_every_field_is_set_by_the_constructor():
    res = cosim.simulate(_two_mass(), 0.01, 1e-3)
    assert set(FIELDS) <= set(vars(res))
    assert res.step_sizes is None and res.H is None and res.k is None and res.coupling_log is None


@pytest.mark.parametrize("control", ["step_control", "ecco"])
def test_accepted_step_sizes_have_one_name_whichever_controller_chose_them(control):
    if control == "ecco":
        system, H = models.quarter_truck(), 1e-4
        sc = cosim.ECCO(BOND, rtol=1e-3, atol=1e-3, H_min=1e-5, H_max=1e-2)
        res = cosim.simulate(system, 0.05, H, solver=cosim.Exact(), step_control=sc)
    else:
        res = cosim.simulate(models.kraft_two_mass("M1"), 0.05, 1e-4, solver=cosim.Exact(),
                             approximation=cosim.Lagrange(0), step_control=cosim.StepControl("exMD", 1e-4))
    assert res.step_sizes is not None and len(res.step_sizes) == len(res.t) - 1
    np.testing.assert_allclose(res.step_sizes, np.diff(res.t), rtol=1e-12, atol=1e-15)
    assert res.H is res.step_sizes                       # the older name is an alias of the same array


def test_one_status_the_old_state_is_derived_from_it():
    res = cosim.simulate(_two_mass(), 0.01, 1e-3)
    assert (res.status, res.success, res.state, res.message) == (cosim.Result.FINISHED, True, "finished", "")
    stopped = cosim.simulate(_two_mass(), 0.01, 1e-3, step_finished=lambda t, r: t < 0.0045)
    assert stopped.status == cosim.Result.STOPPED and stopped.success and stopped.state == "stopped"
    assert "step_finished" in stopped.message
    with pytest.raises(AttributeError):
        stopped.state = "finished"                        # derived: it cannot disagree with status


def test_a_run_flagged_as_diverged_has_one_failed_status():
    s = models.two_mass_oscillator(ck=1e7, dk=0.0, coupling="force/displacement")
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(s, 0.5, 1e-3, scheme="jacobi", approximation=cosim.Lagrange(2), solver=cosim.Exact())
    res = info.value.result
    assert not res.success and res.state == "error" and res.status not in (0, cosim.Result.STOPPED)
    assert res.message


def test_no_private_parameter_in_a_public_signature():
    for fn in (cosim.simulate, cosim.simulate_monolithic):
        private = [p for p in inspect.signature(fn).parameters if p.startswith("_")]
        assert not private, f"{fn.__name__}: {private}"
    with pytest.raises(TypeError):
        cosim.simulate(_two_mass(), 0.01, 1e-3, _reject_steps=[2])


def test_repr_html_for_jupyter():
    res = cosim.simulate(_two_mass(), 0.01, 1e-3)
    text = res._repr_html_()
    assert text.startswith("<table>") and "finished" in text and "S1, S2" in text and "11 points" in text


def test_order_means_the_gauss_seidel_order_only_old_keywords_still_work():
    wr = cosim.WaveformRelaxation(sweep="gauss-seidel")
    assert wr.sweep == "gauss-seidel" and wr.order == "gauss-seidel"
    with pytest.warns(DeprecationWarning, match="sweep="):
        old = cosim.WaveformRelaxation(order="gauss-seidel")
    assert old.sweep == "gauss-seidel" and old.spec(1) == wr.spec(1)
    with pytest.raises(TypeError, match="given twice"):
        cosim.WaveformRelaxation(sweep="jacobi", order="jacobi")
    sc = cosim.StepControl("exMD", 1e-4, order_control="conservative")
    assert sc.order_control == "conservative" and sc.order == "conservative"
    with pytest.warns(DeprecationWarning, match="order_control="):
        old = cosim.StepControl("exMD", 1e-4, order=2)
    assert old.order_control == 2
    with pytest.raises(ValueError, match="order_control"):
        cosim.StepControl("exMD", 1e-4, order_control="random")
