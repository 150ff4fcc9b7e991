"""The co-simulation engine against exact solutions, its rollback, user models and its error handling."""
import ctypes
import math

import numpy as np
import pytest
from scipy.linalg import expm

import cosim
from cosim import models

COUPLINGS = ["force/displacement", "displacement/displacement", "force/force"]


@pytest.mark.parametrize("coupling", COUPLINGS)
def test_monolithic_reference_equals_matrix_exponential(coupling):
    s = models.two_mass_oscillator(ck=2e5, dk=200, coupling=coupling)
    ref = cosim.simulate_monolithic(s, 0.2, 1e-3)
    A = models.monolithic_matrix(ck=2e5, dk=200)
    z0 = np.array([0.1, 0, 0, 0])
    exact = np.array([expm(A * t) @ z0 for t in ref.t])
    assert np.max(np.abs(ref.X - exact)) <= 1e-10 * np.max(np.abs(exact))


def test_monolithic_cvode_matches_exact():
    s = models.two_mass_oscillator(ck=2e5, dk=200)
    a = cosim.simulate_monolithic(s, 0.05, 1e-3)
    b = cosim.simulate_monolithic(s, 0.05, 1e-3, solver=cosim.CVODE(rtol=1e-11, atol=1e-13))
    assert np.max(np.abs(a.X - b.X)) <= 1e-7 * np.max(np.abs(a.X))
    # outputs and inputs of the subsystems are reported consistently (F = ck (x2 - x1) + dk (v2 - v1))
    F = 2e5 * (b.X[:, 2] - b.X[:, 0]) + 200 * (b.X[:, 3] - b.X[:, 1])
    np.testing.assert_allclose(b.y["S2"][:, 0], F, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(b.u["S1"][:, 0], F, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("scheme", ["jacobi", "gauss-seidel"])
def test_cvode_cosimulation_matches_exact_cosimulation(scheme):
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    kw = dict(scheme=scheme, approximation=cosim.Lagrange(1))
    a = cosim.simulate(s, 0.05, 1e-4, solver=cosim.Exact(), **kw)
    b = cosim.simulate(s, 0.05, 1e-4, solver=cosim.CVODE(rtol=1e-11, atol=1e-13), **kw)
    assert np.max(np.abs(a.X - b.X)) <= 1e-6 * np.max(np.abs(a.X))
    c = cosim.simulate(s, 0.05, 1e-4, solver=cosim.RK4(substeps=20), **kw)
    assert np.max(np.abs(a.X - c.X)) <= 1e-6 * np.max(np.abs(a.X))


@pytest.mark.parametrize("solver", [cosim.Euler(substeps=5), cosim.RK4(substeps=3), cosim.Exact(),
                                    cosim.CVODE(rtol=1e-8, atol=1e-10), cosim.CVODE(method="adams")])
def test_save_restore_reproduces_a_macro_step_bit_for_bit(solver):
    sub = models.two_mass_oscillator(ck=1e5, dk=1e3)["S2"]
    st = cosim.Stepper(sub, solver)
    u = np.array([[0.1, 0.0], [0.01, -3.0], [0.002, 0.5]])  # quadratic input polynomial
    st.do_step(0.0, 1e-3, u)
    snap = st.save()
    st.do_step(1e-3, 1e-3, u)
    first, stats1 = st.x.copy(), st.stats
    st.restore(snap)
    assert st.t == 1e-3
    st.do_step(1e-3, 1e-3, u)
    assert np.array_equal(st.x, first)
    assert st.stats["steps"] == stats1["steps"]


def test_stepper_validates():
    sub = models.two_mass_oscillator()["S1"]
    with pytest.raises(ValueError, match="x0"):
        cosim.Stepper(sub, cosim.RK4(), x0=[1.0])
    st = cosim.Stepper(sub, cosim.RK4())
    with pytest.raises(ValueError, match="u: expected shape"):
        st.do_step(0.0, 1e-3, np.zeros((2, 3)))
    with pytest.raises(ValueError, match="H"):
        st.do_step(0.0, -1.0, [0.0])


def lti_as_python(s, feedthrough):
    A, B, C, D = s.A, s.B, s.C, s.D
    return cosim.ODE(lambda t, x, u: A @ x + B @ u, lambda t, x, u: C @ x + D @ u, nx=s.nx, nu=s.nu, ny=s.ny,
                     x0=s.x0, name=s.name, feedthrough=feedthrough, inputs=s.inputs, outputs=s.outputs)


def test_python_callable_models_match_lti():
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    py = cosim.CoupledSystem([lti_as_python(s["S1"], False), lti_as_python(s["S2"], True)], s.connections)
    kw = dict(scheme="gauss-seidel", approximation=cosim.Lagrange(2), solver=cosim.RK4(substeps=4))
    a = cosim.simulate(s, 0.01, 1e-4, **kw)
    b = cosim.simulate(py, 0.01, 1e-4, **kw)
    np.testing.assert_allclose(b.X, a.X, rtol=1e-11, atol=1e-13 * np.max(np.abs(a.X)))
    assert b.stats["subsystems"]["S2"]["rhs_calls"] == a.stats["subsystems"]["S2"]["rhs_calls"]


RHS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                       ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)


def test_c_function_pointer_models():
    """CModel takes C function pointers (here ctypes callbacks: the same calling convention as compiled code)."""
    k, m = 4.0, 1.0

    @RHS
    def rhs(t, x, u, xdot, user):  # mass: v' = -F/m
        xdot[0] = -u[0] / m
        return 0

    @RHS
    def out(t, x, u, y, user):
        y[0] = x[0]
        return 0

    @RHS
    def bad(t, x, u, y, user):
        return 3

    spring = models.spring_mass(m, k)["spring"]
    mass = cosim.CModel(rhs, out, nx=1, nu=1, ny=1, x0=[0.0], name="mass", feedthrough=False)
    sysc = cosim.CoupledSystem([spring, mass], [cosim.connect("mass.y[0]", "spring.v"),
                                                cosim.connect("spring.F", "mass.u[0]")])
    ref = cosim.simulate(models.spring_mass(m, k), 2.0, 0.01, approximation=cosim.Lagrange(1), solver=cosim.RK4())
    res = cosim.simulate(sysc, 2.0, 0.01, approximation=cosim.Lagrange(1), solver=cosim.RK4())
    np.testing.assert_allclose(res.X, ref.X, rtol=1e-13, atol=1e-15)
    broken = cosim.CoupledSystem([spring, cosim.CModel(rhs, bad, nx=1, nu=1, ny=1, name="mass")],
                                 [cosim.connect("mass.y[0]", "spring.v"), cosim.connect("spring.F", "mass.u[0]")])
    with pytest.raises(cosim.SolverError, match="mass: output failed"):
        cosim.simulate(broken, 1.0, 0.1)


def test_python_exception_becomes_solver_error_with_partial_result():
    def rhs(t, x, u):
        if t > 0.35:
            raise RuntimeError("model exploded")
        return -x + u

    s = cosim.CoupledSystem([cosim.ODE(rhs, lambda t, x, u: x, nx=1, nu=1, ny=1, x0=[1.0], name="A",
                                       feedthrough=False),
                             cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[0.0], name="B")],
                            [cosim.connect("A.y[0]", "B.u[0]"), cosim.connect("B.y[0]", "A.u[0]")])
    with pytest.raises(cosim.SolverError, match="model exploded") as info:
        cosim.simulate(s, 1.0, 0.1, solver=cosim.RK4())
    part = info.value.result
    assert part is not None and 3 <= len(part.t) <= 5 and part.t[-1] <= 0.35 + 1e-12

    def wrong_shape(t, x, u):
        return np.zeros(3)
    s2 = cosim.CoupledSystem([cosim.ODE(wrong_shape, lambda t, x, u: x, nx=1, nu=0, ny=1, x0=[1.0], name="A")])
    with pytest.raises(cosim.SolverError, match="returned 3 values, expected 1"):
        cosim.simulate(s2, 1.0, 0.1, solver=cosim.Euler())


