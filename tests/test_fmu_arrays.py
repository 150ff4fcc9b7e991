"""FMI 3 arrays and Binary start values (issue 29, parts 1 and 4), on the test FMU tests/fmus/statespace_fmi3.c:
x' = A x + B u, y = C x + D u with array variables sized by structural parameters (m = 2, n = 3, r = 2). Arrays are
vector signals name[0] .. name[m-1] (inputs, outputs, model-exchange states) and start values; the run agrees with
fmpy.simulate_fmu on the same grid (co-simulation bit for bit, model exchange at tight tolerance). The Binary
parameter blob takes bytes at construction and through fmu.set."""
import pathlib
import shutil
import sys

import numpy as np
import pytest

import cosim

fmpy = pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build  # noqa: E402

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)

U = {"S.u[0]": 1.0, "S.u[1]": -0.5}   # the FMU's own start value of u


@pytest.fixture(scope="module")
def statespace(tmp_path_factory):
    return build.build_statespace(tmp_path_factory.mktemp("arrays"))


def test_arrays_are_vector_signals_named_by_element(statespace):
    cs = cosim.FMU(statespace, name="S", kind="cs")
    assert cs.inputs == ["u[0]", "u[1]"] and cs.outputs == ["y[0]", "y[1]", "blob_sum"]
    assert cs.output_types == ["Float64", "Float64", "Int32"] and cs.skipped_variables == []
    assert cs.structural_parameters == {"m": "2", "n": "3", "r": "2"}
    me = cosim.FMU(statespace, name="S", kind="me")
    assert me.nx == 3 and me.states == ["x[0]", "x[1]", "x[2]"]
    np.testing.assert_array_equal(me.x0, [1.0, 0.0, -1.0])


@pytest.mark.parametrize("kind", ["cs", "me"])
def test_statespace_matches_fmpy_on_the_same_grid(statespace, kind):
    fmu = cosim.FMU(statespace, name="S", kind=kind)
    res = cosim.simulate(cosim.CoupledSystem([fmu], [], inputs_default=U), t_end=2.0, H=0.1,
                         solver=cosim.CVODE(rtol=1e-10, atol=1e-12))
    ref = fmpy.simulate_fmu(str(statespace), fmi_type="CoSimulation" if kind == "cs" else "ModelExchange",
                            stop_time=2.0, step_size=0.1, output_interval=0.1, relative_tolerance=1e-10,
                            output=["y", "blob_sum"])
    np.testing.assert_allclose(res.t, ref["time"], rtol=0, atol=1e-12)
    y = np.column_stack([res["S.y[0]"], res["S.y[1]"]])
    if kind == "cs":
        np.testing.assert_array_equal(y, ref["y"])
    else:
        np.testing.assert_allclose(y, ref["y"], rtol=0, atol=1e-8)
    np.testing.assert_array_equal(res["S.blob_sum"], ref["blob_sum"].astype(float))
    assert np.ptp(y[:, 0]) > 0.1


def test_array_outputs_drive_array_inputs(statespace):
    """A.y (r = 2) -> B.u (m = 2), element by element: B's inputs are A's outputs at the macro points (ZOH)."""
    a = cosim.FMU(statespace, name="A", kind="cs", inputs=[])
    b = cosim.FMU(statespace, name="B", kind="cs")
    res = cosim.simulate(cosim.CoupledSystem([a, b], [cosim.connect("A.y[0]", "B.u[0]"),
                                                      cosim.connect("A.y[1]", "B.u[1]")]), t_end=1.0, H=0.1)
    np.testing.assert_array_equal(res["B.u[0]"], res["A.y[0]"])
    np.testing.assert_array_equal(res["B.u[1]"], res["A.y[1]"])
    assert not np.allclose(res["B.y[0]"], res["A.y[0]"])


def test_array_start_values_and_structural_parameters(statespace):
    fmu = cosim.FMU(statespace, name="S", kind="me", start_values={"x0": [0.5, 0.25, 2.0], "D": [[0, 0], [0, 1]]})
    np.testing.assert_array_equal(fmu.x0, [0.5, 0.25, 2.0])
    res = cosim.simulate(cosim.CoupledSystem([fmu], [], inputs_default=U), t_end=0.1, H=0.1)
    assert res["S.y[0]"][0] == 0.5 and res["S.y[1]"][0] == 0.25 + 2.0 - 0.5   # C x0 + D u
    fmu.set("x0", np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(fmu.x0, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"start_values\['x0'\]: 'x0' is an array of shape \(3,\); expected 3"):
        cosim.FMU(statespace, name="S", start_values={"x0": [1.0, 2.0]})
    with pytest.raises(ValueError, match=r"start_values\['n'\]: 'n' is a structural parameter"):
        cosim.FMU(statespace, name="S", start_values={"n": 4})
    cosim.FMU(statespace, name="S", start_values={"n": 3})   # its own value is no change


def test_binary_start_values_at_construction_and_through_set(statespace):
    def blob_sum(fmu):
        return cosim.simulate(cosim.CoupledSystem([fmu], [], inputs_default=U), t_end=0.1, H=0.1)["S.blob_sum"][-1]

    assert blob_sum(cosim.FMU(statespace, name="S")) == 3000 + 10 + 11 + 12     # the start value 0A0B0C
    fmu = cosim.FMU(statespace, name="S", start_values={"blob": b"\x01\x02"})
    assert blob_sum(fmu) == 2003
    fmu.set("blob", bytearray(b"\xff" * 16))
    assert blob_sum(fmu) == 16000 + 16 * 255
    fmu.set("blob", b"")
    assert blob_sum(fmu) == 0
    with pytest.raises(ValueError, match="17 bytes for the Binary variable 'blob', whose maxSize is 16"):
        fmu.set("blob", bytes(17))
    with pytest.raises(ValueError, match=r"expected bytes for the Binary variable \(e.g. bytes.fromhex"):
        cosim.FMU(statespace, name="S", start_values={"blob": "0A0B"})
    assert blob_sum(fmu) == 0   # a refused value changes nothing


def test_stepper_restores_an_array_fmu(statespace):
    st = cosim.Stepper(cosim.FMU(statespace, name="S", kind="me"))
    u = np.array([1.0, -0.5])
    st.do_step(0.0, 0.1, u)
    snap = st.save()
    first = [(st.do_step(0.1 + 0.1 * k, 0.1, u), st.x.copy())[1] for k in range(5)]
    st.restore(snap)
    second = [(st.do_step(0.1 + 0.1 * k, 0.1, u), st.x.copy())[1] for k in range(5)]
    np.testing.assert_array_equal(first, second)
