"""Plots of the stability and local-error analysis (busch2016 Figs. 9-15). Thin wrappers over matplotlib.

* :func:`stability_scatter`: 3-D scatter of stable (ρ < 1) and unstable (ρ >= 1) grid points over log10 of the three
  axes of a :class:`cosim.analysis.StabilityMap` (Figs. 9-14: ck, dk, H; stable left, unstable right).
* :func:`stability_slice`: ρ over two axes with the others fixed (e.g. ck and H for fixed dk), with the ρ = 1
  contour; :func:`stability_slices`: a grid of such panels with one shared colour bar.
* :func:`RhoNorm`: the colour scale of the slices, diverging at ρ = 1 and logarithmic in the distance |ρ − 1|, so
  that 0.9, 0.99, 0.999 (stable, decaying ever more slowly per macro step H) are as readable as 1.1, 2, 11.
* :func:`stable_limit_map`: the stable region of a 3-axis map in 2-D: over two axes (ck, dk) the largest third
  (H) up to which the co-simulation is stable (:func:`stable_limit`), a readable form of Figs. 9-14.
* :func:`local_error_plot`: max |ε| over H on log-log axes with the fitted orders (Fig. 15).

Every plot function takes ``ax=`` (where to draw; default: a new figure) and returns its Axes (an array of them
for several panels), matplotlib's convention.

Axis labels: the names and units of the two-mass oscillator's parameters (ck [N/m], dk [Ns/m], H [s], ...) are the
defaults (:data:`LABELS`, :data:`UNITS`); ``labels=``/``units=`` dicts override them per axis.
"""
from __future__ import annotations

import math

import numpy as np

from ._axes import one, several, with_unit
from ._check import renamed
from .analysis import LocalError, StabilityMap, fit_order
from .stability_theory import bohl_exponent, boundedness, window_lengths

#: default axis names of the stability-map parameters (two-mass oscillator, busch2016 §3)
LABELS = {"ck": "coupling stiffness ck", "dk": "coupling damping dk", "H": "macro step H",
          "m1": "mass m1", "m2": "mass m2", "c1": "stiffness c1", "c2": "stiffness c2",
          "d1": "damping d1", "d2": "damping d2"}
#: default units of the stability-map parameters
UNITS = {"ck": "N/m", "dk": "Ns/m", "H": "s", "m1": "kg", "m2": "kg", "c1": "N/m", "c2": "N/m", "d1": "Ns/m",
         "d2": "Ns/m"}
#: the axis label of ρ: a ratio of amplitudes per macro step, dimensionless
RHO_LABEL = "spectral radius ρ(Ω) [-]"


def _plt():
    import matplotlib.pyplot as plt
    return plt


def _check_map(smap, ndim=None):
    if not isinstance(smap, StabilityMap):
        raise TypeError(f"smap: expected a cosim.analysis.StabilityMap, got {type(smap).__name__}")
    if ndim is not None and smap.rho.ndim != ndim:
        raise ValueError(f"smap: expected {ndim} axes, got {smap.rho.ndim} ({smap.dims}); fix axes with .sel(...)")
    return smap


def _check_dict(value, name):
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise TypeError(f"{name}: expected a dict axis name -> string, got {value!r}")
    return value


def _axis_label(dim, labels, units, log10=False, short=False):
    text = labels.get(dim, dim if short else LABELS.get(dim, dim))
    if log10:
        text = f"log10 {text}"
    return with_unit(text, units.get(dim, UNITS.get(dim, "")))


def _log_axis(values):
    return np.all(np.asarray(values) > 0)


def _cell_edges(values):
    """Edges of the cells around grid points, halfway between neighbours: in log10 on a log axis (positive values),
    so that every cell of a log grid is equally wide on the plot (matplotlib's shading="nearest" halves linearly)."""
    v = np.asarray(values, dtype=float)
    log = _log_axis(v) and v.size > 1
    w = np.log10(v) if log else v
    if w.size == 1:
        e = np.array([w[0] - 0.5, w[0] + 0.5])
    else:
        mid = 0.5 * (w[1:] + w[:-1])
        e = np.concatenate([[w[0] - (mid[0] - w[0])], mid, [w[-1] + (w[-1] - mid[-1])]])
    return 10.0 ** e if log else e


