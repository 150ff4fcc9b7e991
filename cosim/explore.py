"""``cosim.explore``: an ipywidgets panel for teaching the stability of a co-simulation.

Controls for the macro step H, the approximation (Lagrange/ZOH or EXTRIPOL), its degree k and continuity, the
scheme and the update; the panel shows the co-simulated and the monolithic response of chosen signals and, for
all-LTI systems, the spectral radius ρ(Ω) (busch2016 eq. 25) over H (and one parameter) with the current setting
marked. Everything numerical comes from :func:`cosim.simulate`, :func:`cosim.simulate_monolithic` and
:mod:`cosim.analysis`; this module only caches and draws.

What one change costs is kept small by caching what does not change with it: the monolithic reference (per
parameter value), the ρ map (per approximation, scheme and update: it covers every H and parameter value of the
sliders, so moving those only moves the marker) and the figure's artists (line data are replaced; the figure is
never rebuilt). The figure is drawn with matplotlib's Agg backend into an ``ipywidgets.Image``, which shows the same
in JupyterLab, the classic notebook and Voila.
"""
from __future__ import annotations

import html
import io
import math
import numbers
import time

import numpy as np

from . import _check, analysis
from ._axes import with_unit
from ._extras import require
from .approximations import MAXDEG, ExtrapolatedInterpolation, Lagrange
from .errors import CosimError, DivergenceError
from .simulate import simulate, simulate_monolithic, verdicts_recorded
from .solvers import CVODE, Exact
from .system import CoupledSystem

APPROXIMATIONS = {"lagrange": "Lagrange (k = 0: ZOH)", "extripol": "EXTRIPOL"}
SCHEMES = ("jacobi", "gauss-seidel")
UPDATES = ("consistent", "simplified")
#: the ρ colour scale of the map (fixed, so colours compare across settings): blue stable, red unstable
RHO_RANGE = (0.0, 10.0)


def _approximation(kind, k, continuity):
    return Lagrange(k) if kind == "lagrange" else ExtrapolatedInterpolation(k, continuity=continuity)


def _map_key(s):
    """What the ρ map depends on in the setting ``s`` (the continuity only where EXTRIPOL uses it)."""
    return (s["approximation"], s["k"], s["continuity"] if s["approximation"] == "extripol" else None, s["scheme"],
            s["update"])


def _rescale(ax, y):
    """Fit the y limits of ``ax`` to the reference ``y`` (30 % margin; a diverging run leaves the frame instead of
    flattening the reference). Limits that hold y and are less than four times its span are kept, so that small
    parameter steps do not redraw the axes. Returns whether the limits changed."""
    lo, hi = float(np.min(y)), float(np.max(y))
    span = hi - lo if hi > lo else max(abs(hi), 1.0)
    a, b = ax.get_ylim()
    if a <= lo and hi <= b and b - a < 4 * span:
        return False
    ax.set_ylim(lo - 0.3 * span, hi + 0.3 * span)
    return True


def _H_options(t_end, H_range, n_H):
    """Ascending macro step sizes t_end/n (so that every run ends exactly at t_end) for about ``n_H`` integers n
    spaced logarithmically between t_end/H_max and t_end/H_min."""
    lo, hi = H_range
    n = np.unique(np.round(np.geomspace(t_end / hi, t_end / lo, n_H)).astype(np.int64))
    n = n[n >= 1]
    return np.sort(t_end / n.astype(float))


def _check_parameter(parameter):
    if parameter is None:
        return None
    if not isinstance(parameter, (tuple, list)) or len(parameter) != 3:
        raise TypeError("parameter: expected (name, values, build): a name, a 1-D grid of values and a callable "
                        "build(value) -> CoupledSystem")
    name, values, build = parameter
    if not isinstance(name, str) or not name:
        raise TypeError(f"parameter: the name must be a non-empty string, got {name!r}")
    values = _check.real_array(values, "parameter values", "1-D grid").reshape(-1)
    if values.size < 2 or not np.all(np.isfinite(values)) or not np.all(np.diff(values) > 0):
        raise ValueError("parameter: the values must be at least two finite, strictly increasing numbers")
    if not callable(build):
        raise TypeError("parameter: build must be callable: build(value) -> CoupledSystem")
    return name, values, build


