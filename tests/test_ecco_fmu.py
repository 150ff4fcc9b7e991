"""The quarter truck as FMI 2.0 co-simulation FMUs (tests/fmus/quarter_truck_fmi2.c, built at test time): cosim.FMU on
the chassis / wheel / ground FMUs reproduces the built-in cosim.models.quarter_truck() (fixed H and ECCO) to
rounding, which makes the FMUs the common model of the libcosim comparison in benchmarks/energy.py."""
import pathlib
import shutil
import sys

import numpy as np
import pytest

import cosim
from cosim import models
from cosim.system import CoupledSystem, connect

pytest.importorskip("fmpy")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
import build_quarter_truck as bqt  # noqa: E402  (tests/fmus/build_quarter_truck.py)

if not any(shutil.which(c) for c in ("cc", "gcc", "clang")):
    pytest.skip("no C compiler for the test FMUs", allow_module_level=True)

BOND = [("chassis.v", "chassis.F", "wheel.F", "wheel.v")]


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    return bqt.build_quarter_truck(tmp_path_factory.mktemp("qt_fmus"))


@pytest.fixture(scope="module")
def chassis_noft(tmp_path_factory):
    """The chassis FMU declared without its feed-through (libcosim's scheme, see build_quarter_truck.py)."""
    return bqt.build_quarter_truck(tmp_path_factory.mktemp("qt_noft"), parts=("chassis",),
                                   declare_feedthrough=False)["chassis"]


def fmu_truck(fmus, chassis=None, wheel=None, ground=None):
    units = [cosim.FMU(fmus["chassis"], name="chassis", start_values=chassis),
             cosim.FMU(fmus["wheel"], name="wheel", start_values=wheel),
             cosim.FMU(fmus["ground"], name="ground", start_values=ground)]
    return CoupledSystem(units, [connect("wheel.v", "chassis.v"), connect("chassis.F", "wheel.F"),
                                 connect("ground.vg", "wheel.vg")])


def rel_diff(a, b, signals=("chassis.F", "wheel.v")):
    return max(np.max(np.abs(a[s] - b[s])) / np.max(np.abs(b[s])) for s in signals)


def test_fmu_interfaces(fmus):
    ch, wh, gr = (cosim.FMU(fmus[p], name=p) for p in ("chassis", "wheel", "ground"))
    assert (ch.kind, ch.nu, ch.ny, ch.feedthrough, ch.can_rollback) == ("cs", 1, 1, True, True)
    assert (wh.nu, wh.ny, wh.feedthrough) == (2, 1, False)
    assert (gr.nu, gr.ny, gr.feedthrough) == (0, 1, False)


@pytest.mark.parametrize("params", [{}, dict(m_c=350.0, k_c=12000.0, d_c=1500.0, m_w=45.0, k_w=120000.0,
                                             road_amplitude=0.03, road_frequency=1.5)])
def test_fmus_match_builtin_fixed_H(fmus, params):
    """Sine road, fixed H, ZOH, Jacobi: the FMUs' exact ZOH map equals cosim's Exact() on the LTI units."""
    split = lambda names: {k: v for k, v in params.items() if k in names}  # noqa: E731
    sysf = fmu_truck(fmus, split(("m_c", "k_c", "d_c")), split(("m_w", "k_w")),
                     split(("road_amplitude", "road_frequency")))
    ref = cosim.simulate(models.quarter_truck(**params), 1.0, 1e-3, solver=cosim.Exact())
    res = cosim.simulate(sysf, 1.0, 1e-3)
    np.testing.assert_array_equal(res.t, ref.t)
    assert np.max(np.abs(ref["wheel.v"])) > 0.1  # the road excites the truck
    assert rel_diff(res, ref) < 1e-10


def test_fmus_match_builtin_ecco_drop(fmus):
    """Drop test (flat road, 10 cm suspension deflection) under ECCO: same step sequence, same outputs."""
    sysf = fmu_truck(fmus, chassis={"d": 0.1}, ground={"road_amplitude": 0.0})
    truck = models.quarter_truck(road_amplitude=0.0)
    ecco = cosim.ECCO(BOND, rtol=1e-3, atol=1e-3, H_min=1e-5, H_max=1e-2)
    ref = cosim.simulate(truck, 1.0, 1e-4, solver=cosim.Exact(), x0={"chassis": [0.1, 0.0]}, step_control=ecco)
    res = cosim.simulate(sysf, 1.0, 1e-4, step_control=ecco)
    assert ref.stats["macro_steps"] > 50 and np.ptp(np.diff(ref.t)) > 1e-4  # H did adapt
    assert res.stats["macro_steps"] == ref.stats["macro_steps"]
    np.testing.assert_allclose(res.t, ref.t, rtol=0, atol=1e-12)
    assert rel_diff(res, ref) < 1e-10
    np.testing.assert_allclose(res.energy_residual, ref.energy_residual, rtol=1e-8, atol=1e-12)


