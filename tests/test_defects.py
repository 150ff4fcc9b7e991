"""Regression tests for the API defects found by fuzzing the public API (issue 8, parts 2 and 8).

Each defect used to crash (segfault, heap over-read), hang, invoke undefined behaviour or silently drop data; each
test pins the clear exception that replaces it. Calls that used to crash or hang run in a subprocess with a timeout,
so a regression fails the test instead of killing the test run."""
import ctypes
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import cosim
from cosim import _core
from cosim.solvers import MAX_MICRO_STEPS

_sim = sys.modules["cosim.simulate"]


def _lti(nx=1, name="S"):
    return cosim.LTI(-np.eye(nx), np.ones((nx, 1)), np.ones((1, nx)), name=name)


def _ode(rhs, output=None, nx=1, nu=1, ny=1):
    return cosim.ODE(rhs, output or (lambda t, x, u: x[:ny]), nx, nu, ny, x0=np.ones(nx), feedthrough=False)


def _run(code, timeout=60):
    """Run code in a fresh interpreter; return (returncode, stdout + stderr)."""
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout + p.stderr


# ----------------------------------------------------------------------------- 1. one C -> Python error mapping

def test_stepper_callback_failure_is_solver_error():
    def rhs(t, x, u):
        raise KeyError("boom")
    for solver in (cosim.RK4(), cosim.Euler(), cosim.CVODE()):
        st = cosim.Stepper(_ode(rhs), solver)
        with pytest.raises(cosim.SolverError, match="boom"):
            st.do_step(0.0, 0.1, [0.0])


def test_stepper_wrong_callback_shape_is_solver_error():
    st = cosim.Stepper(_ode(lambda t, x, u: np.zeros(3)), cosim.RK4())
    with pytest.raises(cosim.SolverError, match="returned 3 values, expected 1"):
        st.do_step(0.0, 0.1, [0.0])


def test_stepper_output_failure_is_solver_error():
    def out(t, x, u):
        raise ZeroDivisionError("no output")
    st = cosim.Stepper(_ode(lambda t, x, u: -x, out), cosim.RK4())
    with pytest.raises(cosim.SolverError, match="no output"):
        st.output([0.0])


def test_stepper_nan_state_is_divergence_error():
    st = cosim.Stepper(_ode(lambda t, x, u: x * np.nan), cosim.RK4())
    with pytest.raises(cosim.DivergenceError, match="non-finite"):
        st.do_step(0.0, 0.1, [0.0])
    # an exploding explicit Euler step: finite H, state overflows to inf
    st = cosim.Stepper(cosim.LTI([[1e308]], [[0.0]], [[1.0]], x0=[1e10]), cosim.Euler())
    with pytest.raises(cosim.DivergenceError):
        st.do_step(0.0, 1.0, [0.0])


def test_cvode_failure_is_solver_error():
    # finite-time blow-up x' = x^2 from x(0) = 1 at t = 1: CVODE cannot pass it within max_steps
    st = cosim.Stepper(_ode(lambda t, x, u: x * x), cosim.CVODE(max_steps=50))
    with pytest.raises(cosim.CosimError) as e:
        st.do_step(0.0, 2.0, [0.0])
    assert isinstance(e.value, (cosim.SolverError, cosim.DivergenceError)) and str(e.value)


def test_error_codes_keep_their_builtin_types():
    # CS_ERR_ARG -> ValueError (C validation), CS_ERR_LINALG -> ArithmeticError (as before)
    with pytest.raises(ValueError, match="substeps"):
        _core.stepper_new(_lti().spec(), dict(kind=1, substeps=MAX_MICRO_STEPS + 1), np.zeros(1), 0.0)
    with pytest.raises(ArithmeticError, match="singular"):
        _core.solve(np.zeros((2, 2)), np.ones((2, 1)))


# ----------------------------------------------------------------------------- 2. Stepper.restore

