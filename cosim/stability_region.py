"""Stability region of a coupling method on genser2020's (log10(ck/dk), ΔT) plane (§11.4) and its area.

Every grid point (ρ = ck/dk, ΔT) is one co-simulation of the dual-mass oscillator (or of ``build(ck, dk)``),
classified by the 20 % amplitude rule (:func:`cosim.metrics.is_stable`; a run stopped as diverged is unstable).
The **area** is that of the connected stable region: the largest 4-connected component of stable grid points that
contains a point of the smallest ΔT (isolated islands, e.g. ZOH's aliasing corner, are ignored). Each grid point
stands for the cell between the midpoints to its neighbours (the smallest ΔT cell reaches down to ΔT = 0, the
outer log10 ρ cells are half cells), in ms · l_x (l_x = one decade of ck/dk).

(ck, dk) families (one per run; areas are only comparable within a family, spec §11.4 [AMB]):
``"product"``: ck·dk = ``product`` (default 1e8, the nominal 1e5·1e3), ck = sqrt(product ρ), dk = sqrt(product/ρ);
``"ck"``: ck fixed (default 2e5), dk = ck/ρ.
"""
from __future__ import annotations

import math
import time

import numpy as np

__all__ = ["StabilityRegion", "stability_region_area", "default_ratios", "default_H"]


def default_ratios():
    """log10(ck/dk) ∈ {−3, −2.75, …, 5} (spec §11.4 suggestion)."""
    return 10.0 ** np.arange(-3.0, 5.0 + 1e-9, 0.25)


def default_H():
    """ΔT ∈ {0.5, 1, 2, …, 10} ms (spec §11.4 suggestion)."""
    return np.array([0.5e-3] + [k * 1e-3 for k in range(1, 11)])


class StabilityRegion:
    """Result of :func:`stability_region_area`: ``ratios`` (ck/dk), ``H`` (ΔT [s]), ``stable`` (len(H) x len(ratios)
    bool), ``region`` (the connected component counted), ``eps`` (ε_mono,global per point, NaN if not computed),
    ``area`` [ms · l_x], ``family``, ``ck``/``dk`` per ratio, ``wall_time`` [s], ``label``."""

    def __init__(self, ratios, H, stable, region, eps, area, family, ck, dk, wall_time, label):
        self.ratios, self.H, self.stable, self.region, self.eps = ratios, H, stable, region, eps
        self.area, self.family, self.ck, self.dk, self.wall_time, self.label = area, family, ck, dk, wall_time, label

    def __repr__(self):
        return (f"StabilityRegion({self.label}: area {self.area:.3g} ms·l_x on {len(self.H)}x{len(self.ratios)} "
                f"points, family {self.family!r})")

    def plot(self, ax=None, color="C0", legend=True):
        """The stable region on genser2020's plane (thesis Fig. 3.62/3.63 style): x = log10(ck/dk) with ck/dk in
        1/s (one decade is the unit l_x of the area), y = the macro step ΔT [ms].

        The counted region (the connected stable component whose area is :attr:`area`) is a shaded patch with its
        boundary; its grid points are filled dots, stable islands outside it (not counted) open circles. Several
        regions can share one axes (call once per region with another ``color``).

        Parameters
        ----------
        ax : matplotlib Axes, optional
            Where to draw; default: a new figure.
        color : matplotlib colour
            Colour of this region.
        legend : bool
            Draw (or update) the axes' legend below the plot, outside the data.

        Returns
        -------
        matplotlib Axes
        """
        from ._axes import one, with_unit
        if not isinstance(legend, bool):
            raise TypeError(f"legend: expected True or False, got {legend!r}")
        _, ax = one(ax, figsize=(5.5, 4.2), layout="constrained")
        lx, Hms = np.log10(self.ratios), self.H * 1e3
        X, Yh = np.meshgrid(lx, Hms)
        if self.region.any():
            from matplotlib.colors import ListedColormap
            ax.pcolormesh(lx, Hms, np.ma.masked_where(~self.region, np.ones(self.region.shape)),
                          cmap=ListedColormap([color]), alpha=0.22, shading="nearest", edgecolors="none")
            if min(self.region.shape) >= 2:
                ax.contour(lx, Hms, self.region.astype(float), levels=[0.5], colors=[color], linewidths=1.2)
        ax.scatter(X[self.region], Yh[self.region], s=14, color=color,
                   label=f"{self.label}: stable, A = {self.area:.3g} ms·l_x")
        isl = self.stable & ~self.region
        if isl.any():
            ax.scatter(X[isl], Yh[isl], s=14, facecolors="none", edgecolors=color,
                       label=f"{self.label}: stable island (not in A)")
        ax.set_xlim(lx[0] - 0.25, lx[-1] + 0.25)
        ax.set_ylim(0.0, self.H[-1] * 1e3 * 1.05)
        # the axis counts decades of ck/dk, the unit l_x of the area (one decade)
        ax.set_xlabel(with_unit("log10(ck/dk), ck/dk in 1/s", "l_x") + ", 1 l_x = 1 decade")
        ax.set_ylabel(with_unit("macro step ΔT", "ms"))
        ax.grid(True, alpha=0.3)
        if legend:
            ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), fontsize=8, ncol=2, frameon=False)
        return ax


def _cells(x, lower_to_zero):
    """Cell extents of grid points x (sorted): midpoints between neighbours."""
    x = np.asarray(x, dtype=float)
    if x.size == 1:
        return np.array([x[0] if lower_to_zero else 1.0])
    mid = 0.5 * (x[1:] + x[:-1])
    lo = np.concatenate([[0.0 if lower_to_zero else x[0]], mid])
    hi = np.concatenate([mid, [x[-1]]])
    return hi - lo


