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
    with pytest.raises(ValueError, match=r"threads: must be (>= 1|<= 1024), got -?~?[0-9e+]+$"):
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


def test_record_limit_is_available_memory_shared_by_runs_in_flight(monkeypatch):
    """Issue 30, part 4: the limit comes from MemAvailable and is shared by concurrent runs; the error says what to
    do (output_interval or a coarser H)."""
    import sys
    sim = sys.modules["cosim.simulate"]
    limit = sim._record_limit()
    with open("/proc/meminfo") as fh:
        avail = next(float(l.split()[1]) * 1024 for l in fh if l.startswith("MemAvailable:"))
    assert 0.3 * avail < limit <= 0.5 * avail * 1.2
    seen = []
    real = sim._core.run

    def spy(*args):
        seen.append(args[7]["max_record_bytes"])
        return real(*args)

    monkeypatch.setattr(sim._core, "run", spy)
    monkeypatch.setattr(sim, "_record_limit", lambda: 1e6)
    cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3)
    monkeypatch.setattr(sim, "_in_flight", 3)        # three more runs of this process under way
    with pytest.raises(MemoryError, match=r"output_interval=.*coarser H"):
        cosim.simulate(models.two_mass_oscillator(), 1.0, 1e-4)   # 1e4 points * 9 doubles > 1e6 / 4
    monkeypatch.setenv("COSIM_CONCURRENT_RUNS", "2")
    monkeypatch.setattr(sim, "_in_flight", 0)
    cosim.simulate(models.two_mass_oscillator(), 0.01, 1e-3)
    assert seen[0] == 1e6 and seen[1] == 1e6 / 4 and seen[2] == 1e6 / 2


def test_a_1e8_step_run_is_refused_before_allocating(monkeypatch):
    """The issue's case: simulate(two_mass, 1e5, 1e-3) used to reserve 8.2 GiB."""
    import sys
    sim = sys.modules["cosim.simulate"]
    monkeypatch.setattr(sim, "_record_limit", lambda: 4e9)
    with pytest.raises(MemoryError, match="output_interval"):
        cosim.simulate(models.two_mass_oscillator(), 1e5, 1e-3)
