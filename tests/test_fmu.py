"""FMU units (issue 16): the two-mass oscillator halves as FMUs (tests/fmus/, FMI 2.0 CS+ME, FMI 3.0 CS), compiled
with the system C compiler at test time, against the same system of built-in units and against FMPy."""
import logging
import pathlib
import shutil
import sys
import zipfile

import numpy as np
import pytest

import cosim
from cosim.simulate import _simulate
from cosim import models

fmpy = pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402  (tests/fmus/build.py)

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)

CONNS = [("S2.F", "S1.F"), ("S1.x", "S2.x_in"), ("S1.v", "S2.v_in")]


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    d = tmp_path_factory.mktemp("fmus")
    out = {}
    for m in (1, 2):
        out[(m, 2)] = build.build_fmu(d, m, 2)
        out[(m, 3)] = build.build_fmu(d, m, 3)
        out[(m, "nostate")] = build.build_fmu(d, m, 2, kinds=("cs",), can_state=False)
        out[(m, "3me")] = build.build_fmu(d, m, 3, kinds=("cs", "me"))
        out[(m, "3iu")] = build.build_fmu(d, m, 3, intermediate=True)
    out["ball"] = build.build_bouncing_ball(d)
    out["nobinary"] = build.build_fmu(d, 1, 2, name="nobinary", binary=False)
    (d / "notzip.fmu").write_text("not a zip archive")
    out["notzip"] = d / "notzip.fmu"
    return out


def system(fmus, kind, fmi=2, starts1=None, starts2=None, key=None):
    a = cosim.FMU(fmus[(1, key or fmi)], name="S1", kind=kind, start_values=starts1)
    b = cosim.FMU(fmus[(2, key or fmi)], name="S2", kind=kind, start_values=starts2)
    return cosim.CoupledSystem([a, b], [cosim.connect(s, d) for s, d in CONNS])


def rel(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


REF = models.two_mass_oscillator()


# ---------------------------------------------------------------------------------------------------------------------
# the same results as built-in units

@pytest.mark.parametrize("solver", [cosim.RK4(substeps=10), cosim.Euler(substeps=5)], ids=["RK4", "Euler"])
def test_model_exchange_matches_builtin_units(fmus, solver):
    me = system(fmus, "me")
    assert me["S1"].nx == 2 and me["S2"].feedthrough and not me["S1"].feedthrough
    r1 = cosim.simulate(me, t_end=0.1, H=1e-3, solver=solver)
    r2 = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=solver)
    assert rel(r1.X, r2.X) < 1e-12 and rel(r1.Y, r2.Y) < 1e-12


def test_model_exchange_cvode_to_its_tolerance(fmus):
    solver = cosim.CVODE(rtol=1e-10, atol=1e-12)
    r1 = cosim.simulate(system(fmus, "me"), t_end=0.1, H=1e-3, solver=solver)
    r2 = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=solver)
    assert rel(r1.X, r2.X) < 1e-8  # adaptive steps: rounding differences move the step sizes (measured 4e-12)


@pytest.mark.parametrize("fmi", [2, 3])
def test_co_simulation_matches_builtin_units_with_its_solver(fmus, fmi):
    """The FMU's internal solver is RK4 with n_steps = 10 per doStep: the built-in units with RK4(substeps=10)."""
    cs = system(fmus, "cs", fmi)
    assert cs["S1"].nx == 0 and cs["S1"].fmi_version == fmi
    r1 = cosim.simulate(cs, t_end=0.1, H=1e-3)
    r2 = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10))
    assert rel(r1.Y, r2.Y) < 1e-12


def test_input_derivatives_reach_a_co_simulation_fmu(fmus):
    """FMI 2 canInterpolateInputs: a linear extrapolation (Lagrange k = 1) reaches the FMU as a ramp through
    fmi2SetRealInputDerivatives, so it matches the built-in units that see the same polynomial; the FMI 3 fixture
    has no input derivatives and holds u(T_N)."""
    appr = cosim.Lagrange(k=1)
    r_ref = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10), approximation=appr)
    r2 = cosim.simulate(system(fmus, "cs", 2), t_end=0.1, H=1e-3, approximation=appr)
    r3 = cosim.simulate(system(fmus, "cs", 3), t_end=0.1, H=1e-3, approximation=appr)
    assert rel(r2.Y, r_ref.Y) < 1e-12
    assert rel(r3.Y, r_ref.Y) > 1e-3


