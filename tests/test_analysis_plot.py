"""cosim.plot (Agg backend) and the reduced-size reproduction of busch2016 Figs. 9-15."""
import os
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from cosim import analysis as an  # noqa: E402
from cosim import plot as cplot  # noqa: E402
from cosim.approximations import Lagrange  # noqa: E402
from cosim.models.two_mass import two_mass_oscillator  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def smap():
    return an.two_mass_stability_map(np.logspace(4, 9, 5), np.logspace(0, 5, 4), np.logspace(-6, -2, 6))


def test_stability_scatter_counts_points(smap):
    fig = cplot.stability_scatter(smap)
    ax_s, ax_u = fig.axes[:2]
    assert ax_s.collections[0].get_offsets().shape[0] == smap.count_stable()
    assert ax_u.collections[0].get_offsets().shape[0] == smap.count_unstable()
    assert smap.count_stable() > 0 and smap.count_unstable() > 0


def test_stability_slice_and_local_error_plot(tmp_path, smap):
    fig = cplot.stability_slice(smap, dk=1e2)
    fig.savefig(tmp_path / "slice.png")
    le = an.local_error(two_mass_oscillator(), np.logspace(-6, -4, 5), approximation=Lagrange(1))
    fig = cplot.local_error_plot({"Lagrange k=1": le})
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


def test_busch_figures_reduced(tmp_path):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "busch_figures.py"), "--reduced", "--n", "4",
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, MPLBACKEND="Agg"))
    assert out.returncode == 0, out.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    for num in range(9, 16):
        assert f"busch_fig{num:02d}.png" in names
    assert all((tmp_path / n).stat().st_size > 10000 for n in names)
