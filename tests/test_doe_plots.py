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
    top = np.log10(tab.MS.max())
    assert hi == pytest.approx(top) and lo >= top - 12               # not stretched down to 1e-16
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