def test_restore_snapshot_of_other_size_is_value_error():
    small, big = cosim.Stepper(_lti(1), cosim.RK4()), cosim.Stepper(_lti(3), cosim.RK4())
    with pytest.raises(ValueError, match=r"state: .*nx = 3.*nx = 1"):
        small.restore(big.save())
    with pytest.raises(ValueError, match="state"):
        big.restore(small.save())
    # a snapshot of the same sizes still restores exactly
    other = cosim.Stepper(_lti(1, name="T"), cosim.Euler())
    other.do_step(0.0, 0.5, [1.0])
    small.restore(other.save())
    assert small.t == other.t and np.array_equal(small.x, other.x)


@pytest.mark.parametrize("bad", [None, 3, "state", object(), {"t": 0.0}])
def test_restore_non_snapshot_is_type_error(bad):
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(TypeError, match="^state: expected a snapshot"):
        st.restore(bad)


def test_restore_rejects_other_capsules():
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(TypeError, match="^state:"):
        st.restore(st._cap)  # a capsule, but not a snapshot


# ----------------------------------------------------------------------------- 3. CModel addresses

@pytest.mark.parametrize("addr", [-1, -2**63, 2**64, 2**64 + 5, 2**200])
def test_cmodel_rejects_out_of_range_addresses(addr):
    with pytest.raises(ValueError, match="^rhs: address"):
        cosim.CModel(addr, 1234, 1, 1, 1)
    with pytest.raises(ValueError, match="^output: address"):
        cosim.CModel(1234, addr, 1, 1, 1)
    with pytest.raises(ValueError, match="^user_data: address"):
        cosim.CModel(1234, 1234, 1, 1, 1, user_data=addr)


def test_cmodel_rejects_null_and_non_pointers():
    with pytest.raises(ValueError, match="rhs: NULL"):
        cosim.CModel(0, 1234, 1, 1, 1)
    with pytest.raises(TypeError, match="output"):
        cosim.CModel(1234, "0x1234", 1, 1, 1)
    with pytest.raises(TypeError, match="rhs"):
        cosim.CModel(True, 1234, 1, 1, 1)


@pytest.mark.parametrize("field,addr", [(6, -1), (6, 2**64), (7, -5), (8, 2**65), (6, 0), (7, 0)])
def test_c_spec_parser_checks_addresses(field, addr):
    """The C side checks too (a spec built without cosim.CModel): no wrap-around to a wild pointer."""
    spec = ["cfunc", "S", 1, 1, 1, 1, 1234, 1234, 0]
    spec[field] = addr
    name = {6: "rhs", 7: "output", 8: "user_data"}[field]
    with pytest.raises(ValueError, match=f"^{name}: "):
        _core.stepper_new(tuple(spec), cosim.RK4().spec(), np.zeros(1), 0.0)


def test_cmodel_valid_pointer_still_runs():
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                             ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)

    @proto
    def rhs(t, x, u, xdot, ud):
        xdot[0] = -x[0] + u[0]
        return 0

    @proto
    def out(t, x, u, y, ud):
        y[0] = x[0]
        return 0

    m = cosim.CModel(rhs, out, 1, 1, 1, x0=[1.0], feedthrough=False)
    st = cosim.Stepper(m, cosim.RK4(substeps=10))
    st.do_step(0.0, 0.1, [0.0])
    assert st.x[0] == pytest.approx(np.exp(-0.1), rel=1e-8)


# ----------------------------------------------------------------------------- 4. micro-step cap

def test_fixed_step_cap_in_python():
    assert MAX_MICRO_STEPS == 10**7
    for cls in (cosim.Euler, cosim.RK4):
        with pytest.raises(ValueError, match="substeps: .*cap"):
            cls(substeps=2**31 - 1)
        with pytest.raises(ValueError, match="substeps: .*cap"):
            cls(substeps=MAX_MICRO_STEPS + 1)
        assert cls(substeps=MAX_MICRO_STEPS).micro_steps(1.0) == MAX_MICRO_STEPS
        with pytest.raises(ValueError, match="h: .*cap of 10000000"):
            cls(h=1e-12).micro_steps(1.0)
        with pytest.raises(ValueError, match="h: .*cap"):
            cls(h=1e-300).micro_steps(1e300)   # H/h overflows to inf
        assert cls(h=0.25).micro_steps(1.0) == 4
        assert cls(h=1e-7).micro_steps(1.0) == MAX_MICRO_STEPS


