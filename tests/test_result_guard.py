"""Results that only the run writes (issue 30, part 3): step_finished sees read-only views of the records, and a
Python callback that returns complex values fails with SolverError instead of losing the imaginary part."""
import warnings

import numpy as np
import pytest

import cosim
from cosim import models


def test_step_finished_gets_read_only_views():
    seen = []

    def hook(t, partial):
        for a in (partial.t, partial.X, partial.Y, partial.U, partial.x["S1"]):
            with pytest.raises(ValueError, match="read-only"):
                a[...] = 0.0
        seen.append(partial.X[-1].copy())

    res = cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, solver=cosim.RK4(), step_finished=hook)
    ref = cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, solver=cosim.RK4())
    assert len(seen) == len(res.t) - 1
    assert np.array_equal(res.X, ref.X)
    assert res.X.flags.writeable      # the returned result belongs to the caller


def test_a_hook_cannot_hide_an_unstable_run():
    """The issue's case: zeroing partial.X in the hook used to return an unstable run as all zeros."""
    def zero(t, partial):
        try:
            partial.X[:] = 0.0
        except ValueError:
            pass

    kw = dict(approximation=cosim.ZOH(), update="simplified", solver=cosim.RK4(substeps=10), divergence_growth=np.inf)
    res = cosim.simulate(models.two_mass_oscillator(), 0.05, 1e-3, step_finished=zero, **kw)
    ref = cosim.simulate(models.two_mass_oscillator(), 0.05, 1e-3, **kw)
    assert np.array_equal(res.X, ref.X)
    assert np.max(np.abs(res.X)) > 0


@pytest.mark.parametrize("where", ["rhs", "output"])
def test_complex_from_a_python_callback_is_a_solver_error(where):
    def rhs(t, x, u):
        v = np.array([x[1], -x[0] + u[0]])
        return v + 1j if where == "rhs" else v

    def out(t, x, u):
        return np.array([x[0] + (1j if where == "output" else 0)])

    a = cosim.ODE(rhs, out, nx=2, nu=1, ny=1, x0=[1.0, 0.0], name="A")
    b = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[0.0], name="B")
    s = cosim.CoupledSystem([a, b], [cosim.connect("A.y[0]", "B.u[0]"), cosim.connect("B.y[0]", "A.u[0]")])
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no ComplexWarning either
        with pytest.raises(cosim.SolverError, match="complex"):
            cosim.simulate(s, 0.01, 1e-3, solver=cosim.RK4())
