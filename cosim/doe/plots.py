"""Figures of a study (genser2020 §12): main-effect plots, the MS heat map of an ANOVA (main effects on the
diagonal, two-factor interactions off it), the ascending-sorting plot and the histograms of the nearly optimal
runs (§12.3). Every function takes ``ax=`` (where to draw; default: a new figure) and returns its Axes (an array
of them, one per panel, where it draws several), matplotlib's convention. Units come from the table's
``attrs["doe"]["units"]`` ({factor or response: unit}: ``Study(units=...)`` and the built-in responses') and
``units=``, which adds to or overrides them; numeric factors whose levels are log-spaced
(geometric, spanning a decade or more) get log axes; panels that are compared share their scale."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._axes import one, several, with_unit
from .analysis import check_table, optimum
from .factors import check_units

__all__ = ["main_effects", "interaction_heatmap", "sorted_runs", "optimum_histograms"]


def _grid(n, width=3.2, height=2.8, sharey=False):
    """A new figure of up to 4 panels per row for ``n`` panels."""
    import matplotlib.pyplot as plt
    cols = min(n, 4)
    rows = int(math.ceil(n / cols))
    return plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False, sharey=sharey)


def _units(df, units):
    """The table's units (``attrs["doe"]["units"]``) updated with ``units``."""
    return {**((df.attrs.get("doe") or {}).get("units") or {}), **check_units(units)}


def _label(name, units):
    return with_unit(name, units.get(name))


def _squared(unit):
    """The unit of a sum of squares of a quantity in ``unit`` (None where that is not known)."""
    if not unit:
        return None
    return unit if unit == "-" else f"({unit})²"


def _numeric(col):
    return pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)


def log_spaced(values) -> bool:
    """Whether numeric levels are log-spaced: all > 0, spanning at least a decade, and closer to evenly spaced in
    log10 than linearly (the rule of every DoE plot's log axes)."""
    v = np.unique(np.asarray(values, dtype=float))
    if v.size < 2 or not np.all(v > 0) or v[-1] / v[0] < 10:
        return False
    if v.size == 2:
        return True
    lg, ln = np.diff(np.log10(v)), np.diff(v)
    return np.std(lg) / np.mean(lg) < np.std(ln) / np.mean(ln)


def main_effects(df, response="eps_mono", factors=None, ax=None, units=None):
    """Mean of ``response`` per level of every factor (one panel per factor, the grand mean dashed).

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors the table carries.
    ax : sequence of matplotlib Axes, optional
        One axes per factor to draw into; default: a new figure (panels share the response's scale, so the
        effects compare).
    units : dict, optional
        {name: unit} for the axis labels, added to the table's ``attrs["doe"]["units"]``.

    Returns
    -------
    numpy.ndarray of Axes
        One panel per factor.
    """
    factors, y = check_table(df, factors, response)
    units = _units(df, units)
    fig, axes = several(ax, len(factors), lambda: _grid(len(factors), sharey=True))
    grand = float(np.nanmean(y))
    for panel, f in zip(axes, factors):
        means = df.groupby(f, sort=True)[response].mean()
        if _numeric(df[f]):            # at the levels' values, on a log axis where they are log-spaced
            x = means.index.to_numpy(dtype=float)
            panel.plot(x, means.to_numpy(dtype=float), "o-")
            if log_spaced(x):
                panel.set_xscale("log")
        else:
            panel.plot(range(len(means)), means.to_numpy(dtype=float), "o-")
            panel.set_xticks(range(len(means)), [str(v) for v in means.index], fontsize=8)
        panel.axhline(grand, ls="--", lw=0.8, color="grey")
        panel.set_xlabel(_label(f, units), fontsize=9)
        panel.tick_params(labelsize=8)
    axes[0].set_ylabel(f"mean {_label(response, units)}", fontsize=9)
    if ax is None:
        fig.suptitle(f"main effects on {response} (dashed: grand mean)", fontsize=10)
        fig.tight_layout()
    return axes