@pytest.mark.parametrize("h", [1e-300, 1e-12, 5e-324])
def test_tiny_micro_step_is_rejected_by_stepper(h):
    st = cosim.Stepper(_lti(1), cosim.Euler(h=h))
    with pytest.raises(ValueError, match="^h: .*cap"):
        st.do_step(0.0, 1.0, [0.0])
    assert st.t == 0.0 and st.stats["steps"] == 0


@pytest.mark.parametrize("kind", [0, 1])
def test_micro_step_cap_in_c(kind):
    """The C check (before the double -> long conversion), reached without the Python validation."""
    spec = _lti(1).spec()
    with pytest.raises(ValueError, match="substeps: 2147483647 exceeds the cap of 10000000"):
        _core.stepper_new(spec, dict(kind=kind, substeps=2**31 - 1), np.zeros(1), 0.0)
    for h in (1e-300, 1e-12, 5e-324):
        cap = _core.stepper_new(spec, dict(kind=kind, substeps=1, h=h), np.zeros(1), 0.0)
        with pytest.raises(ValueError, match="^h: .*cap of 10000000"):
            _core.stepper_step(cap, 0.0, 1.0, np.zeros((1, 1)))
    cap = _core.stepper_new(spec, dict(kind=kind, substeps=1, h=0.5), np.zeros(1), 0.0)
    _core.stepper_step(cap, 0.0, 1.0, np.ones((1, 1)))
    assert _core.stepper_get(cap)[2]["steps"] == 2


def test_tiny_micro_step_in_simulate_does_not_hang():
    """cosim.simulate with Euler(h=1e-12) used to run 1e10 micro steps per macro step; now it stops at once."""
    rc, out = _run("""
        import numpy as np, cosim
        s1 = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="S1", x0=[1.0])
        s2 = cosim.LTI([[-2.0]], [[1.0]], [[1.0]], name="S2")
        sys_ = cosim.CoupledSystem([s1, s2], [cosim.connect("S1.y[0]", "S2.u[0]"), cosim.connect("S2.y[0]", "S1.u[0]")])
        for h in (1e-12, 1e-300):
            try:
                cosim.simulate(sys_, H=0.1, t_end=1.0, solver=cosim.Euler(h=h))
                print("RETURNED")
            except (ValueError, cosim.CosimError) as e:
                print(type(e).__name__, str(e)[:200])
    """, timeout=60)
    assert rc == 0, out
    lines = out.strip().splitlines()
    assert len(lines) == 2 and all("cap" in ln and "RETURNED" not in ln for ln in lines), out


# ----------------------------------------------------------------------------- 5. non-finite T, H

@pytest.mark.parametrize("T,H,name", [(np.nan, 0.1, "T"), (np.inf, 0.1, "T"), (-np.inf, 0.1, "T"),
                                      (0.0, np.nan, "H"), (0.0, np.inf, "H"), (0.0, -0.1, "H"), (0.0, 0.0, "H"),
                                      (1e308, 1e308, "H")])
def test_do_step_rejects_non_finite_times(T, H, name):
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(ValueError, match=f"^{name}: "):
        st.do_step(T, H, [0.0])
    with pytest.raises(ValueError, match=f"^{name}: "):
        _core.stepper_step(st._cap, T, H, np.zeros((1, 1)))
    assert st.t == 0.0


@pytest.mark.parametrize("T,H,name,exc", [("0", 0.1, "T", TypeError), (0.0, None, "H", TypeError),
                                          (0.0, 1j, "H", TypeError), (10**400, 0.1, "T", ValueError)])
def test_do_step_rejects_non_real_times(T, H, name, exc):
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(exc, match=f"^{name}: "):
        st.do_step(T, H, [0.0])


