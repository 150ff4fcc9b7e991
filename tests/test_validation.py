"""Strict validation: what used to pass silently now raises (or needs an explicit opt-in), and every message names
the argument or the signal."""
import ctypes

import numpy as np
import pytest

import cosim
from cosim import analysis as an
from cosim import models

DP = ctypes.POINTER(ctypes.c_double)
GOOD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, DP, DP, DP, ctypes.c_void_p)


def integrator(name="I", **kw):
    """ẋ = u, y = x: its state is the integral of its input (exact with cosim.Exact)."""
    return cosim.LTI([[0.0]], [[1.0]], [[1.0]], name=name, **kw)


# ---------------------------------------------------------------------------------------------------------------
# initial values
def test_unknown_x0_key_raises():
    s = models.two_mass_oscillator()
    with pytest.raises(ValueError, match=r"x0: unknown subsystem names \['S3'\]"):
        cosim.simulate(s, 0.01, 1e-3, x0={"S1": [0.1, 0.0], "S3": [1.0]})
    with pytest.raises(ValueError, match=r"x0\['S2'\]: expected 2"):
        cosim.simulate(s, 0.01, 1e-3, x0={"S2": [1.0]})
    res = cosim.simulate(s, 0.01, 1e-3, x0={"S2": [0.05, 0.0]})
    assert np.array_equal(res.X[0], [0.1, 0.0, 0.05, 0.0])


def test_start_values_by_name():
    s = models.two_mass_oscillator()
    res = cosim.simulate(s, 0.01, 1e-3, start_values={"S2.x[0]": 0.02, "S1.x[1]": -1.0})
    assert np.array_equal(res.X[0], [0.1, -1.0, 0.02, 0.0])
    with pytest.raises(ValueError, match=r"start_values: unknown states \['S2.x\[5\]'\]"):
        cosim.simulate(s, 0.01, 1e-3, start_values={"S2.x[5]": 1.0})
    with pytest.raises(ValueError, match=r"start_values\['S1.x\[0\]'\]"):
        cosim.simulate(s, 0.01, 1e-3, start_values={"S1.x[0]": float("nan")})
    with pytest.raises(TypeError, match="start_values"):
        cosim.simulate(s, 0.01, 1e-3, start_values=[0.1])
    ref = cosim.simulate_monolithic(s, 0.01, start_values={"S2.x[0]": 0.02})
    assert ref.X[0, 2] == 0.02


# ---------------------------------------------------------------------------------------------------------------
# unconnected inputs
def test_unconnected_input_raises_with_its_name():
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="A", inputs=["force"])
    b = integrator("B")
    with pytest.raises(ValueError, match=r"inputs \['A.force'\] are not connected"):
        cosim.CoupledSystem([a, b], [cosim.connect("A.y[0]", "B.u[0]")])
    with pytest.raises(ValueError, match=r"\['A.force', 'B.u\[0\]'\]"):
        cosim.CoupledSystem([a, b], [])


def test_unconnected_inputs_allowed_explicitly():
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[1.0], name="A")
    s = cosim.CoupledSystem([a, integrator("B")], [cosim.connect("A.y[0]", "B.u[0]")], allow_unconnected=True)
    assert s.unconnected_inputs == ["A.u[0]"] and s.r[0] == 0.0
    res = cosim.simulate(s, 1.0, 0.1, solver=cosim.Exact())
    assert res.x["A"][:, 0] == pytest.approx(np.exp(-res.t), rel=1e-12)       # the open input held at 0
    with pytest.raises(TypeError, match="allow_unconnected"):
        cosim.CoupledSystem([a], [], allow_unconnected="yes")