def test_divergence_error_carries_partial_result():
    s = models.two_mass_oscillator(ck=2e5, dk=200)
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(s, 5.0, 5e-3, scheme="jacobi", approximation=cosim.Lagrange(1), solver=cosim.Exact())
    part = info.value.result
    assert isinstance(part, cosim.Result) and 10 < len(part.t) < 1000 and np.all(np.isfinite(part.X))
    assert np.max(np.abs(part.X[-1])) > 1e3 * np.max(np.abs(part.X[:10]))  # it really grew
    assert "diverged" in str(info.value)
    with pytest.raises(cosim.DivergenceError):  # a user bound stops it early
        cosim.simulate(s, 5.0, 5e-3, scheme="jacobi", approximation=cosim.Lagrange(1), solver=cosim.Exact(),
                       divergence_bound=100.0)


def test_gauss_seidel_order_matters_and_any_number_of_subsystems():
    rng = np.random.default_rng(3)
    A = rng.normal(size=(5, 5)) - 3 * np.eye(5)
    x0 = rng.normal(size=5)
    s = models.linear_split(A, x0, groups=[[0], [1, 2], [3, 4]])
    exact = expm(A * 1.0) @ x0
    errs = {}
    for name, kw in {"J": dict(scheme="jacobi"), "GS": dict(scheme="gauss-seidel"),
                     "GSrev": dict(scheme="gauss-seidel", order=["S3", "S2", "S1"])}.items():
        for H in (0.01, 0.005):
            r = cosim.simulate(s, 1.0, H, approximation=cosim.Lagrange(1), solver=cosim.Exact(), **kw)
            errs[name, H] = np.max(np.abs(r.X[-1] - exact))
    for name in ("J", "GS", "GSrev"):
        assert 3.5 < errs[name, 0.01] / errs[name, 0.005] < 4.5  # order 2 with three subsystems
    assert errs["GS", 0.01] != errs["GSrev", 0.01] != errs["J", 0.01]


