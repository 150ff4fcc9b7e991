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