def test_build_rejects_unknown_part(tmp_path):
    with pytest.raises(ValueError, match="parts"):
        bqt.build_quarter_truck(tmp_path, parts=("axle",))


# ------------------------------------------------------------------------------------ libcosim (optional, [bench])
@pytest.fixture(scope="module")
def energy_bench():
    pytest.importorskip("libcosimpy")
    import importlib.util
    path = pathlib.Path(__file__).resolve().parent.parent / "benchmarks" / "energy.py"
    spec = importlib.util.spec_from_file_location("cosim_benchmark_energy", path)
    energy = importlib.util.module_from_spec(spec)  # benchmarks/energy.py: libcosim_run, cosim_fmu_truck
    spec.loader.exec_module(energy)
    return energy


def test_libcosim_fixed_step_equals_cosim_with_its_scheme(fmus, chassis_noft, energy_bench):
    """libcosim reads the chassis force after doStep and does not re-evaluate it when the new wheel velocity arrives;
    cosim on the same FMU declared without that feed-through does the same and then agrees with libcosim to
    rounding, while the cosim default (re-evaluated feed-through) is a different, more accurate scheme."""
    noft = chassis_noft
    tl, vl, nl, _ = energy_bench.libcosim_run(fmus, 0.5, H=1e-3)
    same = cosim.simulate(energy_bench.cosim_fmu_truck(dict(fmus, chassis=noft)), 0.5, 1e-3)
    ours = cosim.simulate(energy_bench.cosim_fmu_truck(fmus), 0.5, 1e-3)
    n = len(tl)
    assert n >= 499
    np.testing.assert_allclose(tl, same.t[:n], rtol=0, atol=1e-12)
    assert np.max(np.abs(vl - same["wheel.v"][:n])) < 1e-12
    truck = models.quarter_truck(road_amplitude=0.0)
    e_lc = energy_bench.wheel_error(truck, tl, vl)
    e_ours = energy_bench.wheel_error(truck, ours.t, np.asarray(ours["wheel.v"]))
    assert e_ours < e_lc


def test_libcosim_ecco_on_the_fmus(fmus, chassis_noft, energy_bench):
    """libcosim's ECCO (its test case's parameters) keeps H in [H_min, H_max]; cosim.ECCO with the same parameters
    and libcosim's scheme takes about as many steps with about the same error."""
    p = dict(safety_factor=0.8, step_size=1e-4, min_step_size=1e-4, max_step_size=1e-2, min_change_rate=0.2,
             max_change_rate=1.5, abs_tolerance=1e-4, rel_tolerance=1e-4, p_gain=0.2, i_gain=0.15)
    tl, vl, nl, _ = energy_bench.libcosim_run(fmus, 4.0, ecco=p)
    steps = np.diff(tl)
    assert steps.min() >= 1e-4 - 1e-9 and steps.max() <= 1e-2 + 1e-9 and np.ptp(steps) > 1e-3
    noft = chassis_noft
    ctl = cosim.ECCO(BOND, rtol=1e-4, atol=1e-4, safety=0.8, kP=0.2, kI=0.15, H_min=1e-4, H_max=1e-2, r_min=0.2,
                     r_max=1.5)
    res = cosim.simulate(energy_bench.cosim_fmu_truck(dict(fmus, chassis=noft)), 4.0, 1e-4, step_control=ctl)
    assert abs(res.stats["macro_steps"] - nl) <= 0.01 * nl
    truck = models.quarter_truck(road_amplitude=0.0)
    e_lc = energy_bench.wheel_error(truck, tl, vl)
    e_cs = energy_bench.wheel_error(truck, res.t, np.asarray(res["wheel.v"]))
    assert abs(e_cs - e_lc) <= 0.05 * e_lc