class Explorer:
    """The panel returned by :func:`explore` (see there). Displaying it in Jupyter shows :attr:`widget`.

    Attributes
    ----------
    widget : ipywidgets.VBox
        The whole panel (controls, figure image, status line).
    controls : dict
        Name -> control widget: ``"H"``, ``"approximation"``, ``"k"``, ``"continuity"``, ``"scheme"``,
        ``"update"`` and, with a parameter, its name. Setting a control's ``value`` updates the panel.
    figure : matplotlib.figure.Figure
        The figure (Agg); its PNG is ``widget``'s image.
    lines : dict
        Signal name -> (co-simulation Line2D, monolithic Line2D).
    marker : matplotlib Line2D or None
        The current point on the ρ map (None for systems that are not all LTI).
    result, reference : cosim.Result
        The current co-simulation (partial where it diverged or failed; None where it failed before its first
        record) and the monolithic reference.
    rho : float or None
        ρ(Ω) of the current setting (None for systems that are not all LTI).
    ylabels : dict
        Signal name -> the label of its panel's y axis (with the unit where one is known).
    update_times : list of float
        Wall time [s] of every update after a change (simulation, drawing and PNG).
    """

    def __init__(self, system, t_end, signals, ylabels, units, H, H_range, n_H, parameter, solver, output_points,
                 dpi):
        require("jupyter", "cosim.explore")
        import ipywidgets as w

        self._t_end = t_end
        self._signals = signals
        self._parameter = parameter
        self._units = units
        self._solver = solver
        self._output_interval = t_end / output_points
        self._dpi = dpi
        self._H = _H_options(t_end, H_range, n_H)
        self._systems, self._references, self._maps = {}, {}, {}
        if parameter is None:
            self._systems[0] = system
        self.lti = system.is_lti and len(system.subsystems) >= 2  # what the ρ(Ω) analysis covers
        self.update_times = []

        style = {"description_width": "100px"}
        layout = w.Layout(width="360px")
        iH = int(np.argmin(np.abs(np.log(self._H / H))))
        c = {"H": w.SelectionSlider(options=[(f"{h:.3g} s", float(h)) for h in self._H], value=float(self._H[iH]),
                                    description="macro step H", continuous_update=False, style=style, layout=layout),
             "approximation": w.Dropdown(options=[(v, k) for k, v in APPROXIMATIONS.items()], value="lagrange",
                                         description="approximation", style=style, layout=layout),
             "k": w.IntSlider(value=0, min=0, max=min(3, MAXDEG), description="degree k", continuous_update=False,
                              style=style, layout=layout),
             "continuity": w.ToggleButtons(options=[("C0", 0), ("C1", 1)], value=1, description="continuity",
                                           disabled=True, style=dict(style, button_width="70px")),
             "scheme": w.ToggleButtons(options=list(SCHEMES), value=SCHEMES[0], description="scheme",
                                       style=dict(style, button_width="100px")),
             "update": w.ToggleButtons(options=list(UPDATES), value=UPDATES[0], description="update",
                                       style=dict(style, button_width="100px"))}
        if parameter is not None:
            name, values, _ = parameter
            c[name] = w.SelectionSlider(options=[(f"{v:.3g}", float(v)) for v in values],
                                        value=float(values[len(values) // 2]), description=name,
                                        continuous_update=False, style=style, layout=layout)
        for key, control in c.items():
            control.add_class(f"cosim-explore-{key}")  # a stable handle for browser tests and custom CSS
        self.controls = c
        # the first reference is computed now for its declared units (cached: the first draw reuses it)
        ref = self._reference(self._state()["p"])
        self.ylabels = {n: ylabels[n] if n in ylabels else with_unit(n, units.get(n, ref.unit(n))) for n in signals}
        self._build_figure(self.ylabels)
        # shrinks with a narrow window instead of scrolling (the aspect ratio is kept)
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%", height="auto", min_width="0"))
        self.image.add_class("cosim-explore-figure")
        self.status = w.HTML()
        self.status.add_class("cosim-explore-status")
        self.widget = w.VBox([w.HBox([w.VBox(list(c.values()), layout=w.Layout(min_width="380px")), self.image],
                                     layout=w.Layout(flex_flow="row wrap")), self.status])
        self._draw(self._state())
        # the layout is computed once, in the first draw: later draws keep the axes where they are
        self.figure.set_layout_engine("none")
        for control in c.values():
            control.observe(self._changed, names="value")

    # ------------------------------------------------------------------------------------------ cached numerics
    def _state(self):
        c = self.controls
        p = None if self._parameter is None else c[self._parameter[0]].value
        return dict(H=c["H"].value, approximation=c["approximation"].value, k=c["k"].value,
                    continuity=c["continuity"].value, scheme=c["scheme"].value, update=c["update"].value, p=p)

    def _system(self, p):
        key = 0 if p is None else p
        if key not in self._systems:
            s = self._parameter[2](p)
            if not isinstance(s, CoupledSystem):
                raise TypeError(f"parameter: build({p!r}) must return a cosim.CoupledSystem, got {type(s).__name__}")
            self._systems[key] = s
        return self._systems[key]

    def _reference(self, p):
        key = 0 if p is None else p
        if key not in self._references:
            self._references[key] = simulate_monolithic(self._system(p), self._t_end,
                                                        t_eval=self._output_grid())
        return self._references[key]

    def _output_grid(self):
        n = int(round(self._t_end / self._output_interval))
        return np.linspace(0.0, self._t_end, n + 1)

    def _map(self, s):
        """ρ over (parameter, H) or over H for the approximation, scheme and update of ``s`` (cached)."""
        key = _map_key(s)
        if key not in self._maps:
            approx = _approximation(s["approximation"], s["k"], s["continuity"])
            if self._parameter is None:
                build, params = (lambda: self._system(None)), {}
            else:
                name, values, by_value = self._parameter
                build, params = (lambda **kw: by_value(kw[name])), {name: values}
            # points where Ω cannot be formed (a singular algebraic loop) are NaN: not drawn
            self._maps[key] = analysis.stability_map(build, params, self._H, s["scheme"], approx, update=s["update"])
        return self._maps[key]

    def _simulate(self, s):
        """The co-simulation of the setting ``s`` and None, or, where it failed, its partial result (None where it
        has none) and the error: a diverging run is shown up to the macro point before the blow-up."""
        approx = _approximation(s["approximation"], s["k"], s["continuity"])
        try:
            # the status line reports an unstable coupling (ρ and the verdict): no warning under the panel as well
            with verdicts_recorded():
                return simulate(self._system(s["p"]), self._t_end, s["H"], scheme=s["scheme"],
                                approximation=approx, update=s["update"], solver=self._solver,
                                output_interval=self._output_interval, divergence_growth=math.inf), None
        except CosimError as e:
            return e.result, e

    # ------------------------------------------------------------------------------------------ drawing
    def _build_figure(self, ylabels):
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        n = len(self._signals)
        fig = Figure(figsize=(9.6 if self.lti else 6.4, max(3.6, 1.5 + 1.6 * n)), dpi=self._dpi, layout="constrained")
        FigureCanvasAgg(fig)
        grid = fig.add_gridspec(n, 2 if self.lti else 1, width_ratios=[1.25, 1] if self.lti else None)
        self._signal_axes = []
        self.lines = {}
        for i, name in enumerate(self._signals):
            ax = fig.add_subplot(grid[i, 0], sharex=self._signal_axes[0] if i else None)
            ref, = ax.plot([], [], color="0.55", lw=2.4, alpha=0.7, label="monolithic", animated=True)
            co, = ax.plot([], [], color="tab:red", lw=1.2, label="co-simulation", animated=True)
            ax.set_ylabel(ylabels[name])
            # short tick labels with a common power of ten: the frozen layout fits every parameter value's scale
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
            ax.grid(True, alpha=0.3)
            if i < n - 1:
                ax.tick_params(labelbottom=False)
            self._signal_axes.append(ax)
            self.lines[name] = (co, ref)
        # outside the data and outside the signal panels' redraw region (the co-simulated curves are drawn last)
        fig.legend(handles=[self.lines[self._signals[0]][1], self.lines[self._signals[0]][0]],
                   loc="outside upper right", ncols=2, fontsize=8, frameon=False)
        # the setting, written over the whole width; the placeholder reserves its room in the layout
        self._title = fig.suptitle("setting", x=0.01, ha="left", fontsize=10)
        self._title.set_animated(True)
        self._signal_axes[-1].set_xlabel("t [s]")
        self._signal_axes[-1].set_xlim(0.0, self._t_end)
        self._map_ax = fig.add_subplot(grid[:, 1]) if self.lti else None
        self._map_key = None
        self.marker = None
        self._map_artists = []
        self._contour = None
        self._layers = [None, None]
        self.reference = None
        self.figure = fig

    def _setup_map(self, smap):
        """The map panel's frame (scales, labels, colour bar), drawn once; its content is :meth:`_set_map`'s."""
        import matplotlib.ticker

        from . import plot

        ax = self._map_ax
        if self._parameter is None:
            self._rho_line, = ax.plot(self._H, np.ones_like(self._H), color="tab:blue", lw=1.5, animated=True)
            ax.axhline(1.0, color="k", lw=1, ls="--", label="ρ = 1: stability boundary")
            ax.axhspan(1.0, RHO_RANGE[1], color="tab:red", alpha=0.08, lw=0, label="unstable")
            ax.set_xscale("log")
            # the colour scale of the maps as the axis: decades of |ρ − 1| get equal room on both sides of 1
            norm = plot.RhoNorm(*RHO_RANGE)
            ax.set_yscale("function", functions=(lambda v: np.ma.filled(norm(v), np.nan), norm.inverse))
            ax.set_ylim(*RHO_RANGE)
            ticks = norm.ticks()
            ax.set_yticks(ticks, [norm.format_tick(v) for v in ticks])
            ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.set_xlabel("macro step H [s]")
            ax.set_ylabel(plot.RHO_LABEL)
            ax.grid(True, which="both", alpha=0.3)
            self.marker, = ax.plot([], [], "o", ms=10, mfc="none", mec="k", mew=2, label="current setting",
                                   animated=True)
            ax.legend(loc="upper left", fontsize=8)
            self._map_artists = [self._rho_line]
        else:
            unit = self._parameter_unit()
            plot.stability_slice(smap, ax=ax, norm=plot.RhoNorm(*RHO_RANGE), colorbar=False, title="",
                                 units={self._parameter[0]: unit} if unit else None)
            mesh = ax.collections[0]
            for contour in ax.collections[1:]:
                contour.remove()  # the ρ = 1 contour of each setting is drawn by _set_map
            mesh.set_animated(True)
            plot.rho_colorbar(self.figure, mesh, ax, extend="max")
            self._mesh = mesh
            self.marker, = ax.plot([], [], "o", ms=11, mfc="none", mec="k", mew=2.2, animated=True)
            self._map_artists = [mesh]

    def _set_map(self, smap):
        """Show the ρ values of ``smap`` (the map panel's content, drawn over its frame)."""
        ax = self._map_ax
        if self._parameter is None:
            self._rho_line.set_ydata(np.clip(smap.rho, *RHO_RANGE))
            return
        rho = np.asarray(smap.rho, dtype=float)
        self._mesh.set_array(np.ma.masked_invalid(rho).T)
        del self._map_artists[1:]
        with np.errstate(invalid="ignore"):
            if np.nanmin(rho) < 1.0 < np.nanmax(rho):  # the stability boundary ρ = 1, where the map crosses it
                x, y = smap.coords[smap.dims[0]], smap.coords[smap.dims[1]]
                if self._contour is not None:
                    self._contour.remove()
                self._contour = ax.contour(x, y, rho.T, levels=[1.0], colors="k", linewidths=1.2)
                self._contour.set_animated(True)
                self._map_artists.append(self._contour)

    def _parameter_unit(self):
        """The parameter's unit: from ``units=``, else the stability plots' default for its name (or "")."""
        from . import plot

        name = self._parameter[0]
        return self._units.get(name, plot.UNITS.get(name, ""))

    def _rho(self, s, smap):
        iH = int(np.argmin(np.abs(self._H - s["H"])))
        if self._parameter is None:
            return float(smap.rho[iH])
        ip = int(np.argmin(np.abs(self._parameter[1] - s["p"])))
        return float(smap.rho[ip, iH])

    def _draw(self, s):
        """Bring the figure to the setting ``s``: new line data and marker; the static parts (reference, axes,
        map) are redrawn only where the parameter or the map's setting changed, else restored from the last full
        draw (blitting)."""
        ref = self._reference(s["p"])
        res, failure = self._simulate(s)
        layer = 2  # the first layer to redraw (see _render)
        for name, ax in zip(self._signals, self._signal_axes):
            co, line_ref = self.lines[name]
            co.set_data(*((res.t, res[name]) if res is not None else ([], [])))
            if ref is not self.reference:
                line_ref.set_data(ref.t, ref[name])
                if _rescale(ax, ref[name]):
                    layer = 0
        self.result, self.reference = res, ref
        self.rho = None
        if self.lti:
            key = _map_key(s)
            smap = self._map(s)
            if self._map_key is None:
                self._setup_map(smap)
            if key != self._map_key:
                self._set_map(smap)
                self._map_key = key
                layer = min(layer, 1)
            self.rho = self._rho(s, smap)
            if self._parameter is None:
                self.marker.set_data([s["H"]], [np.clip(self.rho, *RHO_RANGE)])
            else:
                self.marker.set_data([s["p"]], [s["H"]])
        approx = ("ZOH" if s["k"] == 0 else f"Lagrange k = {s['k']}") if s["approximation"] == "lagrange" \
            else f"EXTRIPOL-C{s['continuity']} k = {s['k']}"
        self._title.set_text(f"{approx}, {s['scheme']}, {s['update']} update, H = {s['H']:.3g} s"
                             + ("" if s["p"] is None else
                                f", {self._parameter[0]} = {s['p']:.3g} {self._parameter_unit()}".rstrip()))
        self.status.value = self._status_text(failure)
        self.image.value = self._render(layer)

    def _render(self, layer):
        """PNG of the figure, drawn in three layers, each kept as a picture for the next change (blitting):
        0 the frame (axes, ticks, labels), of which the signal panels are redrawn where a new parameter value
        changed their limits;
        1 the ρ map's content over it, redrawn where the approximation, scheme or update changed;
        2 what moves with every change: the reference and co-simulated curves, the marker, the title."""
        from matplotlib.patches import Rectangle
        from matplotlib.transforms import IdentityTransform

        canvas = self.figure.canvas
        renderer = canvas.get_renderer()
        if self._layers[0] is None:
            canvas.draw()  # leaves out the animated artists: those of layers 1 and 2
            renderer = canvas.get_renderer()
            right = self._map_ax.get_tightbbox(renderer).x0 - 1 if self._map_ax is not None else self.figure.bbox.x1
            top = self._signal_axes[0].get_tightbbox(renderer).y1 + 1
            self._signal_region = Rectangle((0, 0), right, top, transform=IdentityTransform(),
                                            facecolor=self.figure.get_facecolor(), edgecolor="none")
            self._signal_region.set_figure(self.figure)
            self._layers[0] = canvas.copy_from_bbox(self.figure.bbox)
            layer = 1
        elif layer == 0:  # new limits of the signal panels (left of the map); the rest of the frame is kept
            canvas.restore_region(self._layers[0])
            self._signal_region.draw(renderer)
            for ax in self._signal_axes:
                ax.draw(renderer)  # leaves out the animated artists
            self._layers[0] = canvas.copy_from_bbox(self.figure.bbox)
            layer = 1
        if layer == 1:
            canvas.restore_region(self._layers[0])
            for artist in self._map_artists:
                artist.draw(renderer)
            if self._map_ax is not None:
                for spine in self._map_ax.spines.values():  # the map's edges cover the axes' frame
                    spine.draw(renderer)
            self._layers[1] = canvas.copy_from_bbox(self.figure.bbox)
        else:
            canvas.restore_region(self._layers[1])
        moving = [ref for _, ref in self.lines.values()] + [co for co, _ in self.lines.values()] + [self._title]
        for artist in moving + ([self.marker] if self.marker else []):
            artist.draw(renderer)
        from PIL import Image
        buf = io.BytesIO()
        # RGB at the fastest zlib level: a quarter of the encoding time of matplotlib's own print_png
        Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba()).convert("RGB").save(
            buf, "png", compress_level=1)
        return buf.getvalue()

    def _status_text(self, failure):
        parts = []
        if self.rho is not None:
            verdict = ("not computable" if math.isnan(self.rho) else "stable" if self.rho < 1
                       else "<b style='color:#b00'>unstable</b>")
            parts.append(f"ρ(Ω) = {self.rho:.6g}: {verdict}")
        if isinstance(failure, DivergenceError):
            when = "" if failure.t is None else f" at t = {failure.t:.3g} s"
            parts.append(f"<b style='color:#b00'>the co-simulation diverged{when}</b>")
        elif failure is not None:
            parts.append(f"<b style='color:#b00'>the co-simulation failed: {html.escape(str(failure))}</b>")
        else:  # relative to each signal's amplitude, so that signals of different units compare
            if self.rho is None and self.result.status == self.result.UNSTABLE:  # the run's verdict (cosim.verdict)
                parts.append(f"<b style='color:#b00'>{html.escape(self.result.message)}</b>")
            dev = {n: float(np.max(np.abs(self.result[n] - self.reference[n])))
                   / max(float(np.max(np.abs(self.reference[n]))), 1e-300) for n in self._signals}
            worst = max(dev, key=dev.get)
            parts.append(f"largest deviation from the monolithic reference: {100 * dev[worst]:.3g} % of the "
                         f"amplitude of {worst}")
        return " &nbsp;·&nbsp; ".join(parts)

    def _changed(self, change):
        t0 = time.perf_counter()
        s = self._state()
        self.controls["continuity"].disabled = s["approximation"] != "extripol"
        self._draw(s)
        self.update_times.append(time.perf_counter() - t0)

    def _repr_mimebundle_(self, **kwargs):
        return self.widget._repr_mimebundle_(**kwargs)


def explore(system, t_end, *, signals=None, ylabels=None, units=None, H=None, H_range=None, n_H=31, parameter=None,
            solver=None, output_points=500, dpi=100) -> Explorer:
    """An interactive panel (ipywidgets) to teach how H, the coupling approximation and the scheme decide whether a
    co-simulation is stable and accurate.

    Controls: the macro step H; the approximation (Lagrange of degree k, ZOH for k = 0, busch2016 eq. 11, or
    EXTRIPOL, eq. 12) with its degree k and continuity (C0/C1, EXTRIPOL only); the scheme (Jacobi, Gauss-Seidel);
    the update ("consistent", kraft2021 eq. 2.22, or "simplified", Busch's eq. 19); and, with ``parameter``, one
    model parameter. The figure shows the co-simulated and the monolithic (:func:`cosim.simulate_monolithic`)
    response of ``signals``; for all-LTI systems beside it the spectral radius ρ(Ω) (busch2016 eq. 25) over H — or
    over (parameter, H) with the ρ = 1 contour — with the current setting marked. A run that diverges is shown up
    to the divergence.

    Parameters
    ----------
    system : cosim.CoupledSystem
        The coupled system. With ``parameter`` it gives the signal names only: the panel builds the system at each
        value of the parameter's slider, which starts at the middle one.
    t_end : float
        Length of every run [s].
    signals : list of str, optional
        Signal names to plot (states, outputs or inputs, as ``res[name]``); default: the first state of every
        subsystem (at most three).
    ylabels : dict, optional
        Signal name -> axis label, e.g. ``{"S1.x1": "x1 [m]"}``, replacing the default ``"name [unit]"``.
    units : dict, optional
        Signal or parameter name -> unit, for the axis labels. Signals default to the units their subsystems
        declare (:attr:`cosim.Result.units`; the built-in models declare theirs), the parameter to the stability
        plots' default for its name (``cosim.plot.UNITS``: ck [N/m], dk [Ns/m], ...). A name without a known
        unit is shown bare.
    H : float, optional
        Initial macro step (the nearest offered value); default: a quarter of the way up the range (log scale).
    H_range : (float, float), optional
        Smallest and largest H [s] offered (default: t_end/5000, t_end/10). The offered values are t_end/n for
        about ``n_H`` integers n, so that every run ends at t_end exactly; they are the H axis of the ρ map too.
    n_H : int
        About how many H values the slider offers (default 31).
    parameter : (str, sequence of float, callable), optional
        ``(name, values, build)``: a slider over the increasing ``values`` of a model parameter and
        ``build(value) -> CoupledSystem``; the ρ map is then drawn over (parameter, H). All-LTI systems only.
    solver : cosim solver, optional
        Integrator of the subsystems: default :class:`cosim.Exact` for all-LTI systems (then ρ(Ω) describes the
        runs exactly), :class:`cosim.CVODE` otherwise.
    output_points : int
        Points of the plotted curves: both runs are recorded every t_end/output_points (dense output between macro
        points; default 500).
    dpi : int
        Resolution of the figure image (default 100; smaller draws faster).

    Returns
    -------
    Explorer
        Shown by Jupyter and Voila as its ``widget``; ``controls`` holds the control widgets, ``lines`` the plotted
        curves, ``update_times`` the duration of every update.

    Raises
    ------
    ImportError
        If ipywidgets is missing (``pip install "cosim[jupyter]"``).

    Notes
    -----
    The monolithic reference is computed once per parameter value, the ρ map once per (approximation, k,
    continuity, scheme, update); moving H or the parameter then only runs one co-simulation and moves the marker.
    Changes update the figure's artists (line data) in place, never rebuilding the figure.

    Examples
    --------
    >>> import numpy as np, cosim
    >>> from cosim import models
    >>> s = models.two_mass_oscillator(2e5, 200)
    >>> panel = cosim.explore(s, 0.5, signals=["S1.x1", "S2.F"],
    ...                       parameter=("ck", np.geomspace(1e4, 1e7, 31),
    ...                                  lambda ck: models.two_mass_oscillator(ck, 200)))
    >>> panel.ylabels                  # the units the model declares
    {'S1.x1': 'S1.x1 [m]', 'S2.F': 'S2.F [N]'}
    >>> panel.controls["H"].value = panel.controls["H"].options[-1][1]   # the largest H
    """
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"system: expected a cosim.CoupledSystem, got {type(system).__name__}")
    t_end = _check.real(t_end, "t_end", positive=True)
    names = set(system.signal_names("x")) | set(system.signal_names("y")) | set(system.signal_names("u"))
    if signals is None:
        offsets = system.state_offset
        xs = system.signal_names("x")
        signals = [xs[int(a)] for a, b in zip(offsets[:-1], offsets[1:]) if b > a][:3]
    elif isinstance(signals, str):
        signals = [signals]
    signals = list(signals)
    if not signals or not all(isinstance(n, str) for n in signals):
        raise TypeError("signals: expected a non-empty list of signal names")
    unknown = [n for n in signals if n not in names]
    if unknown:
        raise ValueError(f"signals: unknown names {unknown} (known: {sorted(names)})")
    if len(signals) > 6:
        raise ValueError(f"signals: at most 6 panels, got {len(signals)}")
    if ylabels is None:
        ylabels = {}
    if not isinstance(ylabels, dict) or not all(isinstance(v, str) for v in ylabels.values()):
        raise TypeError("ylabels: expected a dict signal name -> label")
    if units is None:
        units = {}
    if not isinstance(units, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in units.items()):
        raise TypeError("units: expected a dict signal or parameter name -> unit string")
    if H_range is None:
        H_range = (t_end / 5000, t_end / 10)
    if not isinstance(H_range, (tuple, list)) or len(H_range) != 2:
        raise TypeError(f"H_range: expected (H_min, H_max), got {H_range!r}")
    H_range = (_check.real(H_range[0], "H_range[0]", positive=True), _check.real(H_range[1], "H_range[1]",
                                                                                 positive=True))
    if not H_range[0] < H_range[1] <= t_end:
        raise ValueError(f"H_range: need 0 < H_min < H_max <= t_end, got {H_range}")
    n_H = _check.size(n_H, "n_H", 2)
    H = H_range[0] ** 0.75 * H_range[1] ** 0.25 if H is None else _check.real(H, "H", positive=True)
    parameter = _check_parameter(parameter)
    if parameter is not None and not (system.is_lti and len(system.subsystems) >= 2):
        raise ValueError("parameter: the ρ map over a parameter needs an all-LTI system of two or more subsystems")
    if solver is None:
        solver = Exact() if system.is_lti else CVODE()
    output_points = _check.size(output_points, "output_points", 10)
    if isinstance(dpi, bool) or not isinstance(dpi, numbers.Integral) or not 20 <= dpi <= 300:
        raise ValueError(f"dpi: expected an integer in [20, 300], got {dpi!r}")
    return Explorer(system, t_end, signals, ylabels, units, H, H_range, n_H, parameter, solver, output_points,
                    int(dpi))