_NORM_CLASS = []  # the matplotlib Normalize subclass, created on first use (matplotlib is imported lazily)


def _rho_norm_class():
    if _NORM_CLASS:
        return _NORM_CLASS[0]
    from matplotlib.colors import Normalize

    class _RhoNorm(Normalize):
        """See :func:`RhoNorm`."""

        def __init__(self, vmin, vmax, linthresh):
            super().__init__(vmin=float(vmin), vmax=float(vmax), clip=False)
            self.linthresh = float(linthresh)

        def _g(self, d):
            return np.log10(1.0 + np.asarray(d, dtype=float) / self.linthresh)

        def __call__(self, value, clip=None):
            data = np.ma.asarray(value, dtype=float)
            d = np.ma.filled(data, 1.0) - 1.0
            lo, hi = self._g(1.0 - self.vmin), self._g(self.vmax - 1.0)
            with np.errstate(invalid="ignore"):
                f = np.where(d < 0, -self._g(np.abs(d)) / lo, self._g(np.maximum(d, 0)) / hi)
            out = np.ma.array(0.5 + 0.5 * f, mask=np.ma.getmaskarray(data) | ~np.isfinite(d))
            return out if np.ndim(value) else out[()]

        def inverse(self, value):
            v = 2.0 * np.asarray(value, dtype=float) - 1.0
            lo, hi = self._g(1.0 - self.vmin), self._g(self.vmax - 1.0)
            d = np.where(v < 0, -(10.0 ** (-v * lo) - 1.0), 10.0 ** (v * hi) - 1.0) * self.linthresh
            return 1.0 + d

        def ticks(self, max_per_side=6):
            """1, 1 − 10^j below and 1 + 10^j above, for the decades 10^j > linthresh inside [vmin, vmax]
            (every other decade while there are more than ``max_per_side`` on a side), and the ends vmin, vmax
            where they are not too close to the others."""
            j0 = math.floor(math.log10(self.linthresh) + 1e-9) + 1
            below = [1 - 10.0 ** j for j in range(j0, 0) if 1 - 10.0 ** j >= self.vmin - 1e-12]
            above = [1 + 10.0 ** j for j in range(j0, 40) if 1 + 10.0 ** j <= self.vmax * (1 + 1e-12)]
            while len(below) > max_per_side:
                below = below[1::2]
            while len(above) > max_per_side:
                above = above[1::2]
            ticks = sorted(set(below) | {1.0} | set(above))
            pos = list(np.ma.filled(self(np.array(ticks)), np.nan))
            for end in (self.vmin, self.vmax):
                p = float(self(end))
                if min(abs(p - q) for q in pos) >= 0.07:
                    ticks.append(end)
                    pos.append(p)
            return sorted(ticks)

        @staticmethod
        def format_tick(v):
            d = abs(v - 1.0)
            if d == 0:
                return "1"
            if d < 1:
                j = math.log10(d)
                if d < 1e-3 and abs(j - round(j)) < 1e-9:
                    return f"$1 {'-' if v < 1 else '+'} 10^{{{round(j)}}}$"
                return f"{v:.{max(1, math.ceil(-j - 1e-9))}f}" if abs(j - round(j)) < 1e-9 else f"{v:.3g}"
            return f"{v:.3g}"

    _NORM_CLASS.append(_RhoNorm)
    return _RhoNorm