def test_constant_offsets_and_gains():
    """u = L y + r with a constant source: x' = -x + 2 y_other + 1."""
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[0.0], name="a")
    s = cosim.CoupledSystem([a], [cosim.connect(1.0, "a.u[0]"), cosim.connect("a.y[0]", "a.u[0]", gain=-1.0)])
    mono = cosim.simulate_monolithic(s, 1.0, 0.1)
    np.testing.assert_allclose(mono.X[:, 0], 0.5 * (1 - np.exp(-2 * mono.t)), rtol=1e-12, atol=1e-15)
    res = cosim.simulate(s, 1.0, 1e-3, approximation=cosim.Lagrange(2), solver=cosim.Exact(), startup="kraft")
    np.testing.assert_allclose(res.X[-1, 0], mono.X[-1, 0], rtol=1e-8)


@pytest.mark.parametrize("impulse", [False, True])
def test_nonlinear_dual_mass_oscillator_converges(impulse):
    """genser2020 §10.2 (progressive coupling, S2 with feed-through) and §10.3 (impulses on m1). With impulses the
    integrators use genser's explicit Euler with δt = 1e-5 s, which applies each impulse during one micro step."""
    s = models.two_mass_oscillator(coupling="force/displacement", nonlinear=True, impulse=impulse)
    solver = cosim.Euler(h=1e-5) if impulse else cosim.CVODE(rtol=1e-10, atol=1e-12)
    ref = cosim.simulate_monolithic(s, 0.12, 1e-4, solver=solver)
    e = [cosim.simulate(s, 0.12, H, scheme="gauss-seidel", approximation=cosim.Lagrange(1), solver=solver)
         .error_to(ref)["max_rel"] for H in (4e-4, 2e-4, 1e-4)]
    assert e[2] < 2e-3 and 3.0 < e[0] / e[1] < 5.0 and 3.0 < e[1] / e[2] < 5.0  # second order
    if impulse:  # the kick of about 0.5 sin(10 t) m/s on m1 at t = 0.05 and 0.1 (genser2020.md §10.3)
        v = ref.x["S1"][:, 1]
        for tk in (0.05, 0.1):
            i = np.searchsorted(ref.t, tk - 1e-12)
            kick = v[i + 1] - v[i]
            assert 0.8 * 0.5 * np.sin(10 * tk) < kick < 1.2 * 0.5 * np.sin(10 * tk)


