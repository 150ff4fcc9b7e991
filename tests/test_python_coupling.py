"""Couplings written in Python (cosim.PythonCoupling, issue 31 part 2): the engine calls them through its C coupling
interface; examples/python_coupling.py reimplements ZOH, Lagrange(1) and MBCorr-0 and matches the C ones."""
import importlib.util
import pathlib

import numpy as np
import pytest

import cosim
from cosim.simulate import _simulate     # the test-only entry point that repeats steps (reject_steps)
from cosim.models import two_mass_oscillator

ROOT = pathlib.Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("_python_coupling_example", ROOT / "examples" / "python_coupling.py")
example = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(example)

SYSTEM = two_mass_oscillator(ck=2e5, dk=200)
KW = dict(t_end=0.05, H=5e-4, solver=cosim.Euler(h=1e-5), update="simplified")


def rel(a, b):
    return np.max(np.abs(a.Y - b.Y)) / np.max(np.abs(b.Y))


def test_zoh_matches_the_c_zoh_bitwise():
    a = cosim.simulate(SYSTEM, coupling=example.PyZOH(), **KW)
    b = cosim.simulate(SYSTEM, approximation=cosim.ZOH(), **KW)
    assert np.array_equal(a.Y, b.Y) and np.array_equal(a.U, b.U)


def test_lagrange_1_matches_the_c_lagrange_to_rounding():
    a = cosim.simulate(SYSTEM, coupling=example.PyLagrange1(), **KW)
    b = cosim.simulate(SYSTEM, approximation=cosim.Lagrange(1), **KW)
    assert rel(a, b) <= 1e-13            # measured 1.0e-15


def test_mbcorr_0_prototype_matches_the_c_mbcorr_to_rounding():
    a = cosim.simulate(SYSTEM, coupling=example.PyMBCorr0(), **KW)
    b = cosim.simulate(SYSTEM, coupling=cosim.MBCorr(0), **KW)
    assert rel(a, b) <= 1e-12            # measured 2.9e-15
    c = cosim.simulate(SYSTEM, approximation=cosim.ZOH(), **KW)
    assert rel(c, b) > 1e-3              # the correction is not a no-op


def test_gauss_seidel_through_on_unit_done():
    """PyZOH hands the later unit the new outputs of the first (on_unit_done): the C ZOH under Gauss-Seidel."""
    a = cosim.simulate(SYSTEM, coupling=example.PyZOH(), scheme="gauss-seidel", **KW)
    b = cosim.simulate(SYSTEM, approximation=cosim.ZOH(), scheme="gauss-seidel", **KW)
    assert np.array_equal(a.Y, b.Y)


def test_rejected_steps_go_through_save_and_restore():
    calls = {"save": 0, "restore": 0}

    class Counting(example.PyLagrange1):
        def save(self):
            calls["save"] += 1
            return super().save()

        def restore(self, state):
            calls["restore"] += 1
            super().restore(state)

    a = _simulate(SYSTEM, coupling=Counting(), reject_steps=[3, 7], **KW)
    b = _simulate(SYSTEM, approximation=cosim.Lagrange(1), reject_steps=[3, 7], **KW)
    assert calls["restore"] == 2 and calls["save"] >= 2
    assert rel(a, b) <= 1e-13


class Failing(example.PyZOH):
    def __init__(self, exc=ValueError, when=0.01):
        self.exc, self.when = exc, when

    def predict(self, T, H):
        if T >= self.when:
            raise self.exc("boom")
        return super().predict(T, H)


def test_an_exception_stops_the_run_as_the_cause_of_a_solver_error():
    with pytest.raises(cosim.SolverError, match="coupling.predict raised ValueError: boom") as e:
        cosim.simulate(SYSTEM, coupling=Failing(), **KW)
    assert isinstance(e.value.__cause__, ValueError)


def test_keyboard_interrupt_propagates_with_the_partial_result():
    with pytest.raises(KeyboardInterrupt) as e:
        cosim.simulate(SYSTEM, coupling=Failing(KeyboardInterrupt), **KW)
    r = e.value.result
    assert r.status == r.INTERRUPTED and 0.009 < r.t[-1] < 0.0101


@pytest.mark.parametrize("ret, msg", [(np.zeros((1, 2)), r"shape \(1, 2\), expected \(deg \+ 1, 3\)"),
                                      (np.zeros((cosim.approximations.MAXDEG + 2, 3)),
                                       rf"shape \({cosim.approximations.MAXDEG + 2}, 3\)"),
                                      (np.full(3, np.nan), "non-finite"),
                                      ("abc", "ValueError")])
def test_bad_predictions_are_refused(ret, msg):
    class Bad(example.PyZOH):
        def predict(self, T, H):
            return ret

    with pytest.raises(cosim.SolverError, match=msg):
        cosim.simulate(SYSTEM, coupling=Bad(), **KW)


def test_the_base_class_names_what_is_missing():
    with pytest.raises(cosim.SolverError, match="must define accept"):
        cosim.simulate(SYSTEM, coupling=cosim.PythonCoupling(), **KW)
    with pytest.raises(cosim.SolverError, match="must define predict"):
        cosim.simulate(SYSTEM, coupling=type("NoPredict", (example.PyZOH,), {"predict": cosim.PythonCoupling.predict})(),
                       **KW)
    with pytest.raises(cosim.SolverError, match="save: needed when the run may reject"):
        _simulate(SYSTEM, coupling=type("NoSave", (example.PyZOH,), {"save": cosim.PythonCoupling.save})(),
                  reject_steps=[2], **KW)


def test_one_object_serves_several_runs():
    """start() resets the state: a second run with the same object gives the same result."""
    cp = example.PyLagrange1()
    a = cosim.simulate(SYSTEM, coupling=cp, **KW)
    b = cosim.simulate(SYSTEM, coupling=cp, **KW)
    assert np.array_equal(a.Y, b.Y)
