"""Readable DoE figures (issue 28 part 6, issue 27 part 4): ax= in and Axes out, units from the table's metadata,
log axes for log-spaced factors, a shared scale where panels are compared, and a heat map whose colours ignore
numerical zeros."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from cosim import doe  # noqa: E402


@pytest.fixture
def table():
    t = doe.full_factorial({"ck": [1e5, 1e6, 1e7], "dk": [1e2, 1e3], "H": [1e-3, 2e-3, 5e-3],
                            "approximation": ["zoh", "lagrange"]})
    t["eps_mono"] = 1e-3 * (t.ck / 1e5) ** 0.5 * t.H / 1e-3 * np.where(t.approximation == "zoh", 2, 1)
    t.attrs["doe"] = {"factors": ["ck", "dk", "H", "approximation"], "units": {"ck": "N/m", "H": "s"}}
    yield t
    plt.close("all")


def test_main_effects_units_log_axes_and_one_scale(table):
    axes = doe.plots.main_effects(table)
    by = {a.get_xlabel(): a for a in axes}
    assert set(by) == {"ck [N/m]", "dk", "H [s]", "approximation"}
    assert by["ck [N/m]"].get_xscale() == "log" and by["dk"].get_xscale() == "log"     # decades apart
    assert by["H [s]"].get_xscale() == "linear"                                       # 1-5 ms: not a decade
    assert len({a.get_ylim() for a in axes}) == 1                                     # effects compare
    assert doe.plots.main_effects(table, units={"ck": "kN/m"})[0].get_xlabel() == "ck [kN/m]"


def test_log_spaced_rule():
    assert doe.plots.log_spaced([1e5, 1e6, 1e7]) and doe.plots.log_spaced([1e-4, 1e-2])
    assert not doe.plots.log_spaced([1e-3, 2e-3, 5e-3]) and not doe.plots.log_spaced([0.0, 10.0, 20.0])
    assert not doe.plots.log_spaced([1.0, 50.0, 100.0])               # evenly spaced, not geometric


def test_heatmap_ignores_numerical_zeros(table):
    tab = doe.anova(table, "eps_mono")
    tab.loc["dk", "MS"] = 1e-16                                     # what a factor without effect gives
    ax = doe.plots.interaction_heatmap(tab)
    lo, hi = ax.images[0].get_clim()
    top = tab.MS.max()
    assert hi == pytest.approx(top) and lo >= top * 1e-12            # not stretched down to 1e-16
    assert ax.images[0].norm.__class__.__name__ == "LogNorm"        # decades of MS, not log10 values
    assert np.ma.is_masked(ax.images[0].get_array()[1, 1])          # dk's own cell: zero, shown grey
    assert "\n" in ax.get_title()                                   # a title that fits the figure


def test_every_plot_takes_ax_and_returns_it(table):
    fig, axs = plt.subplots(1, 4)
    assert list(doe.plots.main_effects(table, ax=axs)) == list(axs)
    fig, one = plt.subplots()
    assert doe.plots.interaction_heatmap(doe.anova(table, "eps_mono"), ax=one) is one
    fig, axs = plt.subplots(5, 1)
    assert list(doe.plots.sorted_runs(table, ax=axs)) == list(axs)
    assert axs[1].get_ylabel() == "ck [N/m]" and axs[1].get_yscale() == "log"
    fig, axs = plt.subplots(1, 4)
    assert list(doe.plots.optimum_histograms(table, top=4, ax=axs)) == list(axs)
    hist = doe.plots.optimum_histograms(table, top=8)
    assert hist[0].get_xlabel() == "ck [N/m]" and len({a.get_ylim() for a in hist}) == 1


def test_heatmap_colour_bar_gives_the_squared_response_unit(table):
    cbar = lambda ax: ax.images[0].colorbar.ax.get_ylabel()             # noqa: E731
    tab = doe.anova(table, "eps_mono")
    assert cbar(doe.plots.interaction_heatmap(tab)) == "MS of eps_mono"          # unit not known: bare
    table.attrs["doe"]["units"]["eps_mono"] = "m"
    tab = doe.anova(table, "eps_mono")                                           # anova keeps the table's units
    assert tab.attrs["units"]["eps_mono"] == "m"
    assert cbar(doe.plots.interaction_heatmap(tab)) == "MS of eps_mono [(m)²]"
    assert cbar(doe.plots.interaction_heatmap(tab, "SS", units={"eps_mono": "-"})) == "SS of eps_mono [-]"
    assert cbar(doe.plots.interaction_heatmap(tab, "percent", log=False)) == "percent of eps_mono [%]"


def test_units_given_to_a_study_reach_every_plot():
    import cosim
    study = doe.Study(lambda p: dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=0.01, H=p["H"],
                                     solver=cosim.Exact()),
                      factors={"ck": [1e5, 1e6], "H": [1e-3, 2e-3]}, responses=["eps_mono", "stable"],
                      reference=True, units={"ck": "N/m", "H": "s"})
    df = study.run()
    assert df.attrs["doe"]["units"] == {"eps_mono": "-", "stable": "-", "ck": "N/m", "H": "s"}
    assert [a.get_xlabel() for a in doe.plots.main_effects(df)] == ["ck [N/m]", "H [s]"]
    assert doe.plots.main_effects(df)[0].get_ylabel() == "mean eps_mono [-]"
    assert [a.get_ylabel() for a in doe.plots.sorted_runs(df)] == ["eps_mono [-]", "ck [N/m]", "H [s]"]
    hist = doe.plots.optimum_histograms(df, top=2)
    assert [a.get_xlabel() for a in hist] == ["ck [N/m]", "H [s]"]
    assert hist[1].get_title().endswith(" s")                                # the optimum with its unit
    ax = doe.plots.interaction_heatmap(doe.anova(df, "eps_mono"))
    assert ax.images[0].colorbar.ax.get_ylabel() == "MS of eps_mono [-]"
    # units= of a plot adds to the table's and wins over them
    assert [a.get_xlabel() for a in doe.plots.main_effects(df, units={"H": "ms"})] == ["ck [N/m]", "H [ms]"]
    plt.close("all")


@pytest.mark.parametrize("units, error, match", [
    (["s"], TypeError, "units: expected a dict"),
    ({"H": 1}, TypeError, r"units\['H'\]"),
    ({"": "s"}, TypeError, "units: names"),
])
def test_study_units_are_checked(units, error, match):
    with pytest.raises(error, match=match):
        doe.Study(lambda p: {}, factors={"H": [1e-3]}, units=units)
