"""Figures of a study (genser2020 §12): main-effect plots, the MS heat map of an ANOVA (main effects on the
diagonal, two-factor interactions off it), the ascending-sorting plot and the histograms of the nearly optimal
runs (§12.3). Every function takes ``ax=`` (where to draw; default: a new figure) and returns its Axes (an array
of them, one per panel, where it draws several), matplotlib's convention."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .._axes import one, several
from .analysis import check_table, optimum

__all__ = ["main_effects", "interaction_heatmap", "sorted_runs", "optimum_histograms"]


def _grid(n, width=3.2, height=2.6):
    """A new figure of up to 4 panels per row for ``n`` panels."""
    import matplotlib.pyplot as plt
    cols = min(n, 4)
    rows = int(math.ceil(n / cols))
    return plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)


def main_effects(df, response="eps_mono", factors=None, ax=None):
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
        One axes per factor to draw into; default: a new figure.

    Returns
    -------
    numpy.ndarray of Axes
        One panel per factor.
    """
    factors, y = check_table(df, factors, response)
    fig, axes = several(ax, len(factors), lambda: _grid(len(factors)))
    grand = float(np.nanmean(y))
    for panel, f in zip(axes, factors):
        means = df.groupby(f, sort=True)[response].mean()
        panel.plot(range(len(means)), means.to_numpy(dtype=float), "o-")
        panel.set_xticks(range(len(means)), [f"{v:g}" if isinstance(v, float) else str(v) for v in means.index],
                      rotation=45, fontsize=7)
        panel.axhline(grand, ls="--", lw=0.8, color="grey")
        panel.set_title(f, fontsize=9)
    axes[0].set_ylabel(f"mean {response}")
    if ax is None:
        fig.tight_layout()
    return axes


def interaction_heatmap(table, value="MS", log=True, ax=None):
    """Heat map of an :func:`cosim.doe.anova` table: main effects on the diagonal and the two-factor interactions
    off it (symmetric).

    Parameters
    ----------
    table : pandas.DataFrame
        What :func:`cosim.doe.anova` returns.
    value : {"MS", "SS", "percent"}
        The column shown.
    log : bool
        Colour by log10 of the value.
    ax : matplotlib Axes, optional
        Where to draw; default: a new figure.

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
    shown = np.log10(np.where(M > 0, M, np.nan)) if log else M
    new = ax is None
    fig, ax = one(ax, figsize=(1.0 + 0.7 * k, 0.6 + 0.6 * k))
    im = ax.imshow(shown, cmap="viridis")
    ax.set_xticks(range(k), mains, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(range(k), mains, fontsize=8)
    fig.colorbar(im, ax=ax, label=f"log10 {value}" if log else value)
    ax.set_title(f"ANOVA {value}: main effects (diagonal), interactions", fontsize=9)
    if new:
        fig.tight_layout()
    return ax


def sorted_runs(df, response="eps_mono", factors=None, ax=None):
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

    Returns
    -------
    numpy.ndarray of Axes
        The response's panel, then one per factor.
    """
    import matplotlib.pyplot as plt
    factors, _ = check_table(df, factors, response)
    s = df.sort_values(response, kind="mergesort", na_position="last")
    n = len(factors) + 1
    fig, axes = several(ax, n, lambda: plt.subplots(n, 1, figsize=(7, 1.3 * n), sharex=True))
    axes[0].plot(np.arange(len(s)), s[response].to_numpy(dtype=float), lw=1)
    axes[0].set_ylabel(response, fontsize=8)
    for panel, f in zip(axes[1:], factors):
        v = s[f]
        if pd.api.types.is_numeric_dtype(v) and not pd.api.types.is_bool_dtype(v):
            panel.plot(np.arange(len(s)), v.to_numpy(dtype=float), ".", ms=1.5)
        else:
            codes, uniq = pd.factorize(v, sort=True)
            panel.plot(np.arange(len(s)), codes, ".", ms=1.5)
            panel.set_yticks(range(len(uniq)), [str(u) for u in uniq], fontsize=7)
        panel.set_ylabel(f, fontsize=8)
    axes[-1].set_xlabel("run (sorted by ascending response)")
    if ax is None:
        fig.tight_layout()
    return axes


def optimum_histograms(df, response="eps_mono", factors=None, ax=None, **rule):
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
    **rule
        As :func:`cosim.doe.optimum` (``tol``, ``top``, ``min_runs``).

    Returns
    -------
    numpy.ndarray of Axes
        One panel per factor.
    """
    opt = optimum(df, response, factors, **rule)
    factors = list(opt.index)
    fig, axes = several(ax, len(factors), lambda: _grid(len(factors)))
    for panel, f in zip(axes, factors):
        counts = opt.attrs["counts"][f]
        keys = sorted(counts, key=lambda v: (isinstance(v, str), v))
        panel.bar(range(len(keys)), [counts[k] for k in keys])
        panel.set_xticks(range(len(keys)), [f"{k:g}" if isinstance(k, float) else str(k) for k in keys],
                      rotation=45, fontsize=7)
        v = opt[f]
        panel.set_title(f"{f}: {v:.3g}" if isinstance(v, float) else f"{f}: {v}", fontsize=9)
    axes[0].set_ylabel(f"count (of {opt.attrs['n']} runs)")
    if ax is None:
        fig.tight_layout()
    return axes