def test_inputs_default_sets_constant_inputs():
    s = cosim.CoupledSystem([integrator("I")], [], inputs_default={"I.u[0]": 2.0})
    assert s.unconnected_inputs == [] and s.inputs_default == {"I.u[0]": 2.0}
    res = cosim.simulate(s, 1.0, 0.25, solver=cosim.Exact())
    assert res.x["I"][:, 0] == pytest.approx(2.0 * res.t, abs=1e-14)          # x = ∫ 2 dt
    two = cosim.CoupledSystem([integrator("P"), integrator("Q")], [cosim.connect("P.y[0]", "Q.u[0]")],
                              inputs_default=-1.5)                              # one number: every open input
    assert two.r.tolist() == [-1.5, 0.0]
    with pytest.raises(ValueError, match=r"inputs_default\['P.u\[0\]'\]: input P.u\[0\] is already connected"):
        cosim.CoupledSystem([integrator("P"), integrator("Q")],
                            [cosim.connect("Q.y[0]", "P.u[0]"), cosim.connect("P.y[0]", "Q.u[0]")],
                            inputs_default={"P.u[0]": 1.0})
    with pytest.raises(ValueError, match="inputs_default: .*unknown subsystem 'Z'"):
        cosim.CoupledSystem([integrator("I")], [], inputs_default={"Z.u[0]": 1.0})
    with pytest.raises(ValueError, match=r"inputs_default\['I.u\[0\]'\]: expected a finite number"):
        cosim.CoupledSystem([integrator("I")], [], inputs_default={"I.u[0]": np.inf})
    with pytest.raises(TypeError, match="inputs_default"):
        cosim.CoupledSystem([integrator("I")], [], inputs_default=[1.0])


# ---------------------------------------------------------------------------------------------------------------
# H and t_end
def test_missing_H_says_so():
    s = models.two_mass_oscillator()
    with pytest.raises(TypeError, match="H: missing the macro step size H"):
        cosim.simulate(s, 0.1)
    with pytest.raises(TypeError, match="either the macro step size H or an explicit grid, not both"):
        cosim.simulate(s, 0.1, 1e-3, grid=[0.0, 0.05, 0.1])


def test_H_larger_than_t_end_raises():
    with pytest.raises(ValueError, match=r"H: the macro step size H = 0.5 is larger than t_end = 0.1"):
        cosim.simulate(models.two_mass_oscillator(), 0.1, 0.5)


def test_t_end_not_a_multiple_of_H():
    s = models.two_mass_oscillator()
    with pytest.raises(ValueError, match=r"t_end: t_end = 0.1 is not a multiple of H = 0.003.*last_step='shorten'"):
        cosim.simulate(s, 0.1, 3e-3)
    res = cosim.simulate(s, 0.1, 3e-3, last_step="shorten", solver=cosim.Exact())
    assert res.t[-1] == 0.1 and res.t[-2] == pytest.approx(33 * 3e-3) and len(res.t) == 35
    assert res.options["last_step"] == "shorten"
    for t_end, H in ((0.3, 0.1), (1.0, 0.1), (0.7, 0.07), (1e-3, 1e-5)):  # multiples up to rounding pass
        r = cosim.simulate(s, t_end, H, solver=cosim.Exact())
        assert r.t[-1] == t_end and len(r.t) == round(t_end / H) + 1
    with pytest.raises(ValueError, match="last_step"):
        cosim.simulate(s, 0.1, 1e-3, last_step="truncate")


def test_grid_end_rounding_is_accepted_and_far_end_named():
    s = models.two_mass_oscillator()
    grid = list(np.linspace(0.0, 0.1, 11)[:-1]) + [0.09999999999999999]
    res = cosim.simulate(s, 0.1, grid=grid, solver=cosim.Exact())
    assert res.t[-1] == 0.1 and len(res.t) == 11
    with pytest.raises(ValueError, match=r"grid: must end at t_end = 0.1, ends at 0.09"):
        cosim.simulate(s, 0.1, grid=[0.0, 0.05, 0.09])
    with pytest.raises(TypeError, match="grid"):
        cosim.simulate(s, 0.1, grid=["a", "b"])


def test_order_given_as_string_is_rejected():
    with pytest.raises(TypeError, match="order"):
        cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, scheme="gauss-seidel", order="S1S2")


# ---------------------------------------------------------------------------------------------------------------
# C function pointers
@GOOD
def _decay_rhs(t, x, u, xdot, user):
    k = ctypes.cast(user, DP)[0] if user else 1.0
    xdot[0] = -k * x[0]
    return 0


@GOOD
def _copy_out(t, x, u, y, user):
    y[0] = x[0]
    return 0


def test_cfunc_signature_helper():
    sig = cosim.cfunc_signature()
    assert sig == "intc(float64, CPointer(float64), CPointer(float64), CPointer(float64), voidptr)"