def _component(stable):
    """The largest 4-connected component of ``stable`` touching row 0 (smallest ΔT)."""
    nH, nr = stable.shape
    label = np.zeros(stable.shape, dtype=int)
    best, best_size, cur = None, 0, 0
    for j in range(nr):
        if not stable[0, j] or label[0, j]:
            continue
        cur += 1
        stack, members = [(0, j)], []
        label[0, j] = cur
        while stack:
            a, b = stack.pop()
            members.append((a, b))
            for da, db in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                p, q = a + da, b + db
                if 0 <= p < nH and 0 <= q < nr and stable[p, q] and not label[p, q]:
                    label[p, q] = cur
                    stack.append((p, q))
        if len(members) > best_size:
            best, best_size = cur, len(members)
    return label == best if best is not None else np.zeros_like(stable)


def _family(ratios, family, product, ck):
    if family == "product":
        return np.sqrt(product * ratios), np.sqrt(product / ratios)
    if family == "ck":
        return np.full(ratios.shape, float(ck)), float(ck) / ratios
    raise ValueError(f"family: must be 'product' or 'ck', got {family!r}")


def stability_region_area(build=None, coupling=None, H=None, ratios=None, family="product", *, product=1e8,
                          ck=2e5, t_end=0.2, solver=None, update="simplified", accuracy=False,
                          label=None) -> StabilityRegion:
    """Stable region and its area for one coupling method on the (log10(ck/dk), ΔT) plane (genser2020 §11.4, §13.2).

    Parameters
    ----------
    build : callable (ck, dk) -> CoupledSystem (default: ``cosim.models.two_mass_oscillator(ck, dk)``, the linear
        DMO with force/displacement coupling, x1(0) = 0.1).
    coupling : a :mod:`cosim.coupling` method (``cosim.PreStep()``, ``cosim.NEPCE()``, ``cosim.FOH()``) or None
        (ZOH).
    H : macro steps ΔT [s] (default :func:`default_H`, 0.5-10 ms); ratios : ck/dk values (default
        :func:`default_ratios`, 1e-3 … 1e5 in quarter decades).
    family, product, ck : the documented (ck, dk) family (module docstring).
    t_end : simulated time per run (0.2 s as the spec's prototype; ΔT not dividing it shortens the last step).
    solver : default explicit Euler with δt = 1e-5 s (genser §10.1).
    update : "simplified" (default): units report outputs with their own end-of-step input, as in the thesis.
    accuracy : also compute ε_mono,global of every stable point against the monolithic solution.
    """
    from . import metrics
    from .errors import CosimError
    from .models import two_mass_oscillator
    from .simulate import simulate, simulate_monolithic
    from .solvers import Euler
    if build is None:
        build = two_mass_oscillator
    if not callable(build):
        raise TypeError(f"build: expected a callable (ck, dk) -> CoupledSystem, got {build!r}")
    Hs = default_H() if H is None else np.atleast_1d(np.asarray(H, dtype=float))
    rs = default_ratios() if ratios is None else np.atleast_1d(np.asarray(ratios, dtype=float))
    if Hs.ndim != 1 or Hs.size == 0 or not np.all(np.isfinite(Hs)) or not np.all(Hs > 0) or \
            not np.all(np.diff(Hs) > 0):
        raise ValueError("H: expected increasing positive finite step sizes")
    if rs.ndim != 1 or rs.size == 0 or not np.all(np.isfinite(rs)) or not np.all(rs > 0) or \
            not np.all(np.diff(rs) > 0):
        raise ValueError("ratios: expected increasing positive finite ck/dk values")
    if isinstance(product, bool) or not isinstance(product, (int, float)) or not product > 0:
        raise ValueError(f"product: must be a positive number, got {product!r}")
    if isinstance(t_end, bool) or not isinstance(t_end, (int, float)) or not t_end > 0:
        raise ValueError(f"t_end: must be a positive number, got {t_end!r}")
    if np.any(Hs > t_end):
        raise ValueError("H: every step must be <= t_end")
    cks, dks = _family(rs, family, float(product), ck)
    solver = Euler(h=1e-5) if solver is None else solver
    stable = np.zeros((Hs.size, rs.size), dtype=bool)
    eps = np.full(stable.shape, np.nan)
    t0 = time.perf_counter()
    for j, (c, d) in enumerate(zip(cks, dks)):
        system = build(float(c), float(d))
        ref = None
        for i, h in enumerate(Hs):
            try:
                res = simulate(system, t_end=t_end, H=float(h), solver=solver, coupling=coupling, update=update,
                               last_step="shorten", divergence_growth=math.inf)
                ok = metrics.is_stable(res)
            except CosimError:
                ok, res = False, None
            stable[i, j] = ok
            if accuracy and ok:
                ref = simulate_monolithic(system, t_end=t_end, t_eval=res.t)
                eps[i, j] = metrics.eps_mono(res, ref)
    wall = time.perf_counter() - t0
    region = _component(stable)
    cell = np.outer(_cells(Hs * 1e3, True), _cells(np.log10(rs), False))
    area = float(np.sum(cell[region]))
    if label is None:
        label = "ZOH" if coupling is None else type(coupling).__name__
    return StabilityRegion(rs, Hs, stable, region, eps, area, family, cks, dks, wall, label)