def test_stepper_t0_and_u_validation():
    with pytest.raises(ValueError, match="^t0: "):
        cosim.Stepper(_lti(1), cosim.RK4(), t0=np.inf)
    with pytest.raises(TypeError, match="^t0: "):
        cosim.Stepper(_lti(1), cosim.RK4(), t0="0")
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(ValueError, match="^u: .*NaN"):
        st.do_step(0.0, 0.1, [np.nan])
    with pytest.raises(TypeError, match="^u: "):
        st.do_step(0.0, 0.1, ["a"])


# ----------------------------------------------------------------------------- 6. complex input

def test_complex_arrays_are_rejected_by_constructors():
    A = np.array([[-1.0 + 1e-3j]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no ComplexWarning on the way either
        with pytest.raises(TypeError, match="^A: .*complex"):
            cosim.LTI(A, [[1.0]], [[1.0]])
        with pytest.raises(TypeError, match="^B: .*complex"):
            cosim.LTI([[-1.0]], [[1.0j]], [[1.0]])
        with pytest.raises(TypeError, match="^C: .*complex"):
            cosim.LTI([[-1.0]], [[1.0]], [[1.0 + 0j]])
        with pytest.raises(TypeError, match="^D: .*complex"):
            cosim.LTI([[-1.0]], [[1.0]], [[1.0]], D=[[2j]])
        with pytest.raises(TypeError, match="^x0: .*complex"):
            cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[1j])
        with pytest.raises(TypeError, match="^x0: .*complex"):
            _ode(lambda t, x, u: -x).with_x0(np.array([1 + 2j]))
        with pytest.raises(TypeError, match="^x0: .*complex"):
            cosim.Stepper(_lti(1), cosim.RK4(), x0=[1j])
        with pytest.raises(TypeError, match="^u: .*complex"):
            cosim.Stepper(_lti(1), cosim.RK4()).do_step(0.0, 0.1, [1j])


def test_complex_arrays_are_rejected_in_c():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="^A: .*complex"):
            _core.stepper_new(("lti", "S", np.array([[1j]]), np.ones((1, 1)), np.ones((1, 1)), np.zeros((1, 1))),
                              cosim.RK4().spec(), np.zeros(1), 0.0)
        with pytest.raises(TypeError, match="^x0: .*complex"):
            _core.stepper_new(_lti(1).spec(), cosim.RK4().spec(), np.array([1j]), 0.0)
        with pytest.raises(TypeError, match="^u: .*complex"):
            st = cosim.Stepper(_lti(1), cosim.RK4())
            _core.stepper_step(st._cap, 0.0, 0.1, np.array([[1j]]))
        with pytest.raises(TypeError, match="^x0: "):
            _core.stepper_new(_lti(1).spec(), cosim.RK4().spec(), np.array(["1.0"]), 0.0)


def test_real_inputs_still_convert():
    s = cosim.LTI(np.array([[-1]], dtype=np.int32), [[True]], [1], D=0, x0=np.array([2], dtype=np.float32))
    assert s.A.dtype == float and s.x0[0] == 2.0
    st = cosim.Stepper(s, cosim.RK4(), x0=[np.float16(1.0)])
    st.do_step(0, 0.1, np.array([0], dtype=np.int64))
    assert np.isfinite(st.x).all()


def test_huge_integers_are_value_errors():
    with pytest.raises(ValueError, match="^A: "):
        cosim.LTI([[10**400]], [[1.0]], [[1.0]])
    with pytest.raises(ValueError, match="^x0: "):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], x0=[10**400])


# ----------------------------------------------------------------------------- 7. RLS sizes

@pytest.mark.parametrize("kw", [dict(n_b=2**30), dict(n_a=2**31 - 1, n_b=0), dict(n_u=2**20, n_b=2**20),
                                dict(n_a=4097, n_b=0)])
def test_rls_size_cap_in_python(kw):
    args = dict(n_y=1, n_u=1)
    args.update(kw)
    with pytest.raises(ValueError, match="n_params .* exceeds the cap of 4096"):
        cosim.sysid.RLS(**args)