def test_start_values_by_name_and_value_reference(fmus):
    s = system(fmus, "me", starts1={"m": 2.0, 5: 5e5})  # vr 5 is c
    ref = models.two_mass_oscillator(m1=2.0, c1=5e5)
    r1 = cosim.simulate(s, t_end=0.05, H=1e-3, solver=cosim.RK4(substeps=10))
    r2 = cosim.simulate(ref, t_end=0.05, H=1e-3, solver=cosim.RK4(substeps=10))
    assert rel(r1.X, r2.X) < 1e-12
    cs = system(fmus, "cs", starts1={"m": 2.0, "c": 5e5}, starts2={"n_steps": 10})
    r3 = cosim.simulate(cs, t_end=0.05, H=1e-3)
    assert rel(r3.Y, r2.Y) < 1e-12


def test_time_event_of_a_model_exchange_fmu(fmus):
    """A time event at t_kick (between macro points) splits the step; the velocity jump re-initialises the
    integrator. The co-simulation FMU splits its own RK4 steps at t_kick the same way."""
    starts = {"t_kick": 0.0505, "kick": 1.0}
    r_me = cosim.simulate(system(fmus, "me", starts1=starts), t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10))
    r_cs = cosim.simulate(system(fmus, "cs", starts1=starts), t_end=0.1, H=1e-3)
    r_no = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10))
    assert rel(r_me.Y, r_cs.Y) < 1e-12
    assert rel(r_me.Y, r_no.Y) > 1e-2


# ---------------------------------------------------------------------------------------------------------------------
# FMI 3.0 model exchange and intermediate update

@pytest.mark.parametrize("solver", [cosim.RK4(substeps=10), cosim.Euler(substeps=5)], ids=["RK4", "Euler"])
def test_fmi3_model_exchange_matches_builtin_units(fmus, solver):
    me = system(fmus, "me", key="3me")
    assert me["S1"].fmi_version == 3 and me["S1"].kind == "me" and me["S1"].nx == 2
    np.testing.assert_array_equal(me["S1"].x0, [0.1, 0.0])
    r1 = cosim.simulate(me, t_end=0.1, H=1e-3, solver=solver)
    r2 = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=solver)
    assert rel(r1.X, r2.X) < 1e-12 and rel(r1.Y, r2.Y) < 1e-12


def test_fmi3_model_exchange_time_event_and_rollback(fmus):
    """The kick (a time event from fmi3UpdateDiscreteStates) gives the FMI 2 result; rejected steps roll back
    bit for bit."""
    starts = {"t_kick": 0.0505, "kick": 1.0}
    opts = dict(t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10))
    r3 = cosim.simulate(system(fmus, "me", starts1=starts, key="3me"), **opts)
    r2 = cosim.simulate(system(fmus, "me", starts1=starts), **opts)
    np.testing.assert_array_equal(r3.X, r2.X)
    r4 = _simulate(system(fmus, "me", starts1=starts, key="3me"), **opts, reject_steps=[3, 50, 51])
    assert r4.stats["rejected_steps"] == 3
    np.testing.assert_array_equal(r3.X, r4.X)


def test_fmi3_model_exchange_error_during_a_step(fmus):
    s = system(fmus, "me", starts2={"fail_time": 0.0305}, key="3me")
    with pytest.raises(cosim.SolverError, match="spring broke at t = 0.03") as e:
        cosim.simulate(s, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=2))
    assert "GetContinuousStateDerivatives" in str(e.value) and 0.029 <= e.value.result.t[-1] <= 0.0305


def test_fmi3_intermediate_update_sets_inputs_inside_do_step(fmus):
    """FMI 3 co-simulation with inputs declared intermediateUpdate: the FMU asks for its inputs at every RK4
    stage (intermediate update callback) and cosim sets them to the coupling polynomial there, so a linear
    extrapolation reaches the FMU exactly as it reaches the built-in units with the same RK4."""
    s = system(fmus, "cs", key="3iu")
    assert s["S1"].intermediate_inputs == [0] and s["S2"].intermediate_inputs == [0, 1]
    appr = cosim.Lagrange(k=1)
    r_ref = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10), approximation=appr)
    r = cosim.simulate(s, t_end=0.1, H=1e-3, approximation=appr)
    assert rel(r.Y, r_ref.Y) < 1e-12
    r_zoh = cosim.simulate(s, t_end=0.1, H=1e-3)  # ZOH: the polynomial is constant, the same as without
    r_zoh_ref = cosim.simulate(REF, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=10))
    assert rel(r_zoh.Y, r_zoh_ref.Y) < 1e-12
    # rejected steps: the intermediate inputs come from the polynomial of the repeated step
    r2 = _simulate(s, t_end=0.05, H=1e-3, approximation=appr, reject_steps=[4, 20])
    r1 = cosim.simulate(s, t_end=0.05, H=1e-3, approximation=appr)
    np.testing.assert_array_equal(r1.Y, r2.Y)


