"""FMU life cycle (issue 29, parts 3 and 7): an FMU's request to terminate ends the run normally, the FMI call
sequence stays legal on every error path, and canBeInstantiatedOnlyOncePerProcess is honoured under threads.

The fixture FMU (tests/fmus/lifecycle_fmi{2,3}.c) checks every call against the FMI state machine and logs an
illegal one with category "illegal"; these tests fail on any such message."""
import concurrent.futures
import logging
import pathlib
import shutil
import sys
import threading

import numpy as np
import pytest

import cosim

pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)


@pytest.fixture(scope="module")
def lifecycle(tmp_path_factory):
    d = tmp_path_factory.mktemp("lifecycle")
    return {fmi: build.build_lifecycle(d, fmi) for fmi in (2, 3)} | {
        (fmi, "once"): build.build_lifecycle(d, fmi, once=True) for fmi in (2, 3)}


def illegal_calls(caplog):
    return [r.getMessage() for r in caplog.records if "[illegal]" in r.getMessage()]


def single(path, kind, **starts):
    return cosim.CoupledSystem([cosim.FMU(path, name="L", kind=kind, start_values=starts)], [], allow_unconnected=True)


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("kind", ["cs", "me"])
def test_terminate_request_ends_the_run_normally(lifecycle, fmi, kind, caplog):
    """FMI 2 co-simulation: fmi2Discard + fmi2Terminated; FMI 3: terminateSimulation; model exchange: the event
    update's terminateSimulation. The result runs to the last macro point before t_term = 0.55."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    res = cosim.simulate(single(lifecycle[fmi], kind, t_term=0.55), t_end=2.0, H=0.1, solver=cosim.RK4())
    assert res.status == cosim.Result.TERMINATED and res.state == "terminated" and res.success
    assert "asked to terminate the simulation at t = 0.55" in res.message
    np.testing.assert_allclose(res.t, np.arange(6) * 0.1, atol=1e-12)
    np.testing.assert_allclose(res["L.x"], res.t, atol=1e-9)
    assert illegal_calls(caplog) == []


@pytest.mark.parametrize("fmi", [2, 3])
@pytest.mark.parametrize("kind", ["cs", "me"])
def test_failed_initialisation_calls_no_terminate(lifecycle, fmi, kind, caplog):
    """After fmiExitInitializationMode returned Error only fmiFreeInstance is legal (no fmiTerminate)."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    if kind == "me":   # model exchange initialises when the FMU is loaded (for its initial states)
        with pytest.raises(cosim.SolverError, match="ExitInitializationMode returned fmi.Error"):
            cosim.FMU(lifecycle[fmi], name="L", kind=kind, start_values={"fail_init": 1})
    else:
        fmu = cosim.FMU(lifecycle[fmi], name="L", kind=kind, start_values={"fail_init": 1})
        with pytest.raises(cosim.SolverError, match="ExitInitializationMode returned fmi.Error"):
            cosim.simulate(cosim.CoupledSystem([fmu], [], allow_unconnected=True), t_end=1.0, H=0.1)
        fmu.flush_log()
    assert any("initialization failed" in r.getMessage() for r in caplog.records)
    assert illegal_calls(caplog) == []


@pytest.mark.parametrize("fmi", [2, 3])
def test_normal_run_terminates_and_frees_legally(lifecycle, fmi, caplog):
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    for kind in ("cs", "me"):
        res = cosim.simulate(single(lifecycle[fmi], kind), t_end=0.3, H=0.1, solver=cosim.RK4())
        assert res.status == cosim.Result.FINISHED
    assert illegal_calls(caplog) == []


