"""FMU state through cosim.Stepper (issue 29, part 4): ``cosim.Stepper(cosim.FMU(...))`` steps the FMU by hand,
``save()`` takes the FMU state (fmi2GetFMUstate / fmi3GetFMUState) and ``restore()`` sets it again, so steps
repeated after a restore reproduce the first pass bit for bit; an FMU without canGetAndSetFMUState is refused with
a message that names the capability. The Reference FMUs' part is in tests/test_reference_fmus.py."""
import pathlib
import shutil
import sys

import numpy as np
import pytest

import cosim

pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)


def trajectory(stepper, t, n, H, u):
    """(outputs, states) after each of n steps of size H from t with the constant input u."""
    ys, xs = [], []
    for k in range(n):
        stepper.do_step(t + k * H, H, u)
        ys.append(stepper.output(u))
        xs.append(stepper.x)
    return np.array(ys), np.array(xs)


@pytest.mark.parametrize("fmi, kind", [(2, "cs"), (2, "me"), (3, "cs")])
def test_restored_fmu_repeats_its_steps_bit_for_bit(tmp_path, fmi, kind):
    fmu = cosim.FMU(build.build_fmu(tmp_path, 2, fmi), name="M2", kind=kind)
    st = cosim.Stepper(fmu)
    u = np.array([0.01, 0.5])
    trajectory(st, 0.0, 5, 1e-3, u)
    snap, t = st.save(), st.t
    first = trajectory(st, t, 10, 1e-3, -u)
    assert st.t == pytest.approx(t + 10e-3)
    st.restore(snap)
    assert st.t == t
    second = trajectory(st, t, 10, 1e-3, -u)
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert np.any(first[0] != first[0][0])   # the steps did change the output
    # the same steps inside cosim.simulate give the same outputs (the stepper is the run's unit)
    if kind == "cs":
        system = cosim.CoupledSystem([fmu], [], inputs_default={"M2.x_in": u[0], "M2.v_in": u[1]})
        res = cosim.simulate(system, t_end=5e-3, H=1e-3)
        ys, _ = trajectory(cosim.Stepper(fmu), 0.0, 5, 1e-3, u)
        np.testing.assert_array_equal(res["M2.F"][1:], ys[:, 0])


def test_model_exchange_stepper_starts_from_given_states_and_time(tmp_path):
    fmu = cosim.FMU(build.build_fmu(tmp_path, 1, 2), name="M1", kind="me")
    st = cosim.Stepper(fmu, x0=[0.3, -1.0], t0=2.0)
    assert st.t == 2.0
    np.testing.assert_array_equal(st.x, [0.3, -1.0])
    st.do_step(2.0, 1e-3, [0.0])
    assert st.t == 2.001 and st.x[0] != 0.3


def test_fmu_without_state_functions_is_refused_naming_the_capability(tmp_path):
    fmu = cosim.FMU(build.build_fmu(tmp_path, 2, 2, can_state=False), name="M2", kind="cs")
    st = cosim.Stepper(fmu)
    st.do_step(0.0, 1e-3, [0.0, 0.0])             # stepping works without the capability
    with pytest.raises(ValueError, match='canGetAndSetFMUstate="true"'):
        st.save()


def test_snapshot_of_another_fmu_stepper_is_refused(tmp_path):
    fmu = cosim.FMU(build.build_fmu(tmp_path, 2, 2), name="M2", kind="cs")
    a, b = cosim.Stepper(fmu), cosim.Stepper(fmu)
    snap = a.save()
    del a                                         # the snapshot keeps its instance alive
    with pytest.raises(ValueError, match="belongs to the instance"):
        b.restore(snap)
    with pytest.raises(ValueError, match="another FMU stepper"):
        cosim.Stepper(cosim.LTI(A=[[-1.0]], B=[[1.0]], C=[[1.0]], D=[[0.0]], name="L")).restore(snap)
