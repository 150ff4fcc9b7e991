"""Where a plot draws: the ``ax=`` argument of every plot function (matplotlib's convention). ``ax=None`` makes one
new figure; otherwise the caller's axes are drawn into and no figure is created. Plot functions return their Axes
(one, or an array of them for several panels), never a Figure: a Figure returned as a Jupyter cell's last value is
shown a second time beside the one pyplot's inline backend shows. Axis labels carry units as ``"name [unit]"``
(:func:`with_unit`)."""
from __future__ import annotations

import numpy as np


def is_axes(ax):
    """True for a matplotlib Axes (2-D or 3-D)."""
    from matplotlib.axes import Axes
    return isinstance(ax, Axes)


def one(ax, **subplots):
    """(figure, axes) of a one-panel plot: a new figure (``plt.subplots(**subplots)``) where ``ax`` is None, else
    ``ax`` and its figure; TypeError for anything that is not one Axes."""
    if ax is None:
        import matplotlib.pyplot as plt
        return plt.subplots(**subplots)
    if not is_axes(ax):
        raise TypeError(f"ax: expected a matplotlib Axes, got {type(ax).__name__}")
    return ax.figure, ax


def several(ax, n, new_figure):
    """(figure, 1-D object array of ``n`` axes) of an ``n``-panel plot: ``new_figure()`` -> (figure, axes array)
    where ``ax`` is None (the panels it makes beyond ``n`` are hidden), else ``ax``, a sequence of ``n`` Axes of
    one figure; ValueError for anything else."""
    if ax is None:
        fig, axes = new_figure()
        axes = np.asarray(axes, dtype=object).ravel()
        for extra in axes[n:]:
            extra.set_visible(False)
        return fig, axes[:n]
    axes = np.asarray(ax, dtype=object).ravel() if not is_axes(ax) else np.array([ax], dtype=object)
    if axes.size != n or not all(is_axes(a) for a in axes):
        raise ValueError(f"ax: expected {n} matplotlib Axes (one per panel), got {ax!r}")
    if len({id(a.figure) for a in axes}) != 1:
        raise ValueError("ax: the axes must belong to one figure")
    return axes[0].figure, axes


def with_unit(text, unit):
    """An axis label: ``"text [unit]"``, or ``text`` where the unit is not known (None or "")."""
    return f"{text} [{unit}]" if unit else text