# --- bad input -------------------------------------------------------------------------------------------------

def test_bad_arguments_raise_named_errors():
    s = models.two_mass_oscillator()
    with pytest.raises(ValueError, match="H"):
        cosim.simulate(s, 1.0, 0.0)
    with pytest.raises(ValueError, match="H"):
        cosim.simulate(s, 1.0, -1e-3)
    with pytest.raises(ValueError, match="H"):
        cosim.simulate(s, 1.0, math.nan)
    with pytest.raises(ValueError, match="t_end"):
        cosim.simulate(s, -1.0, 1e-3)
    with pytest.raises(TypeError, match="t_end"):
        cosim.simulate(s, "1", 1e-3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'schema'"):
        cosim.simulate(s, 1.0, 1e-3, schema="jacobi")
    with pytest.raises(ValueError, match="scheme"):
        cosim.simulate(s, 1.0, 1e-3, scheme="newton")
    with pytest.raises(ValueError, match="update"):
        cosim.simulate(s, 1.0, 1e-3, update="sometimes")
    with pytest.raises(ValueError, match="startup"):
        cosim.simulate(s, 1.0, 1e-3, startup="fast")
    with pytest.raises(TypeError, match="approximation"):
        cosim.simulate(s, 1.0, 1e-3, approximation=3)
    with pytest.raises(TypeError, match="solver"):
        cosim.simulate(s, 1.0, 1e-3, solver=3)
    with pytest.raises(ValueError, match="order"):
        cosim.simulate(s, 1.0, 1e-3, scheme="gauss-seidel", order=["S1", "S1"])
    with pytest.raises(ValueError, match="x0"):
        cosim.simulate(s, 1.0, 1e-3, x0=[1.0, 2.0])
    with pytest.raises(ValueError, match="x0"):
        cosim.simulate(s, 1.0, 1e-3, x0=[math.nan, 0, 0, 0])
    with pytest.raises(ValueError, match="Exact"):
        cosim.simulate(models.two_mass_oscillator(nonlinear=True), 1.0, 1e-3, solver=cosim.Exact())
    with pytest.raises(ValueError, match="rtol"):
        cosim.CVODE(rtol=-1)
    with pytest.raises(ValueError, match="substeps"):
        cosim.RK4(substeps=0)
    with pytest.raises(TypeError, match="system"):
        cosim.simulate("S", 1.0, 1e-3)


def test_bad_models_and_connections():
    with pytest.raises(ValueError, match="ck"):
        models.two_mass_oscillator(ck=math.nan)
    with pytest.raises(ValueError, match="m1"):
        models.two_mass_oscillator(m1=0.0)
    with pytest.raises(ValueError, match="coupling"):
        models.two_mass_oscillator(coupling="force/flux")
    with pytest.raises(ValueError, match="x0"):
        models.two_mass_oscillator(x0=[1, 2])
    with pytest.raises(ValueError, match="B: expected 2 rows"):
        cosim.LTI(np.eye(2), np.ones((3, 1)), np.eye(2))
    with pytest.raises(ValueError, match="A: must be square"):
        cosim.LTI(np.ones((2, 3)), np.ones((2, 1)), np.eye(2))
    with pytest.raises(ValueError, match="NaN"):
        cosim.LTI([[math.nan]], [[1.0]], [[1.0]])
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="a")
    b = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="b")
    with pytest.raises(ValueError, match="unknown subsystem 'c'"):
        cosim.CoupledSystem([a, b], [cosim.connect("c.y[0]", "a.u[0]")])
    with pytest.raises(ValueError, match=r"index out of range"):
        cosim.CoupledSystem([a, b], [cosim.connect("b.y[1]", "a.u[0]")])
    with pytest.raises(ValueError, match="unknown output b.force"):
        cosim.CoupledSystem([a, b], [cosim.connect("b.force", "a.u[0]")])
    with pytest.raises(ValueError, match="expected an input"):
        cosim.CoupledSystem([a, b], [cosim.connect("b.y[0]", "a.y[0]")])
    with pytest.raises(ValueError, match="names must be unique"):
        cosim.CoupledSystem([a, a], [])
    with pytest.raises(TypeError, match="rhs"):
        cosim.ODE(3, lambda t, x, u: x, nx=1, nu=0, ny=1)
    with pytest.raises(ValueError, match="NULL"):
        cosim.CModel(0, 0, nx=1, nu=0, ny=1)
    with pytest.raises(ValueError, match="gain"):
        cosim.connect("a.y[0]", "b.u[0]", gain=math.inf)


