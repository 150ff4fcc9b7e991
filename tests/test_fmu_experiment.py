"""DefaultExperiment and start time (issue 29, part 4): cosim.simulate takes t_start, t_end and H that are not
given from the DefaultExperiment of the SSP (tests/test_ssp.py) or of the FMUs (explicit argument >
DefaultExperiment > error), a model-exchange FMU's tolerance becomes its CVODE's rtol, and a model-exchange FMU
starts from its own states after its initialisation at t_start (the Lifecycle FMUs set x = startTime there)."""
import pathlib
import shutil
import sys
import zipfile

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
    d = tmp_path_factory.mktemp("experiment")
    return {fmi: build.build_lifecycle(d, fmi) for fmi in (2, 3)}


def system_of(*fmus):
    return cosim.CoupledSystem(list(fmus), [], allow_unconnected=True)


def with_experiment(path, out, experiment):
    """A copy of the FMU at ``path`` whose DefaultExperiment element is replaced by ``experiment``."""
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "modelDescription.xml":
                text = data.decode()
                start = text.index("<DefaultExperiment")
                data = (text[:start] + experiment + text[text.index("/>", start) + 2:]).encode()
            dst.writestr(item, data)
    return out


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_run_without_times_uses_the_fmus_default_experiment(lifecycle, kind):
    fmu = cosim.FMU(lifecycle[3], name="L", kind=kind, inputs=[])
    assert fmu.default_experiment == {"start_time": 0.0, "stop_time": 2.0, "step_size": 0.1}
    res = cosim.simulate(system_of(fmu))
    ref = cosim.simulate(system_of(fmu), t_end=2.0, H=0.1, t_start=0.0)
    np.testing.assert_array_equal(res.t, ref.t)
    np.testing.assert_array_equal(res["L.x"], ref["L.x"])
    assert len(res.t) == 21 and res.t[-1] == 2.0


def test_explicit_arguments_win_over_the_default_experiment(lifecycle):
    fmu = cosim.FMU(lifecycle[3], name="L", kind="cs", inputs=[])
    res = cosim.simulate(system_of(fmu), t_end=1.0)
    assert res.t[-1] == 1.0 and len(res.t) == 11          # stepSize 0.1 still from the FMU
    res = cosim.simulate(system_of(fmu), H=0.5, t_start=1.0)
    np.testing.assert_array_equal(res.t, [1.0, 1.5, 2.0])


def test_missing_or_conflicting_default_experiments_are_errors_naming_the_argument(lifecycle, tmp_path):
    plain = cosim.LTI(A=[[-1.0]], B=[[1.0]], C=[[1.0]], name="P")
    with pytest.raises(TypeError, match="t_end: missing, and no DefaultExperiment"):
        cosim.simulate(cosim.CoupledSystem([plain], [], allow_unconnected=True), H=0.1)
    other = with_experiment(lifecycle[3], tmp_path / "Other.fmu", '<DefaultExperiment stopTime="3" stepSize="0.1"/>')
    a = cosim.FMU(lifecycle[3], name="A", kind="cs", inputs=[])
    b = cosim.FMU(other, name="B", kind="cs", inputs=[])
    with pytest.raises(ValueError, match=r"t_end: not given, and the FMUs' DefaultExperiments disagree \(A: "
                                         r"stopTime=2.0, B: stopTime=3.0\)"):
        cosim.simulate(system_of(a, b))
    res = cosim.simulate(system_of(a, b), t_end=3.0)   # the step sizes agree
    assert res.t[-1] == 3.0 and len(res.t) == 31
    odd = with_experiment(lifecycle[3], tmp_path / "Odd.fmu", '<DefaultExperiment stopTime="1" stepSize="0.3"/>')
    with pytest.raises(ValueError, match=r"not a multiple of H = 0.3.*stepSize of the DefaultExperiment of FMU 'C'"):
        cosim.simulate(system_of(cosim.FMU(odd, name="C", kind="cs", inputs=[])))
    no_step = with_experiment(lifecycle[3], tmp_path / "NoStep.fmu", '<DefaultExperiment stopTime="1"/>')
    with pytest.raises(TypeError, match="H: missing"):
        cosim.simulate(system_of(cosim.FMU(no_step, name="D", kind="cs", inputs=[])))


@pytest.mark.parametrize("fmi", [2, 3])
def test_model_exchange_starts_from_its_initialisation_at_t_start(lifecycle, fmi):
    """x' = 1 with x = startTime after initialisation: from t_start = 1 the states are x = t (they were x = t - 1,
    the states of an initialisation at 0)."""
    fmu = cosim.FMU(lifecycle[fmi], name="L", kind="me", inputs=[])
    np.testing.assert_array_equal(fmu.x0, [0.0])
    np.testing.assert_array_equal(fmu.initial_states(1.0), [1.0])
    res = cosim.simulate(system_of(fmu), t_start=1.0, t_end=2.0, H=0.1, solver=cosim.RK4())
    np.testing.assert_allclose(res["L.x"], res.t, rtol=0, atol=1e-14)
    res = cosim.simulate(system_of(fmu), t_start=1.0, t_end=2.0, H=0.1, solver=cosim.RK4(), x0={"L": [5.0]})
    np.testing.assert_allclose(res["L.x"], res.t + 4.0, rtol=0, atol=1e-14)   # a given x0 is kept


def test_model_exchange_tolerance_of_the_default_experiment_is_cvodes_rtol(lifecycle, tmp_path):
    tol = with_experiment(lifecycle[3], tmp_path / "Tol.fmu",
                          '<DefaultExperiment stopTime="1" stepSize="0.5" tolerance="1e-5"/>')
    me = cosim.FMU(tol, name="L", kind="me", inputs=[])
    res = cosim.simulate(system_of(me))
    assert [s.rtol for s in res.options["solver"]] == [1e-5]
    res = cosim.simulate(system_of(me), solver=cosim.CVODE(rtol=1e-9))
    assert [s.rtol for s in res.options["solver"]] == [1e-9]
    res = cosim.simulate(system_of(cosim.FMU(tol, name="L", kind="cs", inputs=[])))
    assert [s.rtol for s in res.options["solver"]] == [cosim.CVODE().rtol]