def RhoNorm(vmin=0.0, vmax=2.0, linthresh=1e-3):
    """Colour normalisation of a spectral radius ρ, diverging at ρ = 1 (the stability boundary, busch2016 eq. 25).

    Each side is logarithmic in the distance from 1: a value ρ maps to
    0.5 ∓ 0.5 · log10(1 + |ρ − 1|/δ) / log10(1 + |ρ_lim − 1|/δ) with ρ_lim = ``vmin`` below 1 and ``vmax`` above,
    so the decades of 1 − ρ (0.9, 0.99, 0.999, ...) and of ρ − 1 (1.001, 1.01, 1.1, 2, 11) get equal room down to
    the resolution δ = ``linthresh``. Returns a :class:`matplotlib.colors.Normalize` (use it as ``norm=``) with
    ``ticks()`` and ``format_tick(v)`` for the colour bar (:func:`rho_colorbar`)."""
    for name, v in (("vmin", vmin), ("vmax", vmax), ("linthresh", linthresh)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not math.isfinite(v):
            raise TypeError(f"{name}: expected a finite real number, got {v!r}")
    if not 0 <= vmin < 1 < vmax:
        raise ValueError(f"vmin, vmax: need 0 <= vmin < 1 < vmax, got {vmin}, {vmax}")
    if not 0 < linthresh < 1:
        raise ValueError(f"linthresh: must be in (0, 1), got {linthresh}")
    return _rho_norm_class()(vmin, vmax, linthresh)


def rho_norm(rho, vmax=None, linthresh=None):
    """A :func:`RhoNorm` covering the finite values of ``rho`` (an array, a StabilityMap or a list of them).

    ``vmax`` caps the upper end (values above it get the last colour; default: the largest finite ρ);
    ``linthresh``: resolution δ of the distance |ρ − 1| (default: the decade of the smallest non-zero |ρ − 1| of
    the data, within [1e-8, 1e-2])."""
    if isinstance(rho, StabilityMap):
        rho = [rho]
    if isinstance(rho, (list, tuple)):
        values = np.concatenate([np.ravel(np.asarray(r.rho if isinstance(r, StabilityMap) else r, dtype=float))
                                 for r in rho]) if rho else np.zeros(0)
    else:
        values = np.ravel(np.asarray(rho, dtype=float))
    finite = values[np.isfinite(values)]
    if linthresh is None:
        d = np.abs(finite - 1.0)
        d = d[d > 0]
        linthresh = 10.0 ** math.floor(math.log10(float(d.min()))) if d.size else 1e-3
        linthresh = min(max(linthresh, 1e-8), 1e-2)
    lo = float(finite.min()) if finite.size else 0.0
    hi = float(finite.max()) if finite.size else 2.0
    lo = min(max(lo, 0.0), 1.0 - linthresh)
    hi = max(hi, 1.0 + linthresh)
    if vmax is not None:
        if isinstance(vmax, bool) or not isinstance(vmax, (int, float)) or not vmax > 1:
            raise ValueError(f"vmax: must be a number > 1, got {vmax!r}")
        hi = float(vmax)
    return RhoNorm(lo, hi, linthresh)


def rho_colorbar(fig, mappable, ax, label=RHO_LABEL, **kwargs):
    """Colour bar of ρ with the ticks of the mappable's :func:`RhoNorm` on both sides of 1 (one bar for all the
    axes in ``ax``, which may be a list). Returns the colour bar."""
    norm = mappable.norm
    cb = fig.colorbar(mappable, ax=ax, **kwargs)
    if hasattr(norm, "ticks"):
        ticks = norm.ticks()
        cb.set_ticks(ticks)
        cb.set_ticklabels([norm.format_tick(v) for v in ticks])
        cb.ax.minorticks_off()
    cb.set_label(label + ("; stable below 1" if hasattr(norm, "ticks") else ""))
    return cb


def stability_scatter(smap, ax=None, title=None, s=6, labels=None, units=None, *, axes=None):
    """Stable (left) and unstable (right) grid points of a 3-axis map in 3-D (busch2016 Figs. 9-14).

    Parameters
    ----------
    smap : cosim.analysis.StabilityMap
        A map over three axes; positive axes are shown as log10.
    ax : pair of matplotlib 3-D Axes, optional
        (stable, unstable) axes made with ``projection="3d"`` to draw into; default: a new figure.
    title : str, optional
        The figure's title.
    s : float
        Marker size.
    labels, units : dict, optional
        Axis name -> text, overriding the axis names and :data:`UNITS` (``log10 ck [N/m]``).
    axes : pair of Axes, optional
        Deprecated name of ``ax``.

    Returns
    -------
    numpy.ndarray of Axes
        The two panels (stable, unstable).
    """
    ax = renamed(ax, axes, "ax", "axes", None)
    _check_map(smap, 3)
    labels, units = _check_dict(labels, "labels"), _check_dict(units, "units")
    from matplotlib.ticker import MaxNLocator

    def new_figure():
        fig = _plt().figure(figsize=(10, 4.8))
        return fig, [fig.add_subplot(1, 2, k, projection="3d") for k in (1, 2)]

    fig, axes = several(ax, 2, new_figure)
    coords, rho = smap.points()
    with np.errstate(invalid="ignore"):
        stable = rho < 1.0
        unstable = rho >= 1.0
    xyz, names = [], []
    for d in smap.dims:
        v = coords[d]
        log = bool(_log_axis(smap.coords[d]))
        xyz.append(np.log10(v) if log else v)
        names.append(_axis_label(d, labels, units, log10=log, short=True))
    for ax, sel, name, color in ((axes[0], stable, "stable ρ < 1", "tab:green"),
                                 (axes[1], unstable, "unstable ρ ≥ 1", "tab:red")):
        ax.scatter(xyz[0][sel], xyz[1][sel], xyz[2][sel], s=s, c=color, depthshade=False)
        ax.set_xlabel(names[0], fontsize=7, labelpad=0)
        ax.set_ylabel(names[1], fontsize=7, labelpad=0)
        ax.set_zlabel(names[2], fontsize=7, labelpad=0)
        ax.tick_params(labelsize=6, pad=0)
        for axis in (ax.xaxis, ax.yaxis, ax.zaxis):
            axis.set_major_locator(MaxNLocator(4, integer=True))
        for setlim, d in ((ax.set_xlim, 0), (ax.set_ylim, 1), (ax.set_zlim, 2)):
            setlim(np.min(xyz[d]), np.max(xyz[d]))
        # shrink the box inside its axes so that the z label is not cut by the panel to the right
        ax.set_box_aspect(None, zoom=0.78)
        ax.set_title(f"{name}: {int(np.count_nonzero(sel))}", fontsize=9)
    if title:
        fig.suptitle(title)
    return axes


def stability_slice(smap, ax=None, title=None, labels=None, units=None, norm=None, colorbar=True, rho_max=None,
                    **fixed):
    """ρ over two axes (e.g. ck and H for fixed dk: ``stability_slice(m, dk=1e3)``) with the stability boundary
    ρ = 1 drawn as a black contour.

    Colours: :func:`RhoNorm` (diverging at 1, logarithmic in |ρ − 1|; blue stable, red unstable, grey where ρ could
    not be computed).

    Parameters
    ----------
    smap : cosim.analysis.StabilityMap
        A map over two axes, or more with the others fixed by ``**fixed``.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    title : str, optional
        Default: the fixed axes' values.
    labels, units : dict, optional
        Axis name -> text.
    norm : RhoNorm, optional
        A shared colour scale (see :func:`stability_slices`).
    colorbar : bool
        False leaves the colour bar to the caller.
    rho_max : float, optional
        Caps the colour scale.
    **fixed
        Axis name -> value selecting the slice (``dk=1e3``).

    Returns
    -------
    matplotlib Axes
        The panel; its mesh is ``ax.collections[0]``.
    """
    _check_map(smap)
    labels, units = _check_dict(labels, "labels"), _check_dict(units, "units")
    if fixed:
        smap = smap.sel(**fixed)
    _check_map(smap, 2)
    fig, ax = one(ax, figsize=(5.8, 4.4), layout="constrained")
    x, y = smap.coords[smap.dims[0]], smap.coords[smap.dims[1]]
    rho = np.asarray(smap.rho, dtype=float)
    if norm is None:
        norm = rho_norm(rho, vmax=rho_max)
    elif not hasattr(norm, "ticks"):
        raise TypeError(f"norm: expected a cosim.plot.RhoNorm, got {type(norm).__name__}")
    cmap = _plt().get_cmap("RdBu_r").with_extremes(bad="0.75")
    mesh = ax.pcolormesh(_cell_edges(x), _cell_edges(y), np.ma.masked_invalid(rho).T, cmap=cmap, norm=norm)
    with np.errstate(invalid="ignore"):
        if np.nanmin(rho) < 1.0 < np.nanmax(rho) and min(rho.shape) >= 2:
            ax.contour(x, y, rho.T, levels=[1.0], colors="k", linewidths=1.2)
    if _log_axis(x):
        ax.set_xscale("log")
    if _log_axis(y):
        ax.set_yscale("log")
    ax.set_xlabel(_axis_label(smap.dims[0], labels, units))
    ax.set_ylabel(_axis_label(smap.dims[1], labels, units))
    if colorbar:
        rho_colorbar(fig, mesh, ax, extend="max" if np.nanmax(rho) > norm.vmax else "neither")
    fx = smap.meta.get("fixed", {})
    ax.set_title(title or ", ".join(f"{k} = {v:.3g} {units.get(k, UNITS.get(k, ''))}".rstrip()
                                    for k, v in fx.items()), fontsize=9)
    return ax


def stability_slices(maps, titles=None, ncols=None, labels=None, units=None, rho_max=None, figsize=None,
                     suptitle=None, ax=None, **fixed):
    """A grid of :func:`stability_slice` panels with one colour scale and one shared colour bar.

    Parameters
    ----------
    maps : list or dict of cosim.analysis.StabilityMap
        A list, or a dict title -> map; all are sliced with the same ``**fixed``.
    titles : list of str, optional
        Panel titles for a list.
    ncols : int, optional
        Panels per row of a new figure (default: up to 3).
    labels, units : dict, optional
        Axis name -> text.
    rho_max : float, optional
        Caps the colour scale.
    figsize : tuple, optional
        Size of a new figure.
    suptitle : str, optional
        The figure's title.
    ax : sequence of matplotlib Axes, optional
        One axes per map to draw into; default: a new figure.
    **fixed
        Axis name -> value selecting the slices.

    Returns
    -------
    numpy.ndarray of Axes
        One panel per map, in the order of ``maps``.
    """
    if isinstance(maps, dict):
        if titles is not None:
            raise TypeError("titles: give the titles as the keys of maps, or pass maps as a list")
        titles, maps = list(maps), list(maps.values())
    if isinstance(maps, StabilityMap) or not isinstance(maps, (list, tuple)) or not maps:
        raise TypeError("maps: expected a non-empty list or dict of cosim.analysis.StabilityMap")
    maps = [(_check_map(m).sel(**fixed) if fixed else _check_map(m)) for m in maps]
    for m in maps:
        _check_map(m, 2)
    if titles is not None and len(titles) != len(maps):
        raise ValueError(f"titles: expected {len(maps)} titles, got {len(titles)}")
    if ncols is None:
        ncols = min(3, len(maps))
    if isinstance(ncols, bool) or not isinstance(ncols, int) or ncols < 1:
        raise ValueError(f"ncols: must be a positive int, got {ncols!r}")
    nrows = -(-len(maps) // ncols)
    fig, used = several(ax, len(maps), lambda: _plt().subplots(
        nrows, ncols, figsize=figsize or (3.6 * ncols + 1.2, 3.1 * nrows + 0.6), sharex=True, sharey=True,
        squeeze=False, layout="constrained"))
    norm = rho_norm(maps, vmax=rho_max)
    for i, (m, panel) in enumerate(zip(maps, used)):
        stability_slice(m, ax=panel, title=titles[i] if titles is not None else None, labels=labels, units=units,
                        norm=norm, colorbar=False)
        if ax is None and i % ncols:
            panel.set_ylabel("")
        if ax is None and i // ncols != (len(maps) - 1) // ncols and i + ncols < len(maps):
            panel.set_xlabel("")
    top = max(float(np.nanmax(m.rho)) for m in maps)
    rho_colorbar(fig, used[0].collections[0], list(used), extend="max" if top > norm.vmax else "neither",
                 shrink=0.9 if nrows > 1 else 1.0)
    if suptitle:
        fig.suptitle(suptitle)
    return used


def stable_limit(smap, along="H"):
    """The largest stable value of one axis over the others: the stability boundary of a 3-axis map as a 2-D array.

    Parameters
    ----------
    smap : cosim.analysis.StabilityMap
        A map over two or more axes.
    along : str
        The axis to look along (default the macro step H).

    Returns
    -------
    limit : ndarray
        Over the other axes (in the map's order): the largest grid value h of ``along`` such that every grid value
        up to h is stable (ρ(Ω) < 1); -inf where even the smallest is unstable, +inf where all are stable.
    above : int
        Stable grid points above that limit (stable again after an unstable value; the limit does not show them).
    """
    _check_map(smap)
    if along not in smap.dims:
        raise ValueError(f"along: unknown axis {along!r}; axes are {smap.dims}")
    if smap.rho.ndim < 2:
        raise ValueError(f"smap: expected at least 2 axes, got {smap.dims}")
    axis = smap.dims.index(along)
    h = np.asarray(smap.coords[along], dtype=float)
    order = np.argsort(h)
    stable = np.moveaxis(smap.stable, axis, -1)[..., order]
    h = h[order]
    unstable = ~stable
    first = np.where(unstable.any(axis=-1), unstable.argmax(axis=-1), h.size)   # index of the first unstable h
    limit = np.where(first == 0, -np.inf, h[np.maximum(first - 1, 0)])
    limit = np.where(first == h.size, np.inf, limit)
    above = int(np.count_nonzero(stable & (np.arange(h.size) > first[..., None])))
    return limit, above


def stable_limit_map(smap, along="H", ax=None, title=None, labels=None, units=None, norm=None, colorbar=True):
    """The stable region of a 3-axis map (busch2016 Figs. 9-14) as a 2-D map: over the two other axes (e.g. ck and
    dk), the largest ``along`` (e.g. the macro step H) up to which every grid value is stable (:func:`stable_limit`).

    Colours: the limit on a log scale; red ("under"): unstable already at the smallest value, green
    ("over"): stable at every value of the grid.

    Parameters
    ----------
    smap : cosim.analysis.StabilityMap
        A map over three axes (or two: then the map is one line of cells).
    along : str
        The axis whose stable limit is shown (default "H").
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    title : str, optional
        Default: the map's approximation and scheme, and the stable points above the limit where there are any.
    labels, units : dict, optional
        Axis name -> text, overriding :data:`LABELS` and :data:`UNITS`.
    norm : matplotlib.colors.LogNorm, optional
        A shared colour scale (several panels); default: the grid range of ``along``.
    colorbar : bool
        False leaves the colour bar to the caller (:func:`stable_limit_colorbar`).

    Returns
    -------
    matplotlib Axes
        The panel; its mesh is ``ax.collections[0]``.
    """
    _check_map(smap, 3)
    labels, units = _check_dict(labels, "labels"), _check_dict(units, "units")
    from matplotlib.colors import LogNorm
    limit, above = stable_limit(smap, along)
    h = np.asarray(smap.coords[along], dtype=float)
    if norm is None:
        norm = LogNorm(float(h.min()), float(h.max()))
    # -inf/+inf become values outside the norm: matplotlib draws them in the "under"/"over" colours
    shown = np.where(np.isneginf(limit), norm.vmin / 10.0, np.where(np.isposinf(limit), norm.vmax * 10.0, limit))
    fig, ax = one(ax, figsize=(5.8, 4.4), layout="constrained")
    dims = [d for d in smap.dims if d != along]
    x, y = smap.coords[dims[0]], smap.coords[dims[1]]
    # cividis (blue to yellow) holds no green or red: the "over" green and "under" red cannot be taken for values
    cmap = _plt().get_cmap("cividis").with_extremes(under="#d73027", over="#1a9850")
    ax.pcolormesh(_cell_edges(x), _cell_edges(y), shown.T, cmap=cmap, norm=norm)
    if _log_axis(x):
        ax.set_xscale("log")
    if _log_axis(y):
        ax.set_yscale("log")
    ax.set_xlabel(_axis_label(dims[0], labels, units))
    ax.set_ylabel(_axis_label(dims[1], labels, units))
    if colorbar:
        stable_limit_colorbar(fig, ax.collections[0], ax, along, labels, units)
    if title is None:
        title = f"{smap.approximation!r}, {smap.scheme}" + (f"\n({above} stable points above the limit)"
                                                              if above else "")
    ax.set_title(title, fontsize=9)
    return ax


def stable_limit_colorbar(fig, mappable, ax, along="H", labels=None, units=None, **kwargs):
    """The colour bar of :func:`stable_limit_map` (one bar for all the axes in ``ax``, which may be a list):
    the largest stable value of ``along``, with the red end "unstable at every value" and the green end "stable at
    every value". Returns the colour bar."""
    labels, units = _check_dict(labels, "labels"), _check_dict(units, "units")
    cb = fig.colorbar(mappable, ax=ax, extend="both", extendfrac=0.06, **kwargs)
    name = labels.get(along, LABELS.get(along, along))
    short = name.split()[-1]
    cb.set_label(with_unit(f"largest stable {name}", units.get(along, UNITS.get(along, ""))) +
                 f"\n(green tip: stable at every {short}; red tip: at none)", fontsize=8)
    return cb


def local_error_plot(results, ax=None, which="all", title=None, xlabel="macro step H [s]", ylabel=None):
    """max |ε| over H on log-log axes (busch2016 Fig. 15); the legend gives the fitted order of each curve.

    Parameters
    ----------
    results : LocalError or dict
        One :class:`cosim.analysis.LocalError` or ``{label: LocalError}``.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    which : {"all", "x", "y"}
        Which part of the local error ε of one macro step is shown (states, outputs or both).
    title, xlabel, ylabel : str, optional
        Override the title and the axis labels.

    Returns
    -------
    matplotlib Axes
    """
    if isinstance(results, LocalError):
        results = {"": results}
    if not isinstance(results, dict) or not all(isinstance(v, LocalError) for v in results.values()):
        raise TypeError("results: expected a LocalError or a dict {label: LocalError}")
    if which not in ("x", "y", "all"):
        raise ValueError(f"which: must be 'x', 'y' or 'all', got {which!r}")
    _, ax = one(ax, figsize=(5, 4), layout="constrained")
    for label, le in results.items():
        e = le.norm(which)
        scale = np.max(np.abs(le.exact))
        p = fit_order(le.H, e, scale=scale)
        pos = e > 0
        ax.loglog(le.H[pos], e[pos], "o-", ms=3, label=f"{label} (order {p:.1f})")
    ax.set_xlabel(xlabel)
    what = {"x": "states x", "y": "outputs y", "all": "x and y"}[which]
    ax.set_ylabel(ylabel or f"local error max |ε| ({what})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    if title:
        ax.set_title(title, fontsize=9)
    return ax


# ------------------------------------------------------------------------- genser2020 §13.3 plots
def bohl_plot(phi, m, ax=None, label=None, **kwargs):
    """β̄_m over the window length m (:func:`bohl_exponent`), with the stability limit β = 1.

    Parameters
    ----------
    phi, m
        As :func:`cosim.stability_theory.bohl_exponent` (``**kwargs`` too).
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    label : str, optional
        Legend entry of the curve.

    Returns
    -------
    matplotlib Axes
    """
    _, ms = window_lengths(m)
    beta = np.atleast_1d(bohl_exponent(phi, ms, **kwargs))
    _, ax = one(ax, figsize=(5, 3.5))
    ax.plot(ms, beta, "o-", ms=3, label=label)
    ax.axhline(1.0, color="k", lw=0.8, ls="--")
    ax.set_xlabel("window length m [macro steps]")
    ax.set_ylabel(r"Bohl exponent estimate $\bar\beta_m$ [-]")
    ax.set_title("Bohl exponent estimate")
    if label:
        ax.legend()
    return ax


def norm_plot(phi_A, phi_B=None, ax=None):
    """Spectral norms ||φ_A^k|| (and ||φ_B^k||) over k: the boundedness check as a figure.

    Parameters
    ----------
    phi_A, phi_B
        As :func:`cosim.stability_theory.boundedness`.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.

    Returns
    -------
    matplotlib Axes
    """
    b = boundedness(phi_A, phi_B)
    _, ax = one(ax, figsize=(5, 3.5))
    ax.semilogy(b.norms_A, label=r"$\|\varphi_A^k\|_2$")
    if b.norms_B is not None:
        ax.semilogy(b.norms_B, label=r"$\|\varphi_B^k\|_2$")
    ax.set_xlabel("macro step k")
    ax.set_ylabel("spectral norm [-]")
    ax.legend()
    return ax


#: the categories of :func:`timing`'s bars (kraft2021 Fig. 4.5): key in the subsystem stats, label, colour
TIMING_PARTS = (("solver_time", "solver", "#1f77b4"), ("idle_time", "solver (idle)", "#aec7e8"),
                ("save_time", "sws dump", "#ff7f0e"), ("interface_time", "interface", "#2ca02c"))


def timing(res, ax=None, title=None, subsystems=None):
    """Stacked bars of where the time of a co-simulation went, per subsystem (kraft2021 Fig. 4.5 / §16.3): solver
    time Σ_N T^solv_{L,N}, idle time at the macro barrier (eq. 4.5), save/restore ("sws dump") and the interface
    work every subsystem waits for.

    Parameters
    ----------
    res : cosim.Result
        From ``simulate(..., timing=True)``.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    title : str, optional
        Default: the thread count and the idle fraction.
    subsystems : list of str, optional
        Names to show (default all; coupling-element units of chains included).

    Returns
    -------
    matplotlib Axes
    """
    from .result import Result
    if not isinstance(res, Result):
        raise TypeError(f"res: expected a cosim.Result, got {type(res).__name__}")
    stats = res.stats.get("subsystems") or {}
    if "timing" not in res.stats or not all("solver_time" in st for st in stats.values()):
        raise ValueError("res: no timing data; run cosim.simulate(..., timing=True)")
    names = list(stats) if subsystems is None else list(subsystems)
    unknown = [n for n in names if n not in stats]
    if unknown:
        raise ValueError(f"subsystems: unknown names {unknown}")
    _, ax = one(ax, figsize=(max(4.0, 0.35 * len(names) + 2.0), 3.5))
    pos = np.arange(len(names))
    bottom = np.zeros(len(names))
    for key, label, colour in TIMING_PARTS:
        v = np.array([stats[n].get(key, 0.0) for n in names])
        ax.bar(pos, v, bottom=bottom, label=label, color=colour, width=0.8)
        bottom += v
    ax.set_xticks(pos)
    ax.set_xticklabels(names, rotation=90 if len(names) > 12 else 0)
    ax.set_xlabel("subsystem")
    ax.set_ylabel("wall time [s]")
    tm = res.stats["timing"]
    ax.set_title(title or f"threads = {tm['threads']}, idle fraction {tm['idle_fraction']:.2f}")
    ax.legend(fontsize="small")
    return ax