def test_algebraic_loop_that_is_singular_is_reported():
    """y_a = x_a + u_a, y_b = x_b + u_b, u_a = y_b, u_b = y_a: I - D L is singular (ill-posed coupling)."""
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], x0=[1.0], name="a")
    b = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], name="b")
    s = cosim.CoupledSystem([a, b], [cosim.connect("a.y[0]", "b.u[0]"), cosim.connect("b.y[0]", "a.u[0]")])
    with pytest.raises(cosim.SolverError, match="singular"):
        cosim.simulate(s, 1.0, 0.1, solver=cosim.RK4())


def test_result_layout_and_error_metrics():
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    r = cosim.simulate(s, 0.01, 1e-4, approximation=cosim.Lagrange(1), solver=cosim.Exact())
    assert r.t.shape == (101,) and r.x["S1"].shape == (101, 2) and r.y["S2"].shape == (101, 1)
    assert r.u["S2"].shape == (101, 2) and r.t[-1] == 0.01
    np.testing.assert_array_equal(r.u["S2"], r.y["S1"])  # u2 = y1 after the consistent update
    ref = cosim.simulate_monolithic(s, 0.01, 1e-4)
    e = r.error_to(ref)
    assert set(e) == {"max_abs", "max_rel", "final_abs", "nrmse", "per_subsystem",
                      "per_signal", "eps_mono", "eps_mono_per_subsystem"}  # per-signal keys: tests/test_results.py
    assert 0 < e["max_rel"] < 1e-3 and e["max_abs"] == max(e["per_subsystem"].values())
    finer = cosim.simulate_monolithic(s, 0.01, 1e-5)  # contains the co-simulation grid: picked, not interpolated
    assert r.error_to(finer)["max_abs"] == pytest.approx(e["max_abs"], rel=1e-9)
    other = cosim.simulate_monolithic(s, 0.01, 3e-5)  # another grid: cubic-spline interpolated reference
    assert r.error_to(other)["max_abs"] == pytest.approx(e["max_abs"], rel=1e-2)
    assert r.stats["macro_steps"] == 100 and r.stats["subsystems"]["S1"]["steps"] == 100


def test_low_level_entry_rejects_garbage_without_crashing():
    """cosim._core is reachable from Python too: malformed specs raise, they never crash."""
    from cosim import _core
    s = models.two_mass_oscillator()
    specs = [x.spec() for x in s.subsystems]
    solver = cosim.RK4().spec()
    x0 = np.zeros(4)
    ci, co, cg = np.array([0, 1, 2]), np.array([2, 0, 1]), np.ones(3)
    from cosim.simulate import _run_options
    good = _run_options(approx_k=1, t_end=0.01, H=1e-3, divergence_bound=0.0)
    assert _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), good, False)["status"] == 0
    missing = dict(good)
    del missing["H"]
    bad_calls = [
        lambda: _core.run(specs, [solver], x0, ci, co, cg, np.zeros(3), good, False),
        lambda: _core.run(specs, [solver] * 2, np.zeros(3), ci, co, cg, np.zeros(3), good, False),
        lambda: _core.run(specs, [solver] * 2, x0, np.array([0, 1, 7]), co, cg, np.zeros(3), good, False),
        lambda: _core.run(specs, [solver] * 2, x0, np.array([0, 1, -1]), co, cg, np.zeros(3), good, False),
        lambda: _core.run(specs, [solver] * 2, x0, ci, co, np.ones(2), np.zeros(3), good, False),
        lambda: _core.run(specs, [dict(kind=9, substeps=1)] * 2, x0, ci, co, cg, np.zeros(3), good, False),
        lambda: _core.run([("lti", "S", np.eye(2), np.ones((3, 1)), np.eye(2), np.zeros((2, 1)))] * 2,
                          [solver] * 2, x0, ci, co, cg, np.zeros(3), good, False),
        lambda: _core.run([("nonsense", "S")] * 2, [solver] * 2, x0, ci, co, cg, np.zeros(3), good, False),
        lambda: _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), missing, False),
        lambda: _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), dict(good, step_finished=3), False),
    ]
    for call in bad_calls:
        with pytest.raises((ValueError, TypeError)):
            call()
    for opts in [dict(good, approx_kind=7),                          # unknown approximation kind
                 dict(good, approx_k=9),                             # degree too high
                 dict(good, scheme=dict(kind="no-such-scheme")),    # unknown scheme
                 dict(good, scheme=dict(kind="gauss-seidel"), order=np.array([0, 0])),  # order not a permutation
                 dict(good, startup=1, startup_factor=0.0),          # start-up factor 0 would never advance
                 dict(good, H=-1e-3)]:                               # negative H
        try:
            out = _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), opts, False)
        except ValueError:
            continue
        assert out["status"] == 1 and out["message"]