# ---------------------------------------------------------------------------------------------------------------------
# state events located by root finding

def ball_analytic(t, h0=1.0, g=9.81, e=0.7):
    """Height and velocity of the bouncing ball at the times t, and its impact times (exact): the first impact at
    t1 = sqrt(2 h0 / g) with speed g t1; each impact multiplies the speed by e; a flight at speed w lasts 2 w / g."""
    h, v = np.empty_like(t), np.empty_like(t)
    impacts = []
    t_prev, h_start, v0, t_imp = 0.0, h0, 0.0, np.sqrt(2 * h0 / g)
    while t_prev <= t[-1]:
        m = (t >= t_prev) & (t < t_imp)
        s = t[m] - t_prev
        h[m] = h_start + v0 * s - 0.5 * g * s ** 2
        v[m] = v0 - g * s
        impacts.append(t_imp)
        w = e * (g * t_imp if not v0 else v0)  # speed after this impact
        t_prev, h_start, v0, t_imp = t_imp, 0.0, w, t_imp + 2 * w / g
    return h, v, impacts


@pytest.mark.parametrize("solver,tol", [(cosim.RK4(substeps=2), 1e-10), (cosim.Euler(substeps=50), 5e-3),
                                        (cosim.CVODE(rtol=1e-10, atol=1e-12), 1e-7)], ids=["RK4", "Euler", "CVODE"])
def test_bouncing_ball_state_events_located(fmus, solver, tol):
    """z = h changes sign inside macro steps (H = 0.01): the impacts are located by root finding on the event
    indicator (the integrator's solution restarted from the step's start), not at the end of the step. RK4 is
    exact for this motion (a quadratic in t), so heights and velocities match the analytic bounces to rounding
    (measured 2e-15 / 2e-14; Euler 2.6e-3 / 2.0e-2 first order; CVODE 2.3e-8 / 1.7e-7)."""
    ball = cosim.FMU(fmus["ball"], name="B", kind="me")
    assert ball.nx == 2 and ball._nz == 1
    r = cosim.simulate(cosim.CoupledSystem([ball], [], allow_unconnected=True), t_end=2.0, H=0.01, solver=solver)
    h, v, impacts = ball_analytic(r.t)
    assert impacts[0] < 0.46 and impacts[1] < 1.1 and impacts[2] < 1.6  # three bounces inside the run
    assert np.max(np.abs(r["B.h"] - h)) < tol and np.max(np.abs(r["B.v"] - v)) < 10 * tol
    assert np.min(r["B.h"]) > -1e-9


# ---------------------------------------------------------------------------------------------------------------------
# rollback

@pytest.mark.parametrize("kind,fmi", [("cs", 2), ("cs", 3), ("me", 2)])
def test_rollback_through_fmu_state_is_bit_for_bit(fmus, kind, fmi):
    s = system(fmus, kind, fmi)
    opts = dict(t_end=0.05, H=1e-3, approximation=cosim.ExtrapolatedInterpolation(k=1, continuity=1),
                solver=cosim.RK4(substeps=4))
    r0 = cosim.simulate(s, **opts)
    r1 = _simulate(s, **opts, reject_steps=[3, 10, 11])
    assert r1.stats["rejected_steps"] == 3
    assert np.array_equal(r0.t, r1.t) and np.array_equal(r0.Y, r1.Y) and np.array_equal(r0.X, r1.X)


def test_dense_output_uses_fmu_state(fmus):
    s = system(fmus, "cs")
    r = cosim.simulate(s, t_end=0.01, H=1e-3, output_interval=2.5e-4)
    assert len(r.t) == 41 and np.all(np.isfinite(r.Y))
    macro = cosim.simulate(s, t_end=0.01, H=1e-3)
    np.testing.assert_array_equal(r.Y[::4], macro.Y)