def test_rls_covariance_cap_in_python():
    with pytest.raises(ValueError, match="^n_y: .*cap"):
        cosim.sysid.RLS(n_y=2**20, n_u=1, n_a=1, n_b=1000)
    r = cosim.sysid.RLS(n_y=2, n_u=3, n_a=2, n_b=2)   # ordinary sizes still work
    assert r.covariance.shape == (2, 8, 8)


@pytest.mark.parametrize("ny,nu,na,nb", [(1, 1, 1, 2**30), (1, 2**31 - 1, 0, 2**31 - 1), (1, 1, 2**31 - 1, 1),
                                         (2**31 - 1, 1, 1, 1000), (1, 1, 4096, 1)])
def test_rls_size_cap_in_c(ny, nu, na, nb):
    """The C check uses 64-bit arithmetic: na + nu nb and ny np^2 can no longer wrap to a small allocation."""
    with pytest.raises(ValueError, match="RLS (orders|sizes): .*cap"):
        _core.sysid_rls_new(ny, nu, na, nb, 1.0, 1.0, 0.0)


def test_rls_state_counters_are_bounded():
    r = cosim.sysid.RLS(1, 1)
    st = r.save()
    st["state"][-1] = 1e300   # a counter far outside the range of a long
    with pytest.raises(ValueError, match="state: sample counters"):
        r.load(st)