@pytest.mark.parametrize("coupling", ["prestep", "mbcorr"])
@pytest.mark.parametrize("key", ["Sy", "Su", "Sd", "moesp_cfg", "a0", "b0"])
def test_low_level_entry_checks_the_coupling_arrays_lengths(coupling, key):
    """A coupling spec's arrays of the wrong length passed to _core.run directly are refused with their names, not
    read past their end (the pre-step's and MBCorr's given IJs, MOESP settings and RLS start parameters)."""
    from cosim import _core
    from cosim.simulate import _run_options
    s = models.two_mass_oscillator()   # units with 1 and 2 outputs, 2 and 1 inputs: Sy 1 + 4, Su/Sd 2 + 2 entries
    specs, solver = [x.spec() for x in s.subsystems], cosim.Exact().spec()
    x0, ci, co, cg = np.zeros(4), np.array([0, 1, 2]), np.array([2, 0, 1]), np.ones(3)
    source = {"Sy": 0, "Su": 0, "Sd": 0, "moesp_cfg": 2, "a0": 1, "b0": 1}[key]
    spec = dict(kind=coupling, variant=1, ij_source=source, Sy=np.zeros(5), Su=np.zeros(4), Sd=np.zeros(4),
                moesp_cfg=np.tile([8.0, 2.0, 1.0, 0.0], 2), a0=np.zeros(3), b0=np.zeros(4), rls_lambda=1.0,
                rls_P0=1e4)
    opts = _run_options(approx_k=0, t_end=0.002, H=1e-3, divergence_bound=0.0, coupling=spec)
    out = _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), opts, False)   # the right lengths run
    assert out["status"] == 0, out["message"]
    short = dict(opts, coupling=dict(spec, **{key: np.zeros(1)}))
    with pytest.raises(ValueError, match=key):
        _core.run(specs, [solver] * 2, x0, ci, co, cg, np.zeros(3), short, False)