def test_rollback_without_fmu_state_is_a_clear_error(fmus):
    s = system(fmus, "cs", key="nostate")
    assert not s["S1"].can_rollback
    cosim.simulate(s, t_end=0.01, H=1e-3)  # no rollback needed: fine
    with pytest.raises(cosim.SolverError, match="canGetAndSetFMUstate"):
        _simulate(s, t_end=0.01, H=1e-3, reject_steps=[2])
    with pytest.raises(cosim.SolverError, match="canGetAndSetFMUstate"):
        cosim.simulate(s, t_end=0.01, H=1e-3, output_interval=5e-4)


# ---------------------------------------------------------------------------------------------------------------------
# against FMPy

@pytest.mark.parametrize("fmi", [2, 3])
def test_single_co_simulation_fmu_matches_fmpy(fmus, fmi):
    path = fmus[(1, fmi)]
    res = fmpy.simulate_fmu(str(path), fmi_type="CoSimulation", stop_time=0.05, step_size=1e-4,
                            output_interval=1e-4, output=["x", "v"])
    fmu = cosim.FMU(path, name="S1", kind="cs")
    r = cosim.simulate(cosim.CoupledSystem([fmu], [], allow_unconnected=True), t_end=0.05, H=1e-4)
    np.testing.assert_allclose(r.t, res["time"], rtol=0, atol=1e-12)
    assert rel(r["S1.x"], res["x"]) < 1e-13 and rel(r["S1.v"], res["v"]) < 1e-13


def test_single_model_exchange_fmu_matches_fmpy_euler(fmus):
    path = fmus[(1, 2)]
    res = fmpy.simulate_fmu(str(path), fmi_type="ModelExchange", solver="Euler", stop_time=0.05, step_size=1e-4,
                            output_interval=1e-4, output=["x", "v"])
    fmu = cosim.FMU(path, name="S1", kind="me")
    r = cosim.simulate(cosim.CoupledSystem([fmu], [], allow_unconnected=True), t_end=0.05, H=1e-4,
                       solver=cosim.Euler(substeps=1))
    assert rel(r["S1.x"], res["x"]) < 1e-10 and rel(r["S1.v"], res["v"]) < 1e-10


# ---------------------------------------------------------------------------------------------------------------------
# bad FMUs and bad arguments

def test_bad_files(fmus, tmp_path):
    with pytest.raises(ValueError, match="path: no such file"):
        cosim.FMU(tmp_path / "missing.fmu")
    with pytest.raises(ValueError, match="not a zip"):
        cosim.FMU(fmus["notzip"])
    with pytest.raises(ValueError, match="no binary Mass1.so for this platform"):
        cosim.FMU(fmus["nobinary"])
    with pytest.raises(TypeError, match="path"):
        cosim.FMU(3)
    empty = tmp_path / "empty.fmu"
    with zipfile.ZipFile(empty, "w") as z:
        z.writestr("x.txt", "")
    with pytest.raises(ValueError, match="no modelDescription.xml"):
        cosim.FMU(empty)


def test_unknown_names_and_kinds(fmus):
    with pytest.raises(ValueError, match="start_values: unknown variable 'mass'"):
        cosim.FMU(fmus[(1, 2)], start_values={"mass": 1.0})
    with pytest.raises(ValueError, match="value reference 999"):
        cosim.FMU(fmus[(1, 2)], start_values={999: 1.0})
    with pytest.raises(ValueError, match="inputs: unknown variable 'G'"):
        cosim.FMU(fmus[(1, 2)], inputs=["G"])
    with pytest.raises(ValueError, match="start_values\\['m'\\]: expected a finite number"):
        cosim.FMU(fmus[(1, 2)], start_values={"m": float("nan")})
    with pytest.raises(ValueError, match="kind: must be"):
        cosim.FMU(fmus[(1, 2)], kind="co-sim")
    with pytest.raises(ValueError, match="kind: the FMU offers no model exchange"):
        cosim.FMU(fmus[(1, 3)], kind="me")
    with pytest.raises(ValueError, match="kind: the FMU offers no model exchange"):
        cosim.FMU(fmus[(1, "nostate")], kind="me")
    a = cosim.FMU(fmus[(1, 2)], name="S1")
    with pytest.raises(ValueError, match="unknown output S1.F"):
        cosim.CoupledSystem([a], [cosim.connect("S1.F", "S1.F")])


def test_fmu_error_during_instantiation_is_a_solver_error(fmus):
    s = system(fmus, "cs", starts2={"n_steps": 0})  # the FMU rejects it in fmi2SetInteger
    with pytest.raises(cosim.SolverError, match="n_steps must be >= 1"):
        cosim.simulate(s, t_end=0.01, H=1e-3)