@pytest.mark.parametrize("restype,argtypes,what", [
    (ctypes.c_double, (ctypes.c_double, DP, DP, DP, ctypes.c_void_p), "return type is c_double"),
    (None, (ctypes.c_double, DP, DP, DP, ctypes.c_void_p), "return type is void"),
    (ctypes.c_int64, (ctypes.c_double, DP, DP, DP, ctypes.c_void_p), "return type is c_long"),
    (ctypes.c_int, (ctypes.c_float, DP, DP, DP, ctypes.c_void_p), "argument 0 is c_float"),
    (ctypes.c_int, (ctypes.c_double, ctypes.POINTER(ctypes.c_float), DP, DP, ctypes.c_void_p), "argument 1"),
    (ctypes.c_int, (ctypes.c_double, DP, DP, ctypes.c_double, ctypes.c_void_p), "argument 3 is c_double"),
    (ctypes.c_int, (ctypes.c_double, DP, DP, DP), "4 arguments, expected 5"),
])
def test_ctypes_signature_mismatch_raises(restype, argtypes, what):
    fn = ctypes.CFUNCTYPE(restype, *argtypes)(lambda *a: 0)
    with pytest.raises(TypeError, match=r"rhs: C signature .*" + what.replace("(", r"\(")):
        cosim.CModel(fn, _copy_out, nx=1, nu=0, ny=1)
    with pytest.raises(TypeError, match=r"output: C signature.*cfunc_signature"):
        cosim.CModel(_decay_rhs, fn, nx=1, nu=0, ny=1)


class FakeNumbaCFunc:
    """Duck type of a numba cfunc: ``.address`` plus ``.ctypes`` (a ctypes function pointer with its types)."""

    def __init__(self, fn):
        self.ctypes = fn
        self.address = ctypes.cast(fn, ctypes.c_void_p).value


def test_numba_like_cfunc_checked_without_numba():
    wrong = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_double, DP, DP, DP, ctypes.c_void_p)(lambda *a: 0)
    with pytest.raises(TypeError, match="rhs: C signature.*return type"):
        cosim.CModel(FakeNumbaCFunc(wrong), _copy_out, nx=1, nu=0, ny=1)
    m = cosim.CModel(FakeNumbaCFunc(_decay_rhs), FakeNumbaCFunc(_copy_out), nx=1, nu=0, ny=1, x0=[1.0], name="D")
    res = cosim.simulate(cosim.CoupledSystem([m]), 0.5, 0.05, solver=cosim.RK4(substeps=20))
    assert res.x["D"][:, 0] == pytest.approx(np.exp(-res.t), rel=1e-7)


def test_real_numba_cfunc():
    numba = pytest.importorskip("numba")

    @numba.cfunc(cosim.cfunc_signature())
    def rhs(t, x, u, xdot, user):
        xdot[0] = -x[0]
        return 0

    @numba.cfunc(cosim.cfunc_signature())
    def out(t, x, u, y, user):
        y[0] = x[0]
        return 0

    @numba.cfunc("float64(float64, CPointer(float64), CPointer(float64), CPointer(float64), voidptr)")
    def bad(t, x, u, y, user):
        return 0.0

    m = cosim.CModel(rhs, out, nx=1, nu=0, ny=1, x0=[1.0], name="D")
    res = cosim.simulate(cosim.CoupledSystem([m]), 0.5, 0.05, solver=cosim.RK4(substeps=20))
    assert res.x["D"][:, 0] == pytest.approx(np.exp(-res.t), rel=1e-7)
    with pytest.raises(TypeError, match="output: C signature"):
        cosim.CModel(rhs, bad, nx=1, nu=0, ny=1)