def test_explicit_nonuniform_grid_and_t_eval():
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    rng = np.random.default_rng(5)
    grid = np.concatenate([[0.0], np.cumsum(rng.uniform(0.5e-4, 1.5e-4, 200))])
    res = cosim.simulate(s, grid[-1], grid=grid, scheme="gauss-seidel", approximation=cosim.Lagrange(2),
                         solver=cosim.Exact())
    np.testing.assert_array_equal(res.t, grid)
    ref = cosim.simulate_monolithic(s, grid[-1], t_eval=res.t)
    np.testing.assert_array_equal(ref.t, grid)
    A = models.monolithic_matrix(ck=1e5, dk=1e3)
    exact = expm(A * grid[-1]) @ np.array([0.1, 0, 0, 0])
    assert np.max(np.abs(ref.X[-1] - exact)) <= 1e-10 * np.max(np.abs(exact))
    assert res.error_to(ref)["max_rel"] < 1e-3
    # halving every step of a non-uniform grid: the global order k+1 = 3 of Lagrange k = 2 still holds after
    # the start-up (degree reduced on the first two steps costs O(H^2) there: compare with the start-up made fine)
    e = []
    for refine in (1, 2, 4):
        g = np.concatenate([[0.0, 1e-9, 2e-9], 2e-9 + np.cumsum(np.repeat(np.diff(grid) / refine, refine))])
        r = cosim.simulate(s, g[-1], grid=g, approximation=cosim.Lagrange(2), solver=cosim.Exact())
        e.append(r.error_to(cosim.simulate_monolithic(s, g[-1], t_eval=r.t))["max_rel"])
    assert 6.5 < e[0] / e[1] < 9.5 and 6.5 < e[1] / e[2] < 9.5
    with pytest.raises(ValueError, match="grid"):
        cosim.simulate(s, 1.0, grid=[0.0, 0.5, 0.4, 1.0])
    with pytest.raises(TypeError, match="H"):
        cosim.simulate(s, 1.0, 1e-3, grid=[0.0, 1.0])
    with pytest.raises(ValueError, match="t_end"):
        cosim.simulate(s, 1.0, grid=[0.0, 0.5])


def test_cvode_keeps_history_across_smooth_extripol_c1_inputs():
    """restart='auto': with EXTRIPOL-C1 under Jacobi the input is C1 at macro points, CVODE need not restart
    (busch2016 §1). Same result to the integrator tolerance, far fewer right-hand-side calls; with Lagrange inputs
    (kinks at macro points) 'auto' still restarts and changes nothing."""
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    ref = cosim.simulate_monolithic(s, 0.1, 1e-4)
    out = {}
    for approx in (cosim.ExtrapolatedInterpolation(2, 1), cosim.Lagrange(2)):
        for restart in ("always", "auto"):
            r = cosim.simulate(s, 0.1, 1e-4, scheme="jacobi", approximation=approx,
                               solver=cosim.CVODE(rtol=1e-9, atol=1e-11, restart=restart))
            out[repr(approx), restart] = (r, sum(v["rhs_calls"] for v in r.stats["subsystems"].values()))
    c1 = repr(cosim.ExtrapolatedInterpolation(2, 1))
    (ra, na), (rb, nb) = out[c1, "always"], out[c1, "auto"]
    assert nb < 0.5 * na
    assert np.max(np.abs(ra.X - rb.X)) <= 1e-5 * np.max(np.abs(ra.X))
    assert abs(ra.error_to(ref)["max_rel"] - rb.error_to(ref)["max_rel"]) <= 1e-5
    lag = repr(cosim.Lagrange(2))
    assert np.array_equal(out[lag, "always"][0].X, out[lag, "auto"][0].X)


def test_runs_in_parallel_threads_give_identical_results():
    """The master releases the GIL and keeps no global state: a DoE can run simulations in Python threads."""
    from concurrent.futures import ThreadPoolExecutor

    def run(ck):
        s = models.two_mass_oscillator(ck=ck, dk=1e3)
        return cosim.simulate(s, 0.05, 1e-4, approximation=cosim.Lagrange(1), solver=cosim.CVODE(rtol=1e-8)).X

    cks = np.logspace(4, 5.5, 6)
    serial = [run(c) for c in cks]
    with ThreadPoolExecutor(3) as ex:
        parallel = list(ex.map(run, cks))
    assert all(np.array_equal(a, b) for a, b in zip(serial, parallel))


def test_monolithic_cvode_does_not_restart_at_output_points():
    """The monolithic input never changes, so CVODE integrates through the output points: the work barely depends
    on how often we record (a regression test: restarting there costs 10x)."""
    s = models.two_mass_oscillator(ck=1e5, dk=1e3)
    calls = []
    for H in (1e-2, 1e-4):
        r = cosim.simulate_monolithic(s, 0.2, H, solver=cosim.CVODE(rtol=1e-8, atol=1e-10))
        calls.append(r.stats["subsystems"]["monolithic"]["rhs_calls"])
    assert calls[1] < 1.5 * calls[0]
