"""Dense output: records on a user grid (output_interval / t_eval) between macro points, from the units'
re-integration with the input functions of the macro step."""
import numpy as np
import pytest

import cosim
from cosim import models


def test_dense_values_at_macro_points_equal_the_macro_run():
    s = models.two_mass_oscillator()
    for solver in (cosim.Exact(), cosim.RK4(substeps=4), cosim.CVODE(rtol=1e-9, atol=1e-11)):
        dense = cosim.simulate(s, 0.01, 1e-3, output_interval=2.5e-4, solver=solver, scheme="gauss-seidel",
                               approximation=cosim.Lagrange(1))
        macro = cosim.simulate(s, 0.01, 1e-3, solver=solver, scheme="gauss-seidel", approximation=cosim.Lagrange(1))
        assert len(dense.t) == 41 and dense.stats["macro_steps"] == 10
        assert np.allclose(dense.t[::4], macro.t, rtol=0, atol=1e-15)
        assert np.array_equal(dense.X[::4], macro.X) and np.array_equal(dense.Y[::4], macro.Y)


def unidirectional():
    """S1 autonomous (its input has gain 0 from nothing: no input at all), S2 driven by S1's output."""
    s1 = cosim.LTI([[0.0, 1.0], [-9.0, -0.3]], np.zeros((2, 1)), [[1.0, 0.0]], x0=[1.0, 0.0], name="S1")
    s2 = cosim.LTI([[-2.0]], [[1.0]], [[1.0]], x0=[0.0], name="S2")
    return cosim.CoupledSystem([s1, s2], [cosim.connect("S1.y[0]", "S2.u[0]")], inputs_default={"S1.u[0]": 0.0})


def test_dense_output_equals_finer_run_for_exact_units():
    """S1 has no coupling error: its dense values on a grid 10x finer than H equal a run with that finer H to 1e-10
    (both integrate it exactly)."""
    s = unidirectional()
    dense = cosim.simulate(s, 1.0, 0.1, output_interval=0.01, solver=cosim.Exact())
    fine = cosim.simulate(s, 1.0, 0.01, solver=cosim.Exact())
    assert np.max(np.abs(dense.x["S1"] - fine.x["S1"])) < 1e-10


def test_dense_states_are_the_units_exact_response_to_the_step_input():
    """Between macro points S2 sees the ZOH input u = y1(T_N): its dense states equal S2 integrated exactly from its
    macro state with that constant input (cosim.Stepper)."""
    s = unidirectional()
    dense = cosim.simulate(s, 1.0, 0.1, t_eval=np.linspace(0.0, 1.0, 41), solver=cosim.Exact())
    macro = cosim.simulate(s, 1.0, 0.1, solver=cosim.Exact())
    for t, x2, u2 in zip(dense.t, dense.x["S2"], dense.u["S2"]):
        N = int(np.searchsorted(macro.t, t + 1e-12, side="right")) - 1
        if abs(t - macro.t[N]) < 1e-12:
            continue
        st = cosim.Stepper(s["S2"], cosim.Exact(), x0=macro.x["S2"][N], t0=macro.t[N])
        st.do_step(macro.t[N], t - macro.t[N], macro.u["S2"][N])
        assert np.allclose(st.x, x2, rtol=1e-12, atol=1e-14)
        assert u2[0] == pytest.approx(macro.u["S2"][N][0], rel=1e-14)


def test_output_grid_validation():
    s = models.two_mass_oscillator()
    with pytest.raises(TypeError, match="output_interval"):
        cosim.simulate(s, 0.01, 1e-3, output_interval=1e-3, t_eval=[0, 0.01])
    with pytest.raises(ValueError, match="output_interval"):
        cosim.simulate(s, 0.01, 1e-3, output_interval=-1.0)
    with pytest.raises(ValueError, match="t_eval"):
        cosim.simulate(s, 0.01, 1e-3, t_eval=[0.0, 0.02])
    with pytest.raises(ValueError, match="t_eval"):
        cosim.simulate(s, 0.01, 1e-3, t_eval=[0.001, 0.005])
    r = cosim.simulate(s, 0.01, 1e-3, t_eval=[0.0, 0.0033, 0.01])
    assert np.allclose(r.t, [0.0, 0.0033, 0.01])


@pytest.mark.parametrize("k", [1, 2, 3])
def test_dense_output_of_exact_units_with_polynomial_inputs(k):
    """Between macro points an Exact unit re-integrates [T_N, t] with the step's input polynomial, which is defined
    on the whole window: the propagator must see it re-expanded in (t - T_N)/(t - T_N). RK4 with many micro steps
    integrates the same input and agrees to its own accuracy."""
    s = models.two_mass_oscillator()
    t_eval = np.linspace(0.0, 0.02, 81)                     # 4 output points per macro step
    kw = dict(t_end=0.02, H=1e-3, approximation=cosim.Lagrange(k), t_eval=t_eval)
    ex = cosim.simulate(s, solver=cosim.Exact(), **kw)
    rk = cosim.simulate(s, solver=cosim.RK4(substeps=200), **kw)
    scale = np.max(np.abs(rk.X), axis=0)
    assert np.max(np.abs(ex.X - rk.X) / scale) < 1e-9