@pytest.mark.parametrize("kind,fmi,fatal", [("cs", 2, 0), ("cs", 2, 1), ("cs", 3, 0), ("cs", 3, 1), ("me", 2, 0)])
def test_fmu_error_during_a_step(fmus, kind, fmi, fatal, caplog):
    s = system(fmus, kind, fmi, starts2={"fail_time": 0.0305, "fail_fatal": fatal})
    with caplog.at_level(logging.INFO, logger="cosim.fmu"):
        with pytest.raises(cosim.SolverError) as e:
            cosim.simulate(s, t_end=0.1, H=1e-3, solver=cosim.RK4(substeps=2))
    msg = str(e.value)
    assert "spring broke at t = 0.03" in msg and "S2" in msg
    if kind == "cs":
        assert ("Fatal" if fatal else "Error") in msg
    res = e.value.result
    assert res is not None and 0.029 <= res.t[-1] <= 0.0305 and np.all(np.isfinite(res.Y))
    assert any("spring broke" in r.getMessage() and r.levelno >= logging.ERROR for r in caplog.records)


def test_fmu_log_messages_go_to_python_logging(fmus, caplog):
    a = cosim.FMU(fmus[(1, 2)], name="S1", logging_on=True)
    with caplog.at_level(logging.INFO, logger="cosim.fmu.S1"):
        cosim.simulate(cosim.CoupledSystem([a], [], allow_unconnected=True), t_end=0.002, H=1e-3)
    assert any("instantiated S1" in r.getMessage() and r.name == "cosim.fmu.S1" for r in caplog.records)


@pytest.mark.parametrize("key", [2, "3me"])
def test_monolithic_reference_with_model_exchange_fmus(fmus, key):
    """Model-exchange FMUs are models of the monolithic composite: the same reference as the built-in units (CVODE
    at rtol 1e-10; the same steps up to rounding)."""
    t = np.linspace(0, 0.02, 21)
    r1 = cosim.simulate_monolithic(system(fmus, "me", key=key), t_end=0.02, t_eval=t)
    r2 = cosim.simulate_monolithic(REF, t_end=0.02, t_eval=t, solver=cosim.CVODE(rtol=1e-10, atol=1e-12))
    assert rel(r1.X, r2.X) < 1e-8


def test_monolithic_reference_refuses_co_simulation_and_event_fmus(fmus):
    with pytest.raises(ValueError, match="S1 is a co-simulation FMU.*kind='me'"):
        cosim.simulate_monolithic(system(fmus, "cs"), t_end=0.01)
    ball = cosim.FMU(fmus["ball"], name="B", kind="me")
    with pytest.raises(ValueError, match="B has 1 event indicator"):
        cosim.simulate_monolithic(cosim.CoupledSystem([ball], [], allow_unconnected=True), t_end=0.01)
    with pytest.raises(ValueError, match="S1 has a time event at t = 0.005"):
        cosim.simulate_monolithic(system(fmus, "me", starts1={"t_kick": 0.005, "kick": 1.0}), t_end=0.01)


def test_hermite_uses_fmu_output_derivatives(fmus):
    """maxOutputDerivativeOrder = 1: Hermite takes the FMUs' output derivatives (without them the run would stop
    with "no output derivatives"); with the input derivatives of FMI 2 the FMUs see the Hermite ramp, and the
    error to the monolithic reference drops below that of ZOH (measured 0.033 vs 0.085)."""
    mono = cosim.simulate_monolithic(REF, t_end=0.05, t_eval=np.linspace(0, 0.05, 51))
    s = system(fmus, "cs", 2)
    err = {}
    for appr in (cosim.ZOH(), cosim.Hermite()):
        r = cosim.simulate(s, t_end=0.05, H=1e-3, approximation=appr)
        err[type(appr).__name__] = rel(r.Y[:, :2], mono.X[:, :2])
    assert err["Hermite"] < 0.5 * err["ZOH"]


# ---------------------------------------------------------------------------------------------------------------------
# SSP

