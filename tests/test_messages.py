"""Messages name the argument (issue 30, part 5): huge or tiny values give a ValueError naming it, never an
OverflowError or a 300-digit number; Result.message names signals as the exception does; balance correction on an
FMU does not name an internal C function."""
import math

import numpy as np
import pytest

import cosim
from cosim import models


def test_subnormal_output_interval():
    with pytest.raises(ValueError, match=r"output_interval: 5e-324 gives inf output points") as e:
        cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, output_interval=5e-324)
    assert len(str(e.value)) < 200


@pytest.mark.parametrize("every", [2**63, 10**300])
def test_huge_step_finished_every(every):
    with pytest.raises(ValueError, match=r"step_finished_every: must be an int in 1\.\.2\*\*63-1, got ~?[0-9e+]+$") as e:
        cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, step_finished=lambda t, r: None,
                       step_finished_every=every)
    assert len(str(e.value)) < 120


def test_largest_step_finished_every_runs():
    res = cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3, step_finished=lambda t, r: False,
                         step_finished_every=2**63 - 1)
    assert res.status == res.FINISHED


@pytest.mark.parametrize("threads", [2**31, 2**63, 0])
def test_analysis_threads_out_of_range(threads):
    g = np.array([1e5, 2e5])
    with pytest.raises(ValueError, match=r"threads: must be in 1\.\.1024"):
        cosim.analysis.two_mass_stability_map(g, g, [1e-3], threads=threads)


def test_result_message_names_signals_like_the_exception():
    with pytest.raises(cosim.DivergenceError) as e:
        cosim.simulate(models.two_mass_oscillator(), 1.0, 1e-2, divergence_bound=1.0)
    assert "S1.v1" in str(e.value)
    assert "S1.v1" in e.value.result.message and "x[" not in e.value.result.message
    assert e.value.result.message in str(e.value)


def test_balance_correction_on_an_fmu_names_no_c_function(tmp_path):
    pytest.importorskip("fmpy")
    import pathlib
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "fmus"))
    import build_quarter_truck as bqt
    fm = bqt.build_quarter_truck(tmp_path, parts=("chassis", "wheel"))
    s = cosim.CoupledSystem([cosim.FMU(fm["chassis"], name="chassis"), cosim.FMU(fm["wheel"], name="wheel")],
                            [cosim.connect("wheel.v", "chassis.v"), cosim.connect("chassis.F", "wheel.F")],
                            allow_unconnected=True)
    with pytest.raises(ValueError, match="balance correction") as e:
        cosim.simulate(s, 0.01, 1e-3, coupling=cosim.BalanceCorrection())
    assert "cs_" not in str(e.value) and "chassis" in str(e.value)
