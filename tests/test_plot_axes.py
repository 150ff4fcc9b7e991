"""Plot functions follow matplotlib's convention (issue 24 part 5): they take ``ax=`` and return their Axes (an array
of Axes for several panels), never a Figure, so that a Jupyter cell ending in a plot call shows the figure once; a
call makes exactly one figure without ``ax=`` and none with it."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import cosim  # noqa: E402
from cosim import analysis as an  # noqa: E402
from cosim import doe  # noqa: E402
from cosim import plot as cplot  # noqa: E402


@pytest.fixture(scope="module")
def smap():
    return an.two_mass_stability_map(np.logspace(4, 9, 3), np.logspace(0, 5, 3), np.logspace(-6, -2, 3))


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(1)
    df = pd.DataFrame([{"a": a, "b": b, "c": c} for a in (1.0, 2.0) for b in ("x", "y") for c in (0.1, 0.2, 0.3)])
    df["eps"] = rng.random(len(df))
    return df


def _panels(out):
    """The Axes a plot function returned, as a list; fails on a Figure or anything else."""
    assert not isinstance(out, matplotlib.figure.Figure)
    panels = [out] if isinstance(out, Axes) else list(np.ravel(out))
    assert panels and all(isinstance(a, Axes) for a in panels), out
    return panels


def _draws_once(call, n_panels, make_axes):
    """``call(ax=None)`` opens one figure and returns ``n_panels`` Axes of it; ``call(ax=given)`` opens none and
    returns the given axes."""
    plt.close("all")
    panels = _panels(call(None))
    assert len(panels) == n_panels and len(plt.get_fignums()) == 1
    assert all(a.figure is panels[0].figure for a in panels)
    plt.close("all")
    given = make_axes()
    opened = plt.get_fignums()
    panels = _panels(call(given))
    assert plt.get_fignums() == opened
    assert panels == list(np.ravel(given))
    plt.close("all")


def _axes(n, **kw):
    return lambda: plt.subplots(n, 1, squeeze=False, **kw)[1].ravel() if n > 1 else plt.subplots(**kw)[1]


def test_cosim_plot_functions_take_ax_and_return_axes(smap):
    le = an.local_error(cosim.models.two_mass_oscillator(), np.logspace(-5, -4, 3), approximation=cosim.ZOH())
    seq = [np.diag([0.5, 0.25])] * 20
    _draws_once(lambda ax: cplot.stability_slice(smap, ax=ax, dk=1e2), 1, _axes(1))
    _draws_once(lambda ax: cplot.stability_slices([smap, smap], ax=ax, dk=1e2), 2, _axes(2))
    _draws_once(lambda ax: cplot.local_error_plot(le, ax=ax), 1, _axes(1))
    _draws_once(lambda ax: cplot.bohl_plot(seq, [1, 2, 4], ax=ax), 1, _axes(1))
    _draws_once(lambda ax: cplot.norm_plot(seq, ax=ax), 1, _axes(1))

    def pair():
        fig = plt.figure()
        return np.array([fig.add_subplot(1, 2, k, projection="3d") for k in (1, 2)], dtype=object)
    _draws_once(lambda ax: cplot.stability_scatter(smap, ax=ax), 2, pair)
    r = cosim.simulate(cosim.models.two_mass_oscillator(), t_end=2e-3, H=1e-3, timing=True)
    _draws_once(lambda ax: cplot.timing(r, ax=ax), 1, _axes(1))
    _draws_once(lambda ax: cplot.stable_limit_map(smap, ax=ax), 1, _axes(1))


@pytest.fixture(scope="module")
def region():
    return an.stability_region_area(H=[0.5e-3, 2e-3], ratios=[10.0, 100.0, 1000.0], label="ZOH")


def _labels(panel):
    labels = [panel.get_xlabel(), panel.get_ylabel()]
    if hasattr(panel, "get_zlabel"):
        labels.append(panel.get_zlabel())
    return labels


def test_every_plot_function_labels_its_axes(smap, region):
    """issue 27 part 4: every (non-DoE) plot function writes non-empty x and y labels (and z on 3-D axes), with
    units where the quantity has one."""
    le = an.local_error(cosim.models.two_mass_oscillator(), np.logspace(-5, -4, 3), approximation=cosim.ZOH())
    seq = [np.diag([0.5, 0.25])] * 20
    r = cosim.simulate(cosim.models.two_mass_oscillator(), t_end=2e-3, H=1e-3, timing=True)
    calls = {
        "stability_slice": lambda: cplot.stability_slice(smap, dk=1e2),
        "stability_slices": lambda: cplot.stability_slices([smap, smap], dk=1e2),
        "stability_scatter": lambda: cplot.stability_scatter(smap),
        "stable_limit_map": lambda: cplot.stable_limit_map(smap),
        "local_error_plot": lambda: cplot.local_error_plot(le),
        "bohl_plot": lambda: cplot.bohl_plot(seq, [1, 2, 4]),
        "norm_plot": lambda: cplot.norm_plot(seq),
        "timing": lambda: cplot.timing(r),
        "StabilityRegion.plot": lambda: region.plot(),
        "Result.plot": lambda: r.plot(),
    }
    for name, call in calls.items():
        plt.close("all")
        panels = _panels(call())
        shown = [p for p in panels if p.get_visible()]
        # shared axes of a grid label the outer panels only: every panel has the labels or a neighbour has them
        assert all(any(_labels(p)[i] for p in shown) for i in range(2)), name
        for p in shown:
            if not p.get_shared_x_axes().get_siblings(p)[1:] and not p.get_shared_y_axes().get_siblings(p)[1:]:
                assert all(_labels(p)), (name, _labels(p))
    plt.close("all")


def test_stability_axes_carry_units_and_explain_l_x(smap, region):
    ax = cplot.stability_slice(smap, dk=1e2)
    assert ax.get_xlabel() == "coupling stiffness ck [N/m]" and ax.get_ylabel() == "macro step H [s]"
    ax = cplot.stable_limit_map(smap)
    assert ax.get_xlabel() == "coupling stiffness ck [N/m]" and ax.get_ylabel() == "coupling damping dk [Ns/m]"
    assert "largest stable macro step H [s]" in ax.figure.axes[-1].get_ylabel()      # the colour bar
    ax = region.plot()
    assert "l_x" in ax.get_xlabel() and "1/s" in ax.get_xlabel() and ax.get_ylabel() == "macro step ΔT [ms]"
    assert all("ms·l_x" in t.get_text() or "not in A" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close("all")


def test_stability_region_legend_is_outside_the_data(region):
    """The legend sits below the axes, where it cannot cover a point."""
    ax = region.plot()
    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    frame = ax.get_window_extent(renderer)
    assert legend.y1 <= frame.y0
    plt.close("all")


def test_stable_limit_is_the_largest_stable_value_up_to_which_all_are_stable(smap):
    limit, above = cplot.stable_limit(smap, "H")
    H = np.sort(smap.coords["H"])
    stable = smap.stable
    for i in range(stable.shape[0]):
        for j in range(stable.shape[1]):
            col = stable[i, j]
            n_ok = int(np.argmin(col)) if not col.all() else len(col)
            expected = -np.inf if n_ok == 0 else (np.inf if n_ok == len(col) else H[n_ok - 1])
            assert limit[i, j] == expected
    assert above == int(sum(np.count_nonzero(stable[i, j, int(np.argmin(stable[i, j])) + 1:])
                            for i in range(stable.shape[0]) for j in range(stable.shape[1])
                            if not stable[i, j].all()))
    with pytest.raises(ValueError, match="along"):
        cplot.stable_limit(smap, "mass")


def test_plot_ax_checked(smap):
    with pytest.raises(TypeError, match="ax"):
        cplot.stability_slice(smap, ax="left", dk=1e2)
    with pytest.raises(ValueError, match="ax"):
        cplot.stability_slices([smap, smap], ax=[plt.subplots()[1]], dk=1e2)
    plt.close("all")


def test_stability_scatter_axes_keyword_is_a_deprecated_alias(smap):
    fig = plt.figure()
    pair = [fig.add_subplot(1, 2, k, projection="3d") for k in (1, 2)]
    with pytest.warns(DeprecationWarning, match="ax="):
        out = cplot.stability_scatter(smap, axes=pair)
    assert list(out) == pair
    plt.close("all")


def test_doe_plots_take_ax_and_return_axes(table):
    tab = doe.anova(table, response="eps", factors=["a", "b", "c"])
    _draws_once(lambda ax: doe.plots.main_effects(table, "eps", ["a", "b", "c"], ax=ax), 3, _axes(3))
    _draws_once(lambda ax: doe.plots.interaction_heatmap(tab, ax=ax), 1, _axes(1))
    _draws_once(lambda ax: doe.plots.sorted_runs(table, "eps", ["a", "b", "c"], ax=ax), 4, _axes(4))
    _draws_once(lambda ax: doe.plots.optimum_histograms(table, "eps", ["a", "b", "c"], ax=ax, top=3), 3,
                _axes(3))


def test_result_plot_returns_axes():
    res = cosim.simulate(cosim.models.two_mass_oscillator(), t_end=2e-3, H=1e-3)
    n = res.Y.shape[1]
    _draws_once(lambda ax: res.plot(ax=ax), n, _axes(n))
    _draws_once(lambda ax: res.plot(signals=["S1.x1", "S2.F"], ax=ax), 2, _axes(2))
    fig, ax = plt.subplots()
    assert res.plot(signals=["S1.x1", "S2.F"], ax=ax) is ax and len(ax.get_lines()) == 2   # one shared panel
    plt.close("all")
    assert isinstance(res.plot(signals=["S2.F"]), Axes)                                 # one panel: one Axes
    assert len(plt.get_fignums()) == 1
    plt.close("all")