def test_user_data_array_is_passed_as_pointer():
    k = np.array([3.0])
    m = cosim.CModel(_decay_rhs, _copy_out, nx=1, nu=0, ny=1, x0=[1.0], name="D", user_data=k)
    assert m.user_data_ptr == k.ctypes.data
    res = cosim.simulate(cosim.CoupledSystem([m]), 0.5, 0.05, solver=cosim.RK4(substeps=20))
    assert res.x["D"][:, 0] == pytest.approx(np.exp(-3.0 * res.t), rel=1e-7)
    kc = ctypes.c_double(2.0)
    assert cosim.CModel(_decay_rhs, _copy_out, 1, 0, 1, user_data=kc).user_data_ptr == ctypes.addressof(kc)
    with pytest.raises(TypeError, match=r"user_data: expected None, an int address, a ctypes object or a NumPy"):
        cosim.CModel(_decay_rhs, _copy_out, nx=1, nu=0, ny=1, user_data="k = 3")
    with pytest.raises(ValueError, match="user_data: NumPy array must be C-contiguous"):
        cosim.CModel(_decay_rhs, _copy_out, nx=1, nu=0, ny=1, user_data=np.zeros((3, 3))[:, 0])


# ---------------------------------------------------------------------------------------------------------------
# messages
def test_rhs_without_return_says_so():
    def rhs(t, x, u):
        -x  # noqa: B018 - forgot the return

    s = cosim.CoupledSystem([cosim.ODE(rhs, lambda t, x, u: x, nx=2, nu=0, ny=2, x0=[1.0, 0.0], name="A")])
    with pytest.raises(cosim.SolverError, match=r"rhs returned None \(missing return statement\?\), expected 2"):
        cosim.simulate(s, 0.1, 0.01)


def test_signal_names():
    a = cosim.LTI([[-1.0, 0.0], [0.0, -2.0]], [[1.0], [0.0]], [[1.0, 0.0]], name="A", inputs=["f"], outputs=["pos"])
    b = cosim.LTI([[-1.0]], [[1.0], ], [[1.0], [2.0]], name="B")
    s = cosim.CoupledSystem([a, b], [cosim.connect("B.y[1]", "A.f"), cosim.connect("A.pos", "B.u[0]")])
    assert s.signal_names("x") == ["A.x[0]", "A.x[1]", "B.x[0]"]
    assert s.signal_names("y") == ["A.pos", "B.y[0]", "B.y[1]"]
    assert s.signal_names("u") == ["A.f", "B.u[0]"]
    with pytest.raises(ValueError, match="kind"):
        s.signal_names("z")


def test_analysis_validates_x0():
    s = models.two_mass_oscillator()
    with pytest.raises(ValueError, match=r"x0: expected 4 finite values"):
        an.local_error(s, [1e-4, 2e-4], x0=[1.0, 2.0])
    with pytest.raises(TypeError, match="x0"):
        an.local_error(s, [1e-4, 2e-4], x0=["a", "b", "c", "d"])


# ---------------------------------------------------------------------------------------------------------------
# approximation.evaluate: the engine's input polynomial, public
def test_evaluate_reproduces_polynomials():
    th = np.array([0.0, 0.1, 0.25, 0.3])                      # non-equidistant
    p = np.polynomial.Polynomial([1.0, -2.0, 3.0])
    t = np.linspace(0.3, 0.4, 5)
    assert cosim.Lagrange(2).evaluate(th, p(th), t) == pytest.approx(p(t), abs=1e-12)
    assert cosim.ZOH().evaluate(th, p(th), t) == pytest.approx(np.full(5, p(0.3)), abs=0)
    two = cosim.Lagrange(1).evaluate(th, np.column_stack([th, 2 * th]), [0.3, 0.35])
    assert two.shape == (2, 2) and two == pytest.approx(np.array([[0.3, 0.6], [0.35, 0.7]]))
    # Gauss-Seidel: interpolation through the newest sample T_{N+1} = 0.3 on [0.25, 0.3]
    assert cosim.Lagrange(3).evaluate(th, p(th), [0.26, 0.29], H=0.05, interpolate=True) == pytest.approx(
        p(np.array([0.26, 0.29])), abs=1e-12)
    # Hermite k = 1 (moshagen eq. 90): y(T_N) + ẏ(T_N)(t − T_N)
    h = cosim.Hermite(1).evaluate(th, p(th), 0.35, ydot_hist=p.deriv()(th))
    assert h == pytest.approx(p(0.3) + p.deriv()(0.3) * 0.05, abs=1e-14)


