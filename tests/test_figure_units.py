"""issue 27 part 4: every figure the examples and the demo write has labelled axes with units (the rule of
tests/axis_units.py). Each example runs on reduced data into a temporary folder; every figure it saves is checked
as it is saved. The notebooks' figures are checked by tests/test_notebooks.py with the same rule."""
import importlib.util
import pathlib
import runpy

import matplotlib

matplotlib.use("Agg")
import matplotlib.figure  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from axis_units import describe, problems  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def example(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def saved(monkeypatch):
    """{file name: problems} of every figure saved while the test runs (checked at savefig)."""
    found = {}
    original = matplotlib.figure.Figure.savefig

    def savefig(fig, fname, *args, **kwargs):
        found[pathlib.Path(str(fname)).name] = problems(describe(fig), pathlib.Path(str(fname)).name)
        return original(fig, fname, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", savefig)
    yield found
    plt.close("all")


def run_demo(out):
    from cosim import demo
    demo.main(["--quick", "--out", str(out)])


def run_busch(out):
    example("busch_figures").main(["--reduced", "--n", "4", "--out", str(out)])


def run_energy(out):
    example("energy_figures").main(out, quick=True)


def run_genser(out):
    example("genser_figures").main(out, small=True)


def run_genser_doe(out):
    example("genser_doe").main(["zoh", "--workers", "1", "--no-progress", "--out", str(out)])


def run_helicopter(out):
    # dT = 0.08 s also draws the time series (genser2020 §15.3)
    example("helicopter_study").main(["--t-end", "20", "--dts", "0.02,0.08", "--methods", "zoh,lagrange1",
                                      "--out", str(out / "helicopter_study")])


def run_first_cosimulation(out, monkeypatch=None):
    plt.show = lambda *a, **k: None  # restored by the test (monkeypatch)
    runpy.run_path(str(EXAMPLES / "first_cosimulation.py"))
    plt.gcf().savefig(out / "first_cosimulation.png")


def run_acceleration(out):
    example("acceleration_predictors").main(out, quick=True)


RUNS = {"demo": (run_demo, ["coupling_force.png"]),
        "busch_figures": (run_busch, [f"busch_fig{n:02d}.png" for n in range(9, 16)]
                          + ["busch_slice_fd_gs_k1.png", "busch_slices_fd_gs.png"]),
        "energy_figures": (run_energy, ["energy_convergence.png", "energy_drift.png"]),
        "genser_figures": (run_genser, ["genser_stability_regions.png", "genser_dT_sweep.png", "genser_phase.png",
                                        "genser_rls_phases.png"]),
        "genser_doe": (run_genser_doe, [f"zoh_{n}.png" for n in ("main_effects", "heatmap", "sorted", "histograms")]),
        "helicopter_study": (run_helicopter, ["helicopter_study.png", "helicopter_study_timeseries.png"]),
        "first_cosimulation": (run_first_cosimulation, ["first_cosimulation.png"]),
        "acceleration_predictors": (run_acceleration, ["acceleration_stability.png",
                                                       "acceleration_stability_gauss_seidel.png",
                                                       "acceleration_convergence.png"])}


@pytest.mark.parametrize("name", list(RUNS))
def test_every_axis_of_the_example_figures_has_a_unit(name, saved, tmp_path, monkeypatch):
    monkeypatch.setattr(plt, "show", plt.show)
    run, files = RUNS[name]
    run(tmp_path)
    assert sorted(saved) == sorted(files), "the example saved other figures than expected"
    assert all((tmp_path / f).stat().st_size > 10_000 for f in files)
    found = [p for f in files for p in saved[f]]
    assert not found, "\n".join(found)


def test_the_rule_finds_missing_units():
    fig, (a, b) = plt.subplots(1, 2, sharey=True)
    a.set_xlabel("t [s]")
    a.set_ylabel("F")                   # no unit
    b.set_xticks([0, 1], ["zoh", "foh"])  # names: no unit needed
    found = problems(describe(fig), "test")
    assert found == ["test: panel '': y axis label 'F' has no [unit]",
                     "test: panel '': y axis label 'F' has no [unit]"]
    a.set_ylabel("F [N]")
    b.set_xlabel("run (sorted)")
    assert problems(describe(fig), "test") == []
    fig.colorbar(a.imshow([[1.0, 2.0]]), ax=a, label="spectral radius ρ(Ω)")
    assert problems(describe(fig), "test") == ["test: colour bar '': y axis label 'spectral radius ρ(Ω)' has no [unit]"]
    plt.close(fig)
