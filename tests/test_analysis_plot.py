"""cosim.plot (Agg backend); the reduced-size reproduction of busch2016 Figs. 9-15 runs in test_figure_units.py."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from cosim import analysis as an  # noqa: E402
from cosim import plot as cplot  # noqa: E402
from cosim.approximations import Lagrange  # noqa: E402
from cosim.models.two_mass import two_mass_oscillator  # noqa: E402


@pytest.fixture(scope="module")
def smap():
    return an.two_mass_stability_map(np.logspace(4, 9, 5), np.logspace(0, 5, 4), np.logspace(-6, -2, 6))


def test_stability_scatter_counts_points(smap):
    axes = cplot.stability_scatter(smap)
    ax_s, ax_u = axes[0].figure.axes[:2]
    assert list(axes) == [ax_s, ax_u]
    assert ax_s.collections[0].get_offsets().shape[0] == smap.count_stable()
    assert ax_u.collections[0].get_offsets().shape[0] == smap.count_unstable()
    assert smap.count_stable() > 0 and smap.count_unstable() > 0


def test_stability_slice_and_local_error_plot(tmp_path, smap):
    fig = cplot.stability_slice(smap, dk=1e2).figure
    fig.savefig(tmp_path / "slice.png")
    le = an.local_error(two_mass_oscillator(), np.logspace(-6, -4, 5), approximation=Lagrange(1))
    fig = cplot.local_error_plot({"Lagrange k=1": le}).figure
    assert "order 3.0" in fig.axes[0].get_legend().get_texts()[0].get_text()
    fig.savefig(tmp_path / "le.png")
    assert (tmp_path / "slice.png").stat().st_size > 0


def test_plot_bad_input(smap):
    with pytest.raises(ValueError, match="smap"):
        cplot.stability_scatter(smap.sel(dk=1.0))
    with pytest.raises(TypeError, match="smap"):
        cplot.stability_slice(np.zeros((3, 3)))
    with pytest.raises(TypeError, match="results"):
        cplot.local_error_plot([1, 2])
    with pytest.raises(ValueError, match="sel"):
        smap.sel(mass=1.0)


# examples/busch_figures.py --reduced runs in tests/test_figure_units.py (its files, sizes and axis units)


# ---------------------------------------------------------------- readable colour scales, units, shared bars
def test_rho_norm_diverges_at_one_and_inverts():
    norm = cplot.RhoNorm(vmin=0.5, vmax=11.0, linthresh=1e-4)
    assert float(norm(1.0)) == pytest.approx(0.5)
    assert float(norm(0.5)) == pytest.approx(0.0) and float(norm(11.0)) == pytest.approx(1.0)
    rho = np.array([0.5, 0.9, 0.99, 0.999, 0.9999, 1.0, 1.0001, 1.001, 1.1, 2.0, 11.0])
    v = np.ma.filled(norm(rho), np.nan)
    assert np.all(np.diff(v) > 0)
    np.testing.assert_allclose(norm.inverse(v), rho, rtol=1e-12)
    # each decade of 1 - rho below 1 gets the same room (logarithmic in the distance from 1)
    d = np.diff(np.ma.filled(norm(np.array([0.999, 0.99, 0.9][::-1])), np.nan))
    assert d[0] == pytest.approx(d[1], rel=0.05)
    assert np.ma.is_masked(norm(np.array([np.nan]))[0])
    ticks = norm.ticks()
    assert 1.0 in ticks and any(t < 1 for t in ticks) and any(t > 1 for t in ticks)
    assert [norm.format_tick(t) for t in (0.9, 0.99, 1.0, 1.1, 2.0)] == ["0.9", "0.99", "1", "1.1", "2"]
    with pytest.raises(ValueError, match="vmin, vmax"):
        cplot.RhoNorm(vmin=1.2, vmax=3.0)
    with pytest.raises(ValueError, match="linthresh"):
        cplot.RhoNorm(linthresh=0.0)
    with pytest.raises(TypeError, match="vmax"):
        cplot.RhoNorm(vmax="2")


def test_stability_slice_colorbar_ticks_below_one_and_units(smap):
    fig = cplot.stability_slice(smap, dk=1e2).figure
    ax, cax = fig.axes[0], fig.axes[1]
    assert ax.get_xlabel() == "coupling stiffness ck [N/m]" and ax.get_ylabel() == "macro step H [s]"
    ticks = [t for t in cax.get_yticks() if cax.get_ylim()[0] <= t <= cax.get_ylim()[1]]
    below = [t for t in ticks if t < 1]
    assert len(below) >= 2, ticks      # the stable side is readable
    assert any(t > 1 for t in ticks)
    assert "ρ" in cax.get_ylabel()
    rho = smap.sel(dk=1e2).rho
    assert np.nanmin(rho) < 1 < np.nanmax(rho)
    fig = cplot.stability_slice(smap, dk=1e2, labels={"ck": "c_k"}, units={"H": "seconds"}).figure
    assert fig.axes[0].get_xlabel() == "c_k [N/m]" and fig.axes[0].get_ylabel() == "macro step H [seconds]"
    with pytest.raises(TypeError, match="units"):
        cplot.stability_slice(smap, dk=1e2, units=["s"])
    with pytest.raises(TypeError, match="norm"):
        cplot.stability_slice(smap, dk=1e2, norm="log")


def test_stability_slices_share_one_colorbar(smap, tmp_path):
    other = an.two_mass_stability_map(np.logspace(4, 9, 5), np.logspace(0, 5, 4), np.logspace(-6, -2, 6),
                                      approximation=Lagrange(2))
    fig = cplot.stability_slices({"k=1": smap, "k=2": other, "k=1 again": smap}, ncols=2, dk=1e2)[0].figure
    panels = [a for a in fig.axes if a.get_visible() and a.collections and a.get_title().startswith("k=")]
    bars = [a for a in fig.axes if "ρ" in a.get_ylabel()]
    assert len(panels) == 3 and len(bars) == 1
    norms = {id(a.collections[0].norm) for a in panels}
    assert len(norms) == 1                              # one colour scale for all panels
    fig.savefig(tmp_path / "grid.png")
    with pytest.raises(TypeError, match="maps"):
        cplot.stability_slices(smap)
    with pytest.raises(ValueError, match="titles"):
        cplot.stability_slices([smap, other], titles=["a"], dk=1e2)


def test_stability_scatter_labels_inside_the_figure(smap):
    fig = cplot.stability_scatter(smap)[0].figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes[:2]:
        assert ax.get_zlabel() == "log10 H [s]" and ax.get_xlabel() == "log10 ck [N/m]"
        for label in (ax.xaxis.label, ax.yaxis.label, ax.zaxis.label):
            box = label.get_window_extent(renderer)
            assert box.x0 >= 0 and box.x1 <= fig.bbox.x1 and box.y0 >= 0 and box.y1 <= fig.bbox.y1
    left_z = fig.axes[0].zaxis.label.get_window_extent(renderer)
    right_panel = fig.axes[1].get_window_extent(renderer)
    assert left_z.x1 <= right_panel.x0 + 0.25 * right_panel.width