def test_evaluate_matches_the_engine_inputs():
    """An integrator S2 (ẋ = u) fed from S1's output: x2(T_{N+1}) − x2(T_N) = ∫ ũ dt over the step, where ũ is
    what approximation.evaluate returns from S1's exchanged outputs (Jacobi: extrapolation)."""
    osc = cosim.LTI([[0.0, 1.0], [-4.0, -0.1]], np.zeros((2, 0)), [[1.0, 0.0]], x0=[1.0, 0.0], name="S1")
    s = cosim.CoupledSystem([osc, integrator("S2")], [cosim.connect("S1.y[0]", "S2.u[0]")])
    gl_s, gl_w = np.polynomial.legendre.leggauss(4)          # exact for degree <= 7
    for approx in (cosim.Lagrange(2), cosim.ExtrapolatedInterpolation(2, 1), cosim.ExtrapolatedInterpolation(1, 0)):
        H = 0.05
        res = cosim.simulate(s, 1.0, H, approximation=approx, solver=cosim.Exact())
        y1, x2 = res.y["S1"][:, 0], res.x["S2"][:, 0]
        for N in (0, 1, 5, 12):
            tq = res.t[N] + H * (gl_s + 1) / 2
            integral = H / 2 * gl_w @ approx.evaluate(res.t[:N + 1], y1[:N + 1], tq, H=H)
            assert x2[N + 1] - x2[N] == pytest.approx(integral, rel=1e-11, abs=1e-14), (approx, N)


def test_evaluate_validates_arguments():
    z = cosim.Lagrange(1)
    with pytest.raises(ValueError, match="t_hist"):
        z.evaluate([0.0, 0.2, 0.1], [1, 2, 3], 0.2)
    with pytest.raises(ValueError, match="y_hist"):
        z.evaluate([0.0, 0.1], [1, 2, 3], 0.2)
    with pytest.raises(ValueError, match="H"):
        z.evaluate([0.0], [1.0], 0.2)
    with pytest.raises(ValueError, match="H"):
        z.evaluate([0.0, 0.1], [1.0, 2.0], 0.2, H=-1.0)
    with pytest.raises(ValueError, match="ydot_hist"):
        cosim.Hermite(1).evaluate([0.0, 0.1], [1.0, 2.0], 0.2)
    with pytest.raises(ValueError, match="ydot_hist"):
        z.evaluate([0.0, 0.1], [1.0, 2.0], 0.2, ydot_hist=[0.0, 0.0])
    with pytest.raises(ValueError, match="t: contains NaN"):
        z.evaluate([0.0, 0.1], [1.0, 2.0], np.nan)


# ------------------------------------------------------------------------------------------------------------------
# issue 24: one rule for numbers everywhere: a string or a bool is not a number (cosim._check.real)
@pytest.mark.parametrize("make", [
    lambda v: cosim.sysid.RLS(n_y=1, n_u=1, lam=v),
    lambda v: cosim.CVODE(rtol=v),
    lambda v: cosim.connect("S1.y[0]", "S2.u[0]", gain=v),
    lambda v: cosim.StepControl(rtol=v),
    lambda v: cosim.models.kraft_two_mass(m1=v),
    lambda v: cosim.Implicit(tol=v),
    lambda v: cosim.WaveformRelaxation(omega=v),
    lambda v: cosim.Euler(h=v),
    lambda v: cosim.PreStep(learning_time=v),
    lambda v: cosim.NEPCE(K=v),
    lambda v: cosim.models.precice_oscillator(m1=v),
    lambda v: cosim.models.quarter_truck(m_c=v),
    lambda v: cosim.models.two_mass_oscillator(ck=v),
    lambda v: cosim.sysid.MOESPWindow(n_u=1, n_y=1, window=20, threshold=v),
], ids=["RLS.lam", "CVODE.rtol", "connect.gain", "StepControl.rtol", "kraft_two_mass.m1", "Implicit.tol",
        "WaveformRelaxation.omega", "Euler.h", "PreStep.learning_time", "NEPCE.K", "precice_oscillator.m1",
        "quarter_truck.m_c", "two_mass_oscillator.ck", "MOESPWindow.threshold"])
@pytest.mark.parametrize("value", ["0.5", True])
def test_numbers_given_as_strings_or_bools_are_refused_everywhere(make, value):
    with pytest.raises(TypeError):
        make(value)