@pytest.mark.parametrize("fmi", [2, 3])
def test_once_per_process_refuses_a_second_live_instance(lifecycle, fmi, caplog):
    """The same cosim.FMU run in two threads at once: the second run is refused by cosim (a clear ValueError)
    before the FMU sees a second instantiation; a cosim.FMU per thread loads its own copy of the binary, so two
    such runs in parallel both succeed."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    fmu = cosim.FMU(lifecycle[(fmi, "once")], name="L", kind="cs")
    assert fmu.once_per_process
    running, tried = threading.Event(), threading.Event()

    def hold(t, partial):   # keeps the first run (and its instance) alive until the second has tried
        running.set()
        tried.wait(10)
        return True

    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        first = ex.submit(cosim.simulate, cosim.CoupledSystem([fmu], [], allow_unconnected=True), t_end=0.2, H=0.1, step_finished=hold)
        assert running.wait(10)
        try:
            with pytest.raises(ValueError, match="only once per process"):
                cosim.simulate(cosim.CoupledSystem([fmu], [], allow_unconnected=True), t_end=0.2, H=0.1)
        finally:
            tried.set()
        assert first.result().status == cosim.Result.FINISHED
    systems = [cosim.CoupledSystem([cosim.FMU(lifecycle[(fmi, "once")], name="L", kind="cs")], [], allow_unconnected=True) for _ in range(2)]
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        results = list(ex.map(lambda s: cosim.simulate(s, t_end=0.5, H=0.1), systems))
    assert all(r.status == cosim.Result.FINISHED for r in results)
    assert illegal_calls(caplog) == []


@pytest.mark.parametrize("solver", [cosim.RK4(), cosim.CVODE(rtol=1e-10, atol=1e-12)], ids=["RK4", "CVODE"])
def test_discrete_input_of_model_exchange_is_set_in_event_mode(lifecycle, solver, caplog):
    """u_d (variability "discrete") driven by a co-simulation FMU's ramp x_cs(T_N) = T_N: model exchange sets it
    at each macro point in event mode (the FMU refuses it in continuous-time mode), so x' = 1 + T_N on
    [T_N, T_N+1] and x(T_N) = T_N + H^2 N(N-1)/2 exactly."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    me = cosim.FMU(lifecycle[2], name="M", kind="me", inputs=["u_d"])
    assert me.discrete_inputs == [0]
    src = cosim.FMU(lifecycle[2], name="C", kind="cs", inputs=[], outputs=["x"])
    system = cosim.CoupledSystem([src, me], [cosim.connect("C.x", "M.u_d")])
    H, n = 0.1, 10
    res = cosim.simulate(system, t_end=n * H, H=H, solver=solver)
    N = np.arange(n + 1)
    np.testing.assert_allclose(res["M.x"], N * H + H * H * N * (N - 1) / 2, rtol=1e-9, atol=1e-12)
    assert illegal_calls(caplog) == []
    with pytest.raises(ValueError, match="discrete variability"):
        cosim.simulate_monolithic(cosim.CoupledSystem([me], [cosim.connect(0.5, "M.u_d")]), t_end=0.2)


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_integer_boolean_and_string_variables_of_fmi2(lifecycle, kind, caplog):
    """FMI 2 Integer and Boolean outputs are signals (recorded, held, connected); a Boolean input of discrete
    variability is set in event mode (model exchange); a String parameter is a start value. C.late (t >= 0.5)
    drives M.hold (x' = 0 while true): x(T_N) = min(T_N, 0.5) exactly."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    src = cosim.FMU(lifecycle[2], name="C", kind="cs", inputs=[], start_values={"label": "hello"})
    assert src.output_types == ["Float64", "Int32", "Boolean", "Int32"]
    m = cosim.FMU(lifecycle[2], name="M", kind=kind, inputs=["hold"])
    assert m.input_types == ["Boolean"] and m.discrete_inputs == ([0] if kind == "me" else [])
    system = cosim.CoupledSystem([src, m], [cosim.connect("C.late", "M.hold")])
    res = cosim.simulate(system, t_end=1.0, H=0.1, solver=cosim.RK4())
    t = res.t
    np.testing.assert_array_equal(res["C.steps"], np.arange(len(t)))
    np.testing.assert_array_equal(res["C.late"], (t >= 0.5 - 1e-12).astype(float))
    np.testing.assert_array_equal(res["C.label_length"], np.full(len(t), 5.0))
    np.testing.assert_allclose(res["M.x"], np.minimum(t, 0.5), rtol=0, atol=1e-12)
    assert illegal_calls(caplog) == []
    with pytest.raises(ValueError, match="start_values\\['label'\\]: expected a str"):
        cosim.FMU(lifecycle[2], name="C", kind="cs", start_values={"label": 3})


@pytest.mark.parametrize("fmi", [2, 3])
def test_log_callback_is_called_as_messages_arrive(lifecycle, fmi, caplog, monkeypatch):
    """The FMU's message at t_term = 0.35 reaches log_callback inside the run, during the doStep of [0.3, 0.4]
    (after the step hooks of 0.1, 0.2 and 0.3), with its status; the Python logger gets nothing; a failing
    callback cannot break the run."""
    caplog.set_level(logging.INFO, logger="cosim.fmu")
    seen, hooks = [], []
    fmu = cosim.FMU(lifecycle[fmi], name="L", kind="cs", start_values={"t_term": 0.35}, inputs=[],
                    log_callback=lambda *m: seen.append((len(hooks),) + m))
    res = cosim.simulate(cosim.CoupledSystem([fmu], []), t_end=1.0, H=0.1,
                         step_finished=lambda t, r: hooks.append(t) or True)
    assert res.status == cosim.Result.TERMINATED
    assert [(n, status, instance) for n, status, instance, _, text in seen if "t_term reached" in text] == [
        (3, "Discard" if fmi == 2 else "OK", "L")]
    fmu.flush_log()
    assert not [r for r in caplog.records if "t_term reached" in r.getMessage()]

    def broken(*m):
        raise RuntimeError("callback fails")
    fmu2 = cosim.FMU(lifecycle[fmi], name="L", kind="cs", start_values={"t_term": 0.35}, inputs=[],
                     log_callback=broken)
    caught = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: caught.append(u.exc_value))
    assert cosim.simulate(cosim.CoupledSystem([fmu2], []), t_end=1.0, H=0.1).status == cosim.Result.TERMINATED
    assert [str(e) for e in caught] == ["callback fails"]
    with pytest.raises(TypeError, match="log_callback"):
        cosim.FMU(lifecycle[fmi], kind="cs", log_callback=3)
