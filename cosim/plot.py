"""Plots of the stability and local-error analysis (busch2016 Figs. 9-15). Thin wrappers over matplotlib.

* :func:`stability_scatter`: 3-D scatter of stable (ρ < 1) and unstable (ρ >= 1) grid points over log10 of the three
  axes of a :class:`cosim.analysis.StabilityMap` (Figs. 9-14: ck, dk, H; stable left, unstable right).
* :func:`stability_slice`: ρ over two axes with the others fixed (e.g. ck and H for fixed dk), with the ρ = 1
  contour.
* :func:`local_error_plot`: max |ε| over H on log-log axes with the fitted orders (Fig. 15).
"""
from __future__ import annotations

import numpy as np

from .analysis import LocalError, StabilityMap, fit_order


def _plt():
    import matplotlib.pyplot as plt
    return plt


def _check_map(smap, ndim=None):
    if not isinstance(smap, StabilityMap):
        raise TypeError(f"smap: expected a cosim.analysis.StabilityMap, got {type(smap).__name__}")
    if ndim is not None and smap.rho.ndim != ndim:
        raise ValueError(f"smap: expected {ndim} axes, got {smap.rho.ndim} ({smap.dims}); fix axes with .sel(...)")
    return smap


def _log_axis(values):
    return np.all(np.asarray(values) > 0)


def stability_scatter(smap, axes=None, title=None, s=6):
    """Stable (left) and unstable (right) grid points of a 3-axis map in 3-D (busch2016 Figs. 9-14).

    ``axes``: a pair of 3-D matplotlib axes (``projection="3d"``) to draw into; default: a new figure. Positive axes
    are shown as log10. Returns the figure."""
    _check_map(smap, 3)
    plt = _plt()
    if axes is None:
        fig = plt.figure(figsize=(10, 4.5))
        axes = (fig.add_subplot(1, 2, 1, projection="3d"), fig.add_subplot(1, 2, 2, projection="3d"))
    else:
        if len(axes) != 2:
            raise ValueError("axes: expected a pair (stable, unstable) of 3-D axes")
        fig = axes[0].figure
    coords, rho = smap.points()
    with np.errstate(invalid="ignore"):
        stable = rho < 1.0
        unstable = rho >= 1.0
    xyz, labels = [], []
    for d in smap.dims:
        v = coords[d]
        if _log_axis(smap.coords[d]):
            xyz.append(np.log10(v))
            labels.append(f"log10 {d}")
        else:
            xyz.append(v)
            labels.append(d)
    for ax, sel, name, color in ((axes[0], stable, "stable ρ < 1", "tab:green"),
                                 (axes[1], unstable, "unstable ρ ≥ 1", "tab:red")):
        ax.scatter(xyz[0][sel], xyz[1][sel], xyz[2][sel], s=s, c=color, depthshade=False)
        ax.set_xlabel(labels[0])
        ax.set_ylabel(labels[1])
        ax.set_zlabel(labels[2])
        for setlim, d in ((ax.set_xlim, 0), (ax.set_ylim, 1), (ax.set_zlim, 2)):
            setlim(np.min(xyz[d]), np.max(xyz[d]))
        ax.set_title(f"{name}: {int(np.count_nonzero(sel))}", fontsize=9)
    if title:
        fig.suptitle(title)
    return fig


def stability_slice(smap, ax=None, title=None, **fixed):
    """ρ over two axes (e.g. ck and H for fixed dk: ``stability_slice(m, dk=1e3)``) with the stability boundary
    ρ = 1 drawn as a black contour. Returns the figure."""
    _check_map(smap)
    if fixed:
        smap = smap.sel(**fixed)
    _check_map(smap, 2)
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.5, 4.2))
    else:
        fig = ax.figure
    x, y = smap.coords[smap.dims[0]], smap.coords[smap.dims[1]]
    from matplotlib.colors import TwoSlopeNorm
    rho = np.asarray(smap.rho, dtype=float)
    lo = min(float(np.nanmin(rho)), 0.999) if np.isfinite(rho).any() else 0.9
    hi = max(min(float(np.nanmax(rho)), 2.0), 1.001) if np.isfinite(rho).any() else 1.1
    mesh = ax.pcolormesh(x, y, np.clip(rho, lo, hi).T, shading="nearest", cmap="RdYlGn_r",
                         norm=TwoSlopeNorm(vmin=lo, vcenter=1.0, vmax=hi))
    if np.nanmin(rho) < 1.0 < np.nanmax(rho) and min(rho.shape) >= 2:
        ax.contour(x, y, rho.T, levels=[1.0], colors="k", linewidths=1.2)
    if _log_axis(x):
        ax.set_xscale("log")
    if _log_axis(y):
        ax.set_yscale("log")
    ax.set_xlabel(smap.dims[0])
    ax.set_ylabel(smap.dims[1])
    fig.colorbar(mesh, ax=ax, label="ρ(Ω) (clipped at 2)")
    fx = smap.meta.get("fixed", {})
    ax.set_title(title or ", ".join(f"{k} = {v:.3g}" for k, v in fx.items()), fontsize=9)
    return fig


def local_error_plot(results, ax=None, which="all", title=None):
    """max |ε| over H on log-log axes (busch2016 Fig. 15) for a dict ``{label: LocalError}``; the legend gives the
    fitted order of each curve. Returns the figure."""
    if isinstance(results, LocalError):
        results = {"": results}
    if not isinstance(results, dict) or not all(isinstance(v, LocalError) for v in results.values()):
        raise TypeError("results: expected a LocalError or a dict {label: LocalError}")
    if which not in ("x", "y", "all"):
        raise ValueError(f"which: must be 'x', 'y' or 'all', got {which!r}")
    plt = _plt()
    if ax is None:
        fig, ax = plt.subplots(figsize=(5, 4))
    else:
        fig = ax.figure
    for label, le in results.items():
        e = le.norm(which)
        scale = np.max(np.abs(le.exact))
        p = fit_order(le.H, e, scale=scale)
        pos = e > 0
        ax.loglog(le.H[pos], e[pos], "o-", ms=3, label=f"{label} (order {p:.1f})")
    ax.set_xlabel("H")
    ax.set_ylabel(f"max |ε| ({which})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return fig