SSD = """<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" version="1.0" name="oscillator">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="S1" source="resources/Mass1.fmu" type="application/x-fmu-sharedlibrary">
        <ssd:ParameterBindings>
          <ssd:ParameterBinding>
            <ssd:ParameterValues>
              <ssv:ParameterSet version="1.0" name="p">
                <ssv:Parameters>
                  <ssv:Parameter name="m"><ssv:Real value="2.0"/></ssv:Parameter>
                  <ssv:Parameter name="n_steps"><ssv:Integer value="10"/></ssv:Parameter>
                </ssv:Parameters>
              </ssv:ParameterSet>
            </ssd:ParameterValues>
          </ssd:ParameterBinding>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="S2" source="resources/Mass2.fmu">
        <ssd:ParameterBindings>
          <ssd:ParameterBinding source="resources/S2.ssv"/>
        </ssd:ParameterBindings>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="S2" startConnector="F" endElement="S1" endConnector="F"/>
      <ssd:Connection startElement="S1" startConnector="x" endElement="S2" endConnector="x_in"/>
      <ssd:Connection startElement="S1" startConnector="v" endElement="S2" endConnector="v_in">
        <ssc:LinearTransformation factor="1.0"/>
      </ssd:Connection>
    </ssd:Connections>
  </ssd:System>
</ssd:SystemStructureDescription>
"""

SSV = """<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" name="S2">
  <ssv:Parameters>
    <ssv:Parameter name="S2.ck"><ssv:Real value="2e5"/></ssv:Parameter>
  </ssv:Parameters>
</ssv:ParameterSet>
"""


def test_from_ssp(fmus, tmp_path):
    ssp = tmp_path / "oscillator.ssp"
    with zipfile.ZipFile(ssp, "w") as z:
        z.writestr("SystemStructure.ssd", SSD)
        z.write(fmus[(1, 2)], "resources/Mass1.fmu")
        z.write(fmus[(2, 2)], "resources/Mass2.fmu")
        z.writestr("resources/S2.ssv", SSV)
    s = cosim.CoupledSystem.from_ssp(ssp, kind="me")
    assert s.names == ["S1", "S2"] and s["S1"].start_values == {"m": 2.0, "n_steps": 10}
    assert s["S2"].start_values == {"ck": 2e5}
    r1 = cosim.simulate(s, t_end=0.02, H=1e-3, solver=cosim.RK4(substeps=10))
    r2 = cosim.simulate(system(fmus, "me", starts1={"m": 2.0}, starts2={"ck": 2e5}), t_end=0.02, H=1e-3,
                        solver=cosim.RK4(substeps=10))
    np.testing.assert_array_equal(r1.X, r2.X)
    ref = models.two_mass_oscillator(m1=2.0, ck=2e5)
    r3 = cosim.simulate(ref, t_end=0.02, H=1e-3, solver=cosim.RK4(substeps=10))
    assert rel(r1.X, r3.X) < 1e-12


def test_from_ssp_errors(fmus, tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        cosim.CoupledSystem.from_ssp(tmp_path / "none.ssp")
    bad = tmp_path / "bad.ssp"
    bad.write_text("x")
    with pytest.raises(ValueError, match="not an SSP archive"):
        cosim.CoupledSystem.from_ssp(bad)
    ssp = tmp_path / "open.ssp"
    with zipfile.ZipFile(ssp, "w") as z:
        z.writestr("SystemStructure.ssd", SSD.replace('startElement="S2" startConnector="F"', 'startConnector="F"'))
        z.write(fmus[(1, 2)], "resources/Mass1.fmu")
        z.write(fmus[(2, 2)], "resources/Mass2.fmu")
        z.writestr("resources/S2.ssv", SSV)
    with pytest.raises(ValueError, match="the system declares no connector 'F'"):
        cosim.CoupledSystem.from_ssp(ssp)


def test_nepce_uses_macro_point_integrals_for_units_without_a_trace(fmus):
    """NEPCE integrates the coupled outputs from the units' micro-step traces where they have one; co-simulation
    FMUs report no intermediate values, so the integral falls back to the trapezoidal rule at the macro points
    (genser2020.md §9), the same correction the built-in units give with Exact() (whose trace is T and T+H)."""
    cs = system(fmus, "cs", 2)
    res = cosim.simulate(cs, t_end=0.02, H=1e-3, coupling=cosim.NEPCE(), update="simplified")
    log = res.coupling_log
    assert log["traced_steps"] == 0 and log["macro_point_steps"] == 2 * 20
    builtin = cosim.simulate(REF, t_end=0.02, H=1e-3, solver=cosim.RK4(substeps=10), coupling=cosim.NEPCE(),
                             update="simplified")
    assert builtin.coupling_log["traced_steps"] == 2 * 20 and builtin.coupling_log["macro_point_steps"] == 0
