"""The rule every figure of cosim's examples, demo and notebooks keeps: each axis that shows numbers is labelled
with its unit, ``"name [unit]"`` (cosim._axes.with_unit); dimensionless quantities say so with ``[-]`` (or a
named unit such as ``[%]`` or ``[l_x]``). Exempt are axes that show names instead of numbers (categorical tick
labels: factor levels, phases), and counts and run indices (labels starting with "count" or "run"). A label may sit
on any panel that shares the axis (the bottom row of a column of panels) or on the figure (``supxlabel``).

:func:`describe` reduces a figure to plain data (JSON-serialisable, so a notebook kernel can send it), and
:func:`problems` applies the rule to that data.
"""
import re

#: a unit in brackets, as cosim._axes.with_unit writes it
UNIT = re.compile(r"\[[^\[\]]+\]")
#: labels of plain numbers (counts, indices): no unit
UNITLESS = ("count", "run")


def _shows_names(axis):
    """Whether the tick labels of ``axis`` are names (words), not numbers: a letter outside math text ($...$) and
    outside an exponent's e (1e-04)."""
    texts = axis.get_major_formatter().format_ticks(axis.get_majorticklocs())
    for text in texts:
        text = re.sub(r"\$[^$]*\$", "", text)
        text = re.sub(r"(?<=\d)[eE](?=[-+−]?\d)", "", text)
        if re.search(r"[^\W\d_]", text):
            return True
    return False


def describe(fig):
    """The axes of ``fig`` as data: per visible axes with its frame on, its title, whether it is a colour bar (and
    its orientation) and, per axis x and y, the label, the indices of the axes sharing it and whether its tick
    labels are names."""
    axes = [a for a in fig.axes if a.get_visible() and a.axison]
    index = {id(a): i for i, a in enumerate(axes)}
    sup = {"x": getattr(fig, "_supxlabel", None), "y": getattr(fig, "_supylabel", None)}
    suptitle = fig._suptitle.get_text() if fig._suptitle is not None else ""
    out = []
    for a in axes:
        colorbar = getattr(a, "_colorbar", None)
        d = {"title": a.get_title() or suptitle, "colorbar": colorbar.orientation if colorbar is not None else None}
        for axis in ("x", "y"):
            shared = getattr(a, f"get_shared_{axis}_axes")().get_siblings(a)
            d[axis] = {"label": getattr(a, f"get_{axis}label")(),
                       "shared": sorted(index[id(s)] for s in shared if id(s) in index),
                       "names": _shows_names(getattr(a, f"{axis}axis")),
                       "sup": sup[axis].get_text() if sup[axis] is not None else ""}
        out.append(d)
    return out


def problems(described, where=""):
    """The axes of a :func:`describe` result that break the rule, as messages naming ``where``, the panel's title
    and the axis; empty when every axis is labelled with its unit."""
    found = []
    for d in described:
        if d["colorbar"] is not None:
            checked = ("y",) if d["colorbar"] == "vertical" else ("x",)
        else:
            checked = ("x", "y")
        for axis in checked:
            info = d[axis]
            if info["names"]:
                continue
            labels = [described[i][axis]["label"] for i in info["shared"]] + [info["label"], info["sup"]]
            label = next((t for t in labels if t.strip()), "")
            what = f"{where}: {'colour bar' if d['colorbar'] else 'panel'} {d['title']!r}: {axis} axis"
            if not label:
                found.append(f"{what} has no label")
            elif not UNIT.search(label) and not label.strip().lower().startswith(UNITLESS):
                found.append(f"{what} label {label!r} has no [unit]")
    return found