def interaction_heatmap(table, value="MS", log=True, ax=None, units=None):
    """Heat map of an :func:`cosim.doe.anova` table: main effects on the diagonal and the two-factor interactions
    off it (symmetric).

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`cosim.doe.anova` returns.
    value : {"MS", "SS", "percent"}
        The column shown.
    log : bool
        A logarithmic colour scale.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.
    units : dict, optional
        {name: unit}, added to the units the table carries (``attrs["units"]``, the study's); the colour bar gives
        SS and MS in the square of the response's unit ("-" stays "-"), percent in %.

    Returns
    -------
    matplotlib Axes
    """
    if not isinstance(table, pd.DataFrame) or value not in table.columns:
        raise ValueError(f"table: expected an anova() table with a {value!r} column")
    mains = [e for e in table.index if ":" not in e and e != "Residual"]
    k = len(mains)
    M = np.full((k, k), np.nan)
    for i, a in enumerate(mains):
        M[i, i] = table.loc[a, value]
        for j, b in enumerate(mains):
            for e in (f"{a}:{b}", f"{b}:{a}"):
                if e in table.index:
                    M[i, j] = M[j, i] = table.loc[e, value]
    # numerical zeros (an effect of ~1e-16 where there is none) would stretch the colour scale over 15 decades:
    # values below 1e-12 of the largest are shown as zero (grey) and left out of the scale
    finite = M[np.isfinite(M)]
    floor = 1e-12 * float(np.max(np.abs(finite))) if finite.size else 0.0
    zero = np.isfinite(M) & (np.abs(M) <= floor)
    shown = np.where(((M > 0) if log else True) & ~zero, M, np.nan)
    response = table.attrs.get("response", "the response")
    units = {**(table.attrs.get("units") or {}), **check_units(units)}
    unit = "%" if value == "percent" else _squared(units.get(response))
    new = ax is None
    side = max(4.2, 1.6 + 0.75 * k)
    fig, ax = one(ax, figsize=(side + 1.2, side))
    import matplotlib
    from matplotlib.colors import LogNorm
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="0.85")
    kept = shown[np.isfinite(shown)]
    norm = LogNorm(kept.min(), kept.max()) if log and kept.size else None
    im = ax.imshow(np.ma.masked_invalid(shown), cmap=cmap, norm=norm)
    ax.set_xticks(range(k), mains, rotation=45, ha="right", fontsize=9)
    ax.set_yticks(range(k), mains, fontsize=9)
    fig.colorbar(im, ax=ax, label=with_unit(f"{value} of {response}", unit), shrink=0.85)
    ax.set_title(f"ANOVA {value}\nmain effects (diagonal), interactions; grey: zero", fontsize=10)
    if new:
        fig.tight_layout()
    return ax


def sorted_runs(df, response="eps_mono", factors=None, ax=None, units=None):
    """genser2020 §12.1's ascending sorting: the response over the runs sorted by it, and every factor's value in
    that order (one row per factor).

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors the table carries.
    ax : sequence of matplotlib Axes, optional
        ``len(factors) + 1`` axes (the response first) to draw into; default: a new figure.
    units : dict, optional
        {name: unit} for the axis labels, added to the table's ``attrs["doe"]["units"]``.

    Returns
    -------
    numpy.ndarray of Axes
        The response's panel, then one per factor.
    """
    import matplotlib.pyplot as plt
    factors, _ = check_table(df, factors, response)
    units = _units(df, units)
    s = df.sort_values(response, kind="mergesort", na_position="last")
    n = len(factors) + 1
    fig, axes = several(ax, n, lambda: plt.subplots(n, 1, figsize=(7, 1.3 * n + 0.6), sharex=True))
    axes[0].plot(np.arange(len(s)), s[response].to_numpy(dtype=float), lw=1)
    axes[0].set_ylabel(_label(response, units), fontsize=8)
    if log_spaced(s[response].dropna().to_numpy(dtype=float)):
        axes[0].set_yscale("log")
    for panel, f in zip(axes[1:], factors):
        v = s[f]
        if _numeric(v):
            panel.plot(np.arange(len(s)), v.to_numpy(dtype=float), ".", ms=3)
            if log_spaced(v.to_numpy(dtype=float)):
                panel.set_yscale("log")
        else:
            codes, uniq = pd.factorize(v, sort=True)
            panel.plot(np.arange(len(s)), codes, ".", ms=3)
            panel.set_yticks(range(len(uniq)), [str(u) for u in uniq], fontsize=7)
        panel.set_ylabel(_label(f, units), fontsize=8)
    axes[-1].set_xlabel("run (sorted by ascending response)")
    if ax is None:
        fig.tight_layout()
    return axes


def optimum_histograms(df, response="eps_mono", factors=None, ax=None, units=None, **rule):
    """Histograms of the factor levels among the nearly optimal runs (genser2020 §12.3's figures); the optimum is
    marked in each panel's title.

    Parameters
    ----------
    df : pandas.DataFrame
        A study's table.
    response : str
        The response column.
    factors : list of str, optional
        Default: the factors the table carries.
    ax : sequence of matplotlib Axes, optional
        One axes per factor to draw into; default: a new figure.
    units : dict, optional
        {name: unit} for the axis labels, added to the table's ``attrs["doe"]["units"]``.
    **rule
        As :func:`cosim.doe.optimum` (``tol``, ``top``, ``min_runs``).

    Returns
    -------
    numpy.ndarray of Axes
        One panel per factor.
    """
    opt = optimum(df, response, factors, **rule)
    units = _units(df, units)
    factors = list(opt.index)
    fig, axes = several(ax, len(factors), lambda: _grid(len(factors), sharey=True))
    for panel, f in zip(axes, factors):
        counts = opt.attrs["counts"][f]
        keys = sorted(counts, key=lambda v: (isinstance(v, str), v))
        panel.bar(range(len(keys)), [counts[k] for k in keys])
        panel.set_xticks(range(len(keys)), [f"{k:g}" if isinstance(k, float) else str(k) for k in keys],
                      rotation=45, fontsize=7)
        v = opt[f]
        value = f"{v:.3g} {units.get(f) or ''}".rstrip() if isinstance(v, float) else str(v)
        panel.set_title(f"optimum {value}", fontsize=9)
        panel.set_xlabel(_label(f, units), fontsize=9)
    axes[0].set_ylabel(f"count (of {opt.attrs['n']} runs)")
    if ax is None:
        fig.tight_layout()
    return axes