def test_sysid_rejects_complex_input():
    """Found by the fuzz: the sysid converters cast complex data to float (ComplexWarning, imaginary part lost)."""
    rng = np.random.default_rng(0)
    u, y = rng.normal(size=(40, 1)), rng.normal(size=(40, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="^u: .*complex"):
            cosim.sysid.moesp(u + 1j, y, order=1, block_rows=3)
        with pytest.raises(TypeError, match="^D_prev: .*complex"):
            cosim.sysid.ij_discrete(np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.zeros((1, 1)), form="thesis",
                                    D_prev=np.zeros((1, 1), complex))
        r = cosim.sysid.RLS(1, 1)
        with pytest.raises(TypeError, match="^u: .*complex"):
            r.update([1j], [1.0])          # reaches the C converter (cs_py_darray)
        with pytest.raises(TypeError, match="^y: .*complex"):
            r.update_many(u, y * 1j)
        with pytest.raises(TypeError, match="^t: .*complex"):
            cosim.sysid.switch_factor(np.array([0.5j]), 0.0, 1.0)


def test_moesp_size_caps():
    """Found by the fuzz: MOESPWindow(1, 1, 2**31) overflowed the C int argument (OverflowError); sizes whose
    Hankel matrix overflows int arithmetic in C or cannot be allocated are now rejected up front."""
    with pytest.raises(ValueError, match="^window: .*cap"):
        cosim.sysid.MOESPWindow(1, 1, 2**31)
    with pytest.raises(ValueError, match="^block_rows: .*cap of 4096"):
        cosim.sysid.MOESPWindow(1000, 1000, 10**4, block_rows=3)
    w = cosim.sysid.MOESPWindow(1, 1, 50, block_rows=3)   # ordinary sizes still work
    assert w.window == 50
    # the C bindings check in 64-bit arithmetic too (2 r (nu + ny) would wrap in int)
    with pytest.raises(ValueError, match="^block_rows: .*4294967296 rows"):
        _core.sysid_moesp_window_new(1, 1, 2**30, 2**31 - 1, 1)
    with pytest.raises(ValueError, match="^window: .*cap"):
        _core.sysid_moesp_window_new(1, 1, 3, 2**31 - 1)
    with pytest.raises(ValueError, match="^block_rows: "):
        _core.sysid_moesp(np.ones((10, 1)), np.ones((10, 1)), 2**30, 1, 0.0)


def test_resample_ratio_cap():
    """Found by the fuzz under UBSan: resample(ratio=1e300) converted floor(ratio) to int (float-cast-overflow)."""
    with pytest.raises(ValueError, match=r"^ratio: must be <= 1e\+06"):
        cosim.sysid.resample(0.5, [1.0], 1e300)
    with pytest.raises(ValueError, match=r"^ratio: must be in \(0, 1e\+06\], got 1e\+300"):
        _core.sysid_resample(np.ones(1), np.ones((1, 1)), 1e300)
    a, b = cosim.sysid.resample(0.5, [1.0], 2.5)   # (1 - f) a^q + f a^(q+1) with q = 2, f = 0.5
    assert a == pytest.approx(0.5 * 0.25 + 0.5 * 0.125)


def test_c_messages_format_numbers():
    """PyErr_Format has no %g: the bindings' messages with numbers are formatted with C printf."""
    st = cosim.Stepper(_lti(1), cosim.RK4())
    with pytest.raises(ValueError, match=r"^T: must be finite, got nan$"):
        _core.stepper_step(st._cap, np.nan, 0.1, np.zeros((1, 1)))
    with pytest.raises(ValueError, match=r"^H: must be positive and finite, got -0\.5$"):
        _core.stepper_step(st._cap, 0.0, -0.5, np.zeros((1, 1)))


@pytest.mark.parametrize("kw,name", [(dict(nx=1, nu=2**31, ny=1), "nu"), (dict(nx=1, nu=1, ny=2**31), "ny"),
                                     (dict(nx=1, nu=1, ny=2**24 + 1), "ny")])
def test_model_sizes_beyond_int_are_value_errors(kw, name):
    """Found by the fuzz: ODE sizes >= 2**31 made the C spec parser raise OverflowError (and sizes just below would
    have the C core allocate and fill n doubles); sizes are now checked against a cap of 2**24 with a ValueError."""
    f = lambda t, x, u: -x  # noqa: E731
    with pytest.raises(ValueError, match=f"^{name}: must be in 0..16777216"):
        cosim.Stepper(cosim.ODE(f, f, **kw), cosim.RK4())
    with pytest.raises(ValueError, match=f"^{name}: "):
        _core.stepper_new(("cfunc", "S", kw["nx"], kw["nu"], kw["ny"], 1, 1234, 1234, 0), cosim.RK4().spec(),
                          np.zeros(1), 0.0)


@pytest.mark.parametrize("make", [
    lambda v: cosim.StepControl(rtol=v), lambda v: cosim.ECCO(power_bonds=[("a", "b", "c", "d")], rtol=v),
    lambda v: cosim.Implicit(tol=v), lambda v: cosim.WaveformRelaxation(omega=v),
    lambda v: cosim.sysid.resample(np.array([0.5]), np.array([[1.0]]), v)], ids=["StepControl", "ECCO", "Implicit",
                                                                                "WaveformRelaxation", "resample"])
def test_integers_beyond_the_double_range_are_value_errors(make):
    """float(10**400) raises OverflowError; the shared check (cosim/_check.py) turns it into a ValueError naming
    the argument (found by the API fuzz)."""
    with pytest.raises(ValueError, match="finite"):
        make(10 ** 400)


@pytest.mark.parametrize("make,name", [
    (lambda v: cosim.models.two_mass_oscillator(ck=v), "ck"),
    (lambda v: cosim.models.quarter_truck(m_c=v), "m_c"),
    (lambda v: cosim.models.oscillator_chain(n_bodies=4, n_subsystems=2, masses=v), "masses"),
], ids=["two_mass", "quarter_truck", "chain"])
def test_model_parameters_use_the_shared_real_check(make, name):
    """The model builders take their scalar checks from cosim/_check.py: bool is refused as a TypeError, an integer
    beyond the double range and a non-positive value as ValueErrors, each naming the parameter."""
    with pytest.raises(TypeError, match=f"^{name}"):
        make(True)
    with pytest.raises(ValueError, match=f"^{name}.*finite"):
        make(10 ** 400)
    with pytest.raises(ValueError, match=f"^{name}"):
        make(-1.0)
