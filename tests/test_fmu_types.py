"""FMU variables of every numeric FMI 3 type as signals (issue 29, part 1): Float32, Int8 .. UInt64 and Boolean
outputs drive inputs of the same type, are held over the macro step (ZOH) and recorded; String parameters are start
values; values out of an integer type's range are an error naming the variable."""
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


@pytest.fixture(scope="module")
def types3(tmp_path_factory):
    return build.build_types(tmp_path_factory.mktemp("types"))


def test_every_numeric_type_is_a_signal(types3):
    """A.out_T = A.in_T + 1 = 1 (A's inputs unconnected: 0) drives B.in_T: B.out_T = 2 from the second step on
    (Jacobi: B sees A's output of the step before); Boolean: not(not 0) = ... B.out = not 1 = 0."""
    a = cosim.FMU(types3, name="A", start_values={"label": "abc"})
    b = cosim.FMU(types3, name="B", start_values={"in_Int64": 2 ** 40, "in_UInt8": 200, "in_Float32": 0.5})
    assert a.input_types == build.TYPES3 and a.output_types == build.TYPES3 + ["Float64"]
    system = cosim.CoupledSystem([a, b], [cosim.connect(f"A.out_{t}", f"B.in_{t}") for t in build.TYPES3],
                                 allow_unconnected=True)
    res = cosim.simulate(system, t_end=0.3, H=0.1)
    for t in build.TYPES3:
        want_a = [0, 1, 1, 1]
        want_b = [0, 1, 0, 0] if t == "Boolean" else [0, 1, 2, 2]
        np.testing.assert_array_equal(res[f"A.out_{t}"], want_a, err_msg=t)
        np.testing.assert_array_equal(res[f"B.out_{t}"], want_b, err_msg=t)
    # A's total: its inputs are 0, its label has 3 characters
    np.testing.assert_array_equal(res["A.total"], [0, 3000, 3000, 3000])
    np.testing.assert_array_equal(res["B.total"], [0, 0, 10, 10])


def test_start_values_of_every_type_reach_the_fmu(types3):
    starts = {"in_Float32": 0.5, "in_Int8": -100, "in_UInt8": 200, "in_Int16": -3000, "in_UInt16": 60000,
              "in_Int32": -2 ** 31, "in_UInt32": 2 ** 32 - 2, "in_Int64": -2 ** 50, "in_UInt64": 2 ** 52,
              "in_Boolean": True}
    a = cosim.FMU(types3, name="A", start_values=starts, inputs=[])
    res = cosim.simulate(cosim.CoupledSystem([a], []), t_end=0.1, H=0.1)
    assert res["A.total"][-1] == sum(float(v) for v in starts.values())
    for t in build.TYPES3:
        want = (not starts[f"in_{t}"]) if t == "Boolean" else starts[f"in_{t}"] + 1
        assert res[f"A.out_{t}"][-1] == float(want), t


@pytest.mark.parametrize("name, value", [("in_Int8", 128), ("in_UInt8", -1), ("in_UInt32", 2 ** 32),
                                         ("in_Int32", 1.5), ("in_Boolean", 2), ("in_UInt64", 2 ** 60),
                                         ("label", 1.0), ("in_Float32", "x")])
def test_start_values_outside_the_type_are_named(types3, name, value):
    with pytest.raises(ValueError, match=rf"start_values\['{name}'\]"):
        cosim.FMU(types3, name="A", start_values={name: value})


def test_coupled_value_out_of_range_is_an_error(types3):
    """A gain of -5 makes B's UInt8 input negative: the run fails naming the type and the variable."""
    a = cosim.FMU(types3, name="A")
    b = cosim.FMU(types3, name="B")
    system = cosim.CoupledSystem([a, b], [cosim.connect("A.out_UInt8", "B.in_UInt8", -5.0)], allow_unconnected=True)
    with pytest.raises(cosim.SolverError, match=r"value -5 for the UInt8 variable \(value reference 12\)"):
        cosim.simulate(system, t_end=0.3, H=0.1)


def test_connections_across_type_classes_need_convert(types3):
    """FMI connects signals of one type class: Float64 -> Int8 or Boolean -> Float32 only with convert=True; widths
    within a class (Int8 -> Int64) connect as they are."""
    a, b = cosim.FMU(types3, name="A"), cosim.FMU(types3, name="B")
    with pytest.raises(ValueError, match=r"a Float64 output drives a Int8 input.*convert=True"):
        cosim.CoupledSystem([a, b], [cosim.connect("A.total", "B.in_Int8")], allow_unconnected=True)
    with pytest.raises(ValueError, match="a Boolean output drives a Float32 input"):
        cosim.CoupledSystem([a, b], [cosim.connect("A.out_Boolean", "B.in_Float32")], allow_unconnected=True)
    ok = cosim.CoupledSystem([a, b], [cosim.connect("A.out_Boolean", "B.in_Float32", convert=True),
                                      cosim.connect("A.out_Int8", "B.in_Int64")], allow_unconnected=True)
    res = cosim.simulate(ok, t_end=0.2, H=0.1)
    np.testing.assert_array_equal(res["B.out_Float32"], [0, 1, 2])   # in = A's not(false) = 1 from step 2 on
    np.testing.assert_array_equal(res["B.out_Int64"], [0, 1, 2])
    with pytest.raises(TypeError, match="convert must be True or False"):
        cosim.connect("A.total", "B.in_Int8", convert=1)
