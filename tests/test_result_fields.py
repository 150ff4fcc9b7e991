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


# ---------------------------------------------------------------- one name per quantity
def test_outputs_that_are_states_are_listed_once_under_their_declared_names():
    system = cosim.models.two_mass_oscillator()
    res = cosim.simulate(system, t_end=2e-3, H=1e-3)
    assert res.signals == ["S1.x1", "S1.v1", "S1.F", "S2.x2", "S2.v2", "S2.F", "S2.x1", "S2.v1"]
    assert len(set(res.signals)) == len(res.signals)
    assert list(res.to_dataframe().columns) == res.signals
    assert list(res.to_dataframe(kinds="y").columns) == ["S1.x1", "S1.v1", "S2.F"]
    np.testing.assert_array_equal(res.to_dataframe(kinds="y")["S1.x1"], res.Y[:, 0])
    np.testing.assert_array_equal(res.Y[:, 0], res["S1.x1"])        # the output is the state
    assert set(res.error_to(res)["per_signal"]) == set(res.signals)


def test_an_output_named_like_a_state_but_not_it_keeps_its_index():
    s1 = cosim.LTI([[-1.0]], [[1.0]], [[2.0]], name="A", states=["q"], outputs=["q"], inputs=["f"])
    s2 = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="B", states=["p"], outputs=["p"], inputs=["g"])
    res = cosim.simulate(cosim.CoupledSystem([s1, s2], [cosim.connect("A.q", "B.g"), cosim.connect("B.p", "A.f")]),
                         t_end=0.02, H=0.01)
    assert res.signals == ["A.q", "A.y[0]", "A.f", "B.p", "B.g"]


def test_local_error_orders_use_the_result_signal_names():
    system = cosim.models.two_mass_oscillator()
    le = cosim.analysis.local_error(system, np.logspace(-5, -4, 4))
    res = cosim.simulate(system, t_end=2e-3, H=1e-3)
    assert set(le.order) <= set(res.signals)
    assert list(le.order) == ["S1.x1", "S1.v1", "S2.x2", "S2.v2", "S2.F"]
    assert le.labels[0] == "S1.x[0]" and len(le.labels) == le.eps.shape[1]


def test_a_wrong_name_in_connect_lists_the_valid_names():
    a, b = cosim.models.two_mass_oscillator().subsystems
    with pytest.raises(ValueError, match=r"unknown output S2\.G; valid outputs of S2: S2\.F"):
        cosim.CoupledSystem([a, b], [cosim.connect("S2.G", "S1.F")])
    with pytest.raises(ValueError, match=r"unknown input S1\.G; valid inputs of S1: S1\.F"):
        cosim.CoupledSystem([a, b], [cosim.connect("S2.F", "S1.G")])
    with pytest.raises(ValueError, match=r"index out of range .*valid outputs of S2: S2\.F"):
        cosim.CoupledSystem([a, b], [cosim.connect("S2.y[3]", "S1.F")])
    with pytest.raises(ValueError, match=r"known: \['S1', 'S2'\]"):
        cosim.CoupledSystem([a, b], [cosim.connect("S9.F", "S1.F")])



def test_connecting_a_subsystem_with_millions_of_signals_does_not_list_them_all():
    # found by the fuzz under a 4 GiB address-space limit: the list of valid names was built for every connection
    # (2**31 names: MemoryError with no message); now only for an error, and only the first 20
    big = cosim.ODE(lambda t, x, u: [0.0], lambda t, x, u: [0.0], nx=1, nu=1, ny=2**24, name="S1")
    system = cosim.CoupledSystem([big], [cosim.connect("S1.y[0]", "S1.u[0]")])
    assert system.subsystems[0].ny == 2**24
    with pytest.raises(ValueError, match=r"valid outputs of S1: S1\.y\[0\], .*, S1\.y\[19\], \.\.\. \(16777216 in all\)$"):
        cosim.CoupledSystem([big], [cosim.connect("S1.y[16777216]", "S1.u[0]")])
    # counts beyond the C core's cap are refused where they are given (the fuzz: ny = 2**63 reached C as an
    # OverflowError)
    for n, got in ((2**31, "2147483648"), (2**63, "9.22e\\+18")):
        with pytest.raises(ValueError, match=rf"^ny: must be in 0\.\.16777216, got {got}$"):
            cosim.ODE(lambda t, x, u: [], lambda t, x, u: [0.0], nx=0, nu=0, ny=n, name="S")


# ---------------------------------------------------------------- t_start
def test_t_start_shifts_the_run_of_a_time_invariant_system():
    system = cosim.models.two_mass_oscillator()
    a = cosim.simulate(system, t_end=0.01, H=1e-3, solver=cosim.Exact())
    b = cosim.simulate(system, t_end=5.01, H=1e-3, t_start=5.0, solver=cosim.Exact())
    assert b.t[0] == 5.0 and b.t[-1] == pytest.approx(5.01) and len(b.t) == len(a.t)
    np.testing.assert_allclose(b.X, a.X, rtol=1e-8, atol=1e-12)
    c = cosim.simulate(system, t_end=5.01, H=1e-3, t_start=5.0, output_interval=5e-4, solver=cosim.Exact())
    assert c.t[0] == 5.0 and len(c.t) == 21
    assert cosim.simulate(system, t_end=0.01, H=1e-3, t_start=0.0, solver=cosim.Exact()).X.tobytes() == a.X.tobytes()
    with pytest.raises(ValueError, match="t_start"):
        cosim.simulate(system, t_end=5.01, H=1e-3, t_start=5.0, t_eval=[0.0, 0.01])
    with pytest.raises(ValueError, match="t_end"):
        cosim.simulate(system, t_end=1.0, H=1e-3, t_start=2.0)
    with pytest.raises(TypeError, match="t_start"):
        cosim.simulate(system, t_end=1.0, H=1e-3, t_start="1")
    with pytest.raises(ValueError, match="grid"):
        cosim.simulate(system, t_end=1.0, grid=[0.0, 0.5, 1.0], t_start=0.5)
