"""Result of a (co-)simulation: arrays at the macro points, by subsystem name (like scipy's OdeResult), and by
signal name (``res["S2.F"]``), as a pandas DataFrame, a CSV file or a plot, and its error against a reference."""
from __future__ import annotations

import math
import os

import numpy as np

from . import metrics, stability
from . import verdict as _verdict

#: ε in the denominator of genser2020 eq. (3.10) (the running range of the reference signal plus ε)
EPS_MONO_EPSILON = 1e-12
_KIND_WORD = {"x": "state", "y": "output", "u": "input"}
_KIND_OF_WORD = {"x": "x", "y": "y", "u": "u", "state": "x", "states": "x", "output": "y", "outputs": "y",
                 "input": "u", "inputs": "u"}


def _pandas_reads_floats_exactly(version: str) -> bool:
    """pandas >= 3.1 parses every float exactly by default; older versions need ``float_precision="round_trip"``
    (pandas 3.0's default parser reads 0.0090000000000000011 as 0.009)."""
    major, minor = (int("".join(ch for ch in part if ch.isdigit()) or 0) for part in version.split(".")[:2])
    return (major, minor) >= (3, 1)


def read_csv(path, **kwargs):
    """Read a CSV file written by :meth:`Result.to_csv` (or ``cosim run``) back into a DataFrame, every float
    bit for bit on every supported pandas version.

    Parameters
    ----------
    path : str or os.PathLike
        The CSV file.
    **kwargs
        Passed on to :func:`pandas.read_csv` (e.g. ``index_col=``).

    Returns
    -------
    pandas.DataFrame

    Notes
    -----
    The file holds every double in a round-trip format (17 significant digits). Plain ``pandas.read_csv`` reads it
    back exactly from pandas 3.1 on; with older pandas it rounds some values by one unit in the last place unless
    ``float_precision="round_trip"`` is given, which this function does where it is needed.
    """
    import pandas as pd
    if "float_precision" not in kwargs and not _pandas_reads_floats_exactly(pd.__version__):
        kwargs["float_precision"] = "round_trip"
    return pd.read_csv(path, **kwargs)


class _BySubsystem(dict):
    """dict subsystem name -> array; a wrong name raises a KeyError that lists the known names."""

    def __init__(self, items, what):
        super().__init__(items)
        self._what = what

    def __missing__(self, key):
        raise KeyError(f"{key!r}: no subsystem of that name in this result ({self._what}); known: {list(self)}")


class _Signal:
    __slots__ = ("label", "sub", "kind", "index", "name", "col")

    def __init__(self, label, sub, kind, index, name, col):
        self.label, self.sub, self.kind, self.index, self.name, self.col = label, sub, kind, index, name, col


def _kinds(kinds):
    if isinstance(kinds, str):
        kinds = [kinds] if kinds in _KIND_OF_WORD else list(kinds)
    try:
        out = [_KIND_OF_WORD[k] for k in kinds]
    except (KeyError, TypeError):
        raise ValueError(f"kinds: expected a selection of 'x' (states), 'y' (outputs), 'u' (inputs), got {kinds!r}") \
            from None
    return [k for k in ("x", "y", "u") if k in out]


class Result:
    """The history of a run at its macro points (the shape of SciPy's ``OdeResult``): arrays, counters and one
    status. Every field is set when the result is made (:func:`cosim.simulate` builds it); a field that a run does
    not produce is None.

    Attributes
    ----------
    t : (n,) array
        The macro time points T_N (or the output times with ``output_interval``/``t_eval``).
    x, y, u : dict
        Subsystem name -> (n, nx) / (n, ny) / (n, nu) arrays of states, outputs and inputs at T_N (inputs and
        outputs after the update step, i.e. the exchanged coupling values).
    X, Y, U : (n, ·) arrays
        The same, all subsystems stacked (``system.state_offset`` etc. give the columns).
    system : CoupledSystem
        The system that was run.
    stats : dict
        ``macro_steps``, ``rejected_steps``, ``newton_iterations`` (algebraic loop), ``wall_time`` and per
        subsystem ``subsystems[name]`` = {steps, failures, rhs_calls, output_calls, jac_evals, wall_time}; with
        step control also ``rejected_times``, ``rejected_H``, ``comparative_integrations``, ``h_min_failed``,
        ``corrector_failures``.
    status : int
        :data:`FINISHED` (0): reached t_end; :data:`STOPPED`: ``step_finished`` returned False; :data:`TERMINATED`:
        an FMU asked to end the simulation (the result runs up to the last macro point before); anything else: the
        run failed (the engine's error code, e.g. 5 for a diverged run) and this is the partial result that the
        exception carries.
    message : str
        Why the run ended where it did ("" when it reached t_end).
    success : bool
        True for FINISHED, STOPPED and TERMINATED (the run did what was asked), False for a failed run.
    options : dict
        The settings of the run (scheme, approximation, solver, H, t_end, ...).
    step_sizes : (steps,) array or None
        The accepted macro step sizes H_N when a controller chose them (``step_control=cosim.StepControl(...)`` or
        ``cosim.ECCO(...)``); ``H`` is the older name of the same array.
    k, error_estimate : (steps,) arrays or None
        With ``cosim.StepControl``: the degree κ and the local error test's WRMS value of every accepted step.
    balance_t, balance_error : array, dict or None
        With ``coupling=cosim.BalanceCorrection(...)``: the macro points and, per connected input name, the
        cumulative imbalance ∫ (y_j − u_i) dt.
    energy_t, energy_residual : arrays or None
        With ``step_control=cosim.ECCO(...)``: the ends of the macro steps and the (steps, bonds) array of
        |P_a − P_b|·H.
    coupling_log : object or None
        Per-step log of a coupling method (``cosim.PreStep``, ``cosim.NEPCE``), built on first access.
    units : dict
        Signal label (as in :attr:`signals`) -> unit string for every signal whose subsystem declares its unit
        (``units=`` of the subsystem; the built-in models declare theirs), and ``"t"`` -> ``"s"``. Units are
        labels: no value is converted. :meth:`plot` writes them on the axes (``S1.x1 [m]``).

    Notes
    -----
    Signals by name: ``res["S2.F"]`` is the (n,) history of one state, output or input, given as
    ``"Sub.name"`` (names from ``states=``/``outputs=``/``inputs=`` of the subsystem; a name used for several kinds
    means the state first, then the output, then the input) or as ``"Sub.x[i]"``, ``"Sub.y[j]"``, ``"Sub.u[a]"``.
    ``res.signals`` lists one unambiguous label per signal. Tables: :meth:`to_dataframe`, :meth:`to_csv`;
    figure: :meth:`plot`; errors against a reference: :meth:`error_to`.
    """

    #: :attr:`status` of a run that reached t_end
    FINISHED = 0
    #: :attr:`status` of a run that ``step_finished`` stopped (the engine's CS_STOPPED)
    STOPPED = 7
    #: :attr:`status` of a run stopped by Ctrl-C: the result the ``KeyboardInterrupt`` carries as ``.result``
    INTERRUPTED = 8
    #: :attr:`status` of a run that ended because an FMU asked to terminate (FMI terminateSimulation)
    TERMINATED = 10
    #: :attr:`status` of a run that finished with a coupling the verdict finds unstable (:mod:`cosim.verdict`); set
    #: in Python only, so its value is one no C status takes (``_core.codes["status"]``)
    UNSTABLE = 11

    def __init__(self, system, t, X, Y, U, stats, status=0, message="", options=None, *, step_sizes=None, k=None,
                 error_estimate=None, balance_t=None, balance_error=None, energy_t=None, energy_residual=None,
                 coupling_log=None, units=None):
        self.system = system
        self.t = np.asarray(t)
        self.X, self.Y, self.U = X, Y, U  # stacked arrays
        self.x = _BySubsystem(((s.name, X[:, a:b]) for s, a, b in zip(system.subsystems, system.state_offset[:-1],
                                                                       system.state_offset[1:])), "states x")
        self.y = _BySubsystem(((s.name, Y[:, a:b]) for s, a, b in zip(system.subsystems, system.out_offset[:-1],
                                                                       system.out_offset[1:])), "outputs y")
        self.u = _BySubsystem(((s.name, U[:, a:b]) for s, a, b in zip(system.subsystems, system.in_offset[:-1],
                                                                       system.in_offset[1:])), "inputs u")
        self.stats = stats
        self.status = status
        self.message = message
        self.options = options or {}
        self.step_sizes, self.k, self.error_estimate = step_sizes, k, error_estimate
        self.balance_t, self.balance_error = balance_t, balance_error
        self.energy_t, self.energy_residual = energy_t, energy_residual
        # a callable makes the log on first access (a study that does not read it does not pay for it)
        self._coupling_log_factory = coupling_log if callable(coupling_log) else None
        if not callable(coupling_log):
            self._coupling_log = coupling_log
        self._table = None
        self._units = None if units is None else dict(units)

    @property
    def units(self):
        """{label: unit} of the signals whose unit is known, and ``"t"``: ``"s"`` (made on first access: a study
        of thousands of signals that never reads it does not pay for it)."""
        if self._units is None:
            self._units = self._declared_units()
        return self._units

    @units.setter
    def units(self, value):
        self._units = dict(value)

    def _declared_units(self):
        """{"t": "s", label: unit} for every signal whose subsystem knows its unit."""
        units = {"t": "s"}
        subs = {s.name: s for s in self.system.subsystems}
        for sg in self._signals():
            unit = subs[sg.sub].signal_unit(sg.kind, sg.index)
            if unit is not None:
                units.setdefault(sg.label, unit)
        return units

    def unit(self, signal):
        """The unit of a signal (any name ``res[...]`` accepts, or ``"t"``), or None where it is not known."""
        if signal == "t":
            return self.units.get("t")
        if signal in self.units:
            return self.units[signal]
        kind, col = self._lookup(signal, "signal")
        for sg in self._signals():
            if sg.kind == kind and sg.col == col:
                return self.units.get(sg.label)
        return None

    @property
    def coupling_log(self):
        """Per-step log of a coupling method (cosim.PreStep, cosim.NEPCE), else None."""
        d = self.__dict__
        if "_coupling_log" not in d:
            d["_coupling_log"] = self._coupling_log_factory()
        return d["_coupling_log"]

    @coupling_log.setter
    def coupling_log(self, value):
        self.__dict__["_coupling_log"] = value

    @property
    def H(self):
        """The accepted macro step sizes: the older name of :attr:`step_sizes` (kept for existing code)."""
        return self.step_sizes

    @property
    def state(self) -> str:
        """The older spelling of :attr:`status` as a word: "finished", "stopped", "interrupted", "terminated",
        "unstable" or "error" (derived from :attr:`status`, so the two cannot disagree)."""
        return {self.FINISHED: "finished", self.STOPPED: "stopped", self.INTERRUPTED: "interrupted",
                self.TERMINATED: "terminated", self.UNSTABLE: "unstable"}.get(self.status, "error")

    @property
    def success(self) -> bool:
        """True if the run reached t_end, was stopped by ``step_finished`` or ended at an FMU's request, with a
        stable coupling (see :attr:`status`; an unstable verdict is :attr:`UNSTABLE`)."""
        return self.status in (self.FINISHED, self.STOPPED, self.TERMINATED)

    @property
    def growth(self) -> float:
        """Largest amplitude growth of a coupled output: max |y| over the last 20 % of the run divided by max |y|
        over the first 20 % (genser2020 §11.3; per signal: :func:`cosim.metrics.growth`)."""
        return metrics.max_growth(self)

    @property
    def verdict(self) -> _verdict.Verdict:
        """The verdict on the coupling's stability (:func:`cosim.verdict.judge`: ρ(Ω) of the macro step for all-LTI
        systems, else geometric growth of a coupled output); a diverged run is not stable."""
        d = self.__dict__
        if "_verdict" not in d:
            if metrics.is_diverged(self):
                d["_verdict"] = _verdict.Verdict(False, "divergence", float("inf"), self.message)
            else:
                d["_verdict"] = _verdict.judge(self)
        return d["_verdict"]

    @property
    def stable(self) -> bool:
        """The run's verdict (:attr:`verdict`): False if the coupling is numerically unstable or the run diverged.
        genser2020's 20 % amplitude rule is :func:`cosim.metrics.is_stable`."""
        return self.verdict.stable

    def spectral_radius(self) -> float:
        """ρ(Ω) of one macro step (busch2016 eq. 25) with this run's scheme, approximation, update, order and H
        (:func:`cosim.analysis.spectral_radius`; all-LTI systems, exact subsystem integration assumed)."""
        return stability.result_spectral_radius(self)

    def __repr__(self):
        return (f"Result({len(self.t)} macro points, t_end={self.t[-1] if len(self.t) else None}, "
                f"status={self.status})")

    def _repr_html_(self):
        """A short table for Jupyter: the run's status, size and settings (the arrays stay in the result)."""
        import html
        t = self.t
        rows = [("status", f"{self.status} ({self.state})" + (f": {self.message}" if self.message else "")),
                ("t", f"{len(t)} points" + (f", {t[0]:.6g} … {t[-1]:.6g}" if len(t) else "")),
                ("subsystems", ", ".join(self.system.names)),
                ("signals", f"{self.X.shape[1]} states, {self.Y.shape[1]} outputs, {self.U.shape[1]} inputs")]
        for key in ("scheme", "approximation", "H", "coupling", "step_control"):
            if self.options.get(key) is not None:
                rows.append((key, repr(self.options[key])))
        if "macro_steps" in self.stats:
            rows.append(("macro steps", f"{self.stats['macro_steps']} ({self.stats.get('rejected_steps', 0)} rejected)"))
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td style='text-align:left'>"
                       f"{html.escape(str(v))}</td></tr>" for k, v in rows)
        return f"<table><caption>cosim.Result</caption>{body}</table>"

    # ------------------------------------------------------------------ signals by name
    def _signals(self):
        """One entry per state, output and input, in the order: subsystems as given; per subsystem states, outputs,
        inputs. The label is ``Sub.`` + :meth:`cosim.Subsystem.signal_label`: the declared name where it selects
        this signal or the same quantity (an output that is a state has the state's label), else ``Sub.k[i]``."""
        if self._table is None:
            table = []
            offsets = {"x": self.system.state_offset, "y": self.system.out_offset, "u": self.system.in_offset}
            for si, s in enumerate(self.system.subsystems):
                for kind in ("x", "y", "u"):
                    for i, name in enumerate(s.signal_names(kind)):
                        label = f"{s.name}.{s.signal_label(kind, i)}"
                        table.append(_Signal(label, s.name, kind, i, name, int(offsets[kind][si] + i)))
            self._table = table
        return self._table

    @property
    def signals(self):
        """Unambiguous labels of every state, output and input (``res[label]`` works for each); a quantity is listed
        once (an output that is a state appears once, under its declared name)."""
        return list(dict.fromkeys(sg.label for sg in self._signals()))

    def _array(self, kind):
        return {"x": self.X, "y": self.Y, "u": self.U}[kind]

    def _valid_names_message(self, limit=60):
        labels = self.signals
        shown = ", ".join(labels[:limit]) + (f", ... ({len(labels)} in all)" if len(labels) > limit else "")
        return f"valid names: {shown}; or 'Sub.x[i]', 'Sub.y[j]', 'Sub.u[a]', or 't'"

    def _lookup(self, key, what="key"):
        """(kind, global column) of a signal label; KeyError listing the valid names."""
        if not isinstance(key, str):
            raise TypeError(f"{what}: expected a signal name like 'S2.F' or 'S1.x[0]', got {type(key).__name__}")
        sub, dot, local = key.partition(".")
        if not dot or sub not in self.system._by_name:
            raise KeyError(f"{key!r}: unknown signal; {self._valid_names_message()}")
        si = self.system.index(sub)
        try:
            kind, i = self.system.subsystems[si].find_signal(local)
        except KeyError:
            raise KeyError(f"{key!r}: unknown signal; {self._valid_names_message()}") from None
        offsets = {"x": self.system.state_offset, "y": self.system.out_offset, "u": self.system.in_offset}
        return kind, int(offsets[kind][si] + i)

    def __getitem__(self, key):
        """History (n,) of one signal: ``res["S2.F"]``, ``res["S1.x[0]"]``, ``res["t"]``."""
        if isinstance(key, str) and key == "t":
            return self.t
        kind, col = self._lookup(key)
        return self._array(kind)[:, col]

    def __contains__(self, key):
        try:
            self[key]
        except (KeyError, TypeError):
            return False
        return True

    def _selection(self, signals, kinds=("x", "y", "u")):
        """[(label, kind, column)] for the requested signals (default: every signal of the given kinds)."""
        if signals is None:
            ks = _kinds(kinds)
            chosen = {}
            for sg in self._signals():
                if sg.kind in ks:
                    chosen.setdefault(sg.label, (sg.label, sg.kind, sg.col))   # one entry per quantity
            return list(chosen.values())
        if isinstance(signals, str):
            signals = [signals]
        try:
            signals = list(signals)
        except TypeError:
            raise TypeError(f"signals: expected a list of signal names, got {type(signals).__name__}") from None
        if not signals:
            raise ValueError("signals: empty selection")
        if len(set(signals)) != len(signals):
            raise ValueError(f"signals: names must be unique, got {signals}")
        out = []
        for label in signals:
            kind, col = self._lookup(label, "signals")
            out.append((label, kind, col))
        return out

    # ------------------------------------------------------------------ tables and figures
    def to_dataframe(self, layout="wide", signals=None, kinds=("x", "y", "u")):
        """The result as a pandas DataFrame.

        ``layout="wide"``: index ``t`` (the macro points T_N), one column per signal, named by its label
        (see :attr:`signals`). ``layout="long"`` (tidy): one row per (T_N, signal) with the columns ``t``,
        ``signal``, ``subsystem``, ``kind`` ("state", "output", "input"), ``name`` and ``value``.
        ``signals``: a list of names (any form ``res[...]`` accepts; the columns keep the names as given);
        ``kinds``: which kinds to include when ``signals`` is None (default all: "x", "y", "u")."""
        import pandas as pd
        if layout not in ("wide", "long"):
            raise ValueError(f"layout: must be 'wide' or 'long', got {layout!r}")
        sel = self._selection(signals, kinds)
        t = np.asarray(self.t, dtype=float)
        if layout == "wide":
            data = {label: self._array(kind)[:, col] for label, kind, col in sel}
            return pd.DataFrame(data, index=pd.Index(t, name="t"), columns=[s[0] for s in sel])
        n = len(t)
        labels = [s[0] for s in sel]
        subs, kinds_, names = [], [], []
        for label, kind, col in sel:
            sub, _, local = label.partition(".")
            subs.append(sub)
            kinds_.append(_KIND_WORD[kind])
            names.append(local)
        values = np.concatenate([self._array(kind)[:, col] for _, kind, col in sel]) if sel else np.zeros(0)
        return pd.DataFrame({"t": np.tile(t, len(sel)), "signal": np.repeat(labels, n),
                             "subsystem": np.repeat(subs, n), "kind": np.repeat(kinds_, n),
                             "name": np.repeat(names, n), "value": values})

    def to_csv(self, path, layout="wide", signals=None, kinds=("x", "y", "u"), float_format="%.17g"):
        """Write :meth:`to_dataframe` to ``path`` (CSV; ``t`` is the first column; every double in a round-trip
        format by default, ``%.17g``). Returns the path. Read it back exactly with :func:`cosim.read_csv`."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path: expected a file name, got {type(path).__name__}")
        df = self.to_dataframe(layout=layout, signals=signals, kinds=kinds)
        df.to_csv(path, index=(layout == "wide"), float_format=float_format)
        return path

    def plot(self, signals=None, ax=None, ref=None, title=None, ylabels=None, xlabel="t [s]"):
        """Plot signals over the macro points T_N.

        Parameters
        ----------
        signals : list of str, optional
            Signal names (default: every output, the exchanged coupling signals).
        ax : matplotlib Axes or sequence of Axes, optional
            One axes (all curves in it, with a legend), a sequence of one axes per signal, or None (a new figure
            with one panel per signal, shared t axis).
        ref : Result, optional
            Another result (e.g. :func:`cosim.simulate_monolithic`) drawn as a grey line under each signal.
        title : str, optional
            Title of the axes (one panel) or of the figure.
        ylabels : dict, optional
            Signal name -> axis label, replacing the default "name [unit]" (units from ``units``).
        xlabel : str
            Label of the t axis.

        Returns
        -------
        matplotlib Axes or numpy.ndarray of Axes
            The Axes where everything is drawn in one panel, else the array of the panels (one per signal).
            Returning Axes, not the Figure, shows the figure once where ``res.plot()`` ends a Jupyter cell.
        """
        sel = self._selection(signals, "y" if signals is None else ("x", "y", "u"))
        if not sel:
            raise ValueError("signals: this system has no outputs; name the signals to plot")
        if ref is not None and not isinstance(ref, Result):
            raise TypeError(f"ref: expected a cosim Result, got {type(ref).__name__}")
        if ylabels is not None and not isinstance(ylabels, dict):
            raise TypeError(f"ylabels: expected a dict signal -> label, got {type(ylabels).__name__}")
        ylabels = ylabels or {}
        import matplotlib.pyplot as plt

        from ._axes import is_axes, with_unit
        if ax is None:
            if len(sel) > 24:
                raise ValueError(f"signals: {len(sel)} signals are too many for one panel each; select some, or "
                                 "pass ax= to draw them into one axes")
            fig, axes = plt.subplots(len(sel), 1, sharex=True, figsize=(8, 1.2 + 1.9 * len(sel)), squeeze=False)
            axes = list(axes[:, 0])
        elif is_axes(ax):
            axes = [ax] * len(sel)
            fig = ax.figure
        else:
            axes = list(np.ravel(np.asarray(ax, dtype=object)))
            if len(axes) != len(sel) or not all(is_axes(a) for a in axes):
                raise ValueError(f"ax: expected one matplotlib axes or {len(sel)} axes (one per signal)")
            fig = axes[0].figure
        single = len(set(map(id, axes))) == 1
        named = {sg.label: sg.name for sg in self._signals()}
        shown = {label: (f"{label} ({named[label]})" if label in named and label.endswith("]")
                         and not named[label].endswith("]") else label) for label, _, _ in sel}
        units = {label: self.unit(label) for label, _, _ in sel}
        for (label, kind, col), a in zip(sel, axes):
            text = with_unit(shown[label], units[label])
            if ref is not None:
                a.plot(ref.t, ref[label], color="0.55", lw=2.2, alpha=0.6,
                       label=f"{label} (reference)" if single else "reference")
            a.plot(self.t, self._array(kind)[:, col], lw=1.2, label=text)
            if not single:
                a.set_ylabel(ylabels.get(label, text))
                if ref is not None:
                    a.legend(fontsize=8, loc="best")
            a.grid(True, alpha=0.3)
        if single:
            axes[0].legend(fontsize=8, loc="best")
            if len(sel) == 1:
                axes[0].set_ylabel(ylabels.get(sel[0][0], with_unit(shown[sel[0][0]], units[sel[0][0]])))
            else:   # several quantities in one panel: the legend names them, the axis gives their units
                known = list(dict.fromkeys(u for u in units.values() if u is not None))
                axes[0].set_ylabel(with_unit("value", ", ".join(known)) if known else "value")
        axes[-1].set_xlabel(xlabel)
        if title:
            if single:
                axes[0].set_title(title, fontsize=10)
            else:
                fig.suptitle(title, fontsize=10)
        if ax is None:
            fig.tight_layout()
        return axes[0] if single else np.array(axes, dtype=object)

    # ------------------------------------------------------------------ errors against a reference
    def _on_my_grid(self, ref):
        """Function mapping an (n_ref, m) array of ``ref`` to this result's time grid (exact match of the grid
        points where they coincide, else cubic spline interpolation of the reference)."""
        if not isinstance(ref, Result):
            raise TypeError(f"ref: expected a cosim Result, got {type(ref).__name__}")
        if ref.X.shape[1] != self.X.shape[1] or ref.Y.shape[1] != self.Y.shape[1]:
            raise ValueError("ref: has a different number of states or outputs (not the same system?)")
        if len(self.t) == 0:
            raise ValueError("ref: this result has no time points to compare")
        if len(ref.t) == len(self.t) and np.allclose(ref.t, self.t, rtol=0, atol=1e-12 * max(1.0, abs(self.t[-1]))):
            return lambda A: A
        idx = np.searchsorted(ref.t, self.t)
        idx = np.clip(idx, 0, len(ref.t) - 1)
        tol = 1e-9 * max(1.0, abs(ref.t[-1]))
        near = np.abs(ref.t[idx] - self.t) <= tol
        idx2 = np.clip(idx - 1, 0, len(ref.t) - 1)
        near2 = np.abs(ref.t[idx2] - self.t) <= tol
        if np.all(near | near2):
            pick = np.where(near, idx, idx2)
            return lambda A: A[pick]
        if self.t[0] < ref.t[0] - tol or self.t[-1] > ref.t[-1] + tol:
            raise ValueError("ref: does not cover this result's time span")
        from scipy.interpolate import CubicSpline
        return lambda A: CubicSpline(ref.t, A, axis=0)(self.t) if A.shape[1] else np.zeros((len(self.t), 0))

    def _reference_states(self, ref):
        """Reference states on this result's time grid."""
        return self._on_my_grid(ref)(ref.X)

    def error_to(self, ref, signals=None, eps_mono_time="mean"):
        """Error of this run against a reference (usually :func:`cosim.simulate_monolithic`), overall and per signal.

        Returns a dict (:class:`ErrorSummary`; ``.to_dataframe()`` gives the per-signal table) with

        * over all states z (kept from earlier versions): ``max_abs`` = max over T_N and states of |z − z_ref|;
          ``max_rel`` = max_abs / max |z_ref| (one scale for all states, so the state of the largest magnitude
          dominates it: for the two-mass oscillator, a velocity; use the per-signal values for one quantity);
          ``final_abs`` (max-norm at the last macro point; moshagen.md §5); ``nrmse`` (kraft2021 eq. 5.1-5.2:
          the 2-norm over the states of nrmse(z_j) = sqrt(Σ_N (z_ref − z)² / Σ_N (z_ref − mean z_ref)²), states
          with a constant reference left out); ``per_subsystem``: max_abs over each subsystem's states;
        * ``per_signal``: {label: {max_abs, max_rel, final_abs, nrmse, eps_mono}} for every state, output and
          input (or the given ``signals``): ``max_rel`` = max_N |z − z_ref| / max_N |z_ref| of that signal alone
          (NaN if the reference signal is identically zero and the error is not), ``nrmse`` = nrmse(z_j) of
          kraft2021 eq. 5.1 (NaN for a constant reference signal with a non-zero error), ``eps_mono`` = the
          time aggregate of genser2020 eq. 3.10's term |z^N − z_ref^N| / (max_{j≤N} z_ref^j − min_{j≤N} z_ref^j
          + ε), ε = 1e-12;
        * ``eps_mono`` (genser2020 eq. 3.9-3.10, the relative error against the monolithic solution):
          ε_mono,rel per subsystem = the mean over its outputs y of the term above, aggregated over the macro
          points by ``eps_mono_time`` ("mean" (default, genser2020.md §11.1), "max" or "final"), and
          ε_mono,global = sqrt(Σ_subsystems ε_mono,rel²); ``eps_mono_per_subsystem`` holds the per-subsystem
          values (subsystems without outputs are left out). genser2020 saturates it at 1 for plotting; this does
          not.

        Where the time grids differ, the reference is interpolated (cubic spline), which adds an interpolation
        error: for exact comparisons compute the reference with ``simulate_monolithic(system, t_end,
        t_eval=res.t)``.

        Examples
        --------
        >>> import cosim
        >>> system = cosim.models.two_mass_oscillator(ck=2e5, dk=200)
        >>> res = cosim.simulate(system, t_end=0.1, H=1e-3)
        >>> err = res.error_to(cosim.simulate_monolithic(system, t_end=0.1, t_eval=res.t))
        >>> sorted(err["per_signal"]["S2.F"])
        ['eps_mono', 'final_abs', 'max_abs', 'max_rel', 'nrmse']
        """
        if eps_mono_time not in ("mean", "max", "final"):
            raise ValueError(f"eps_mono_time: must be 'mean', 'max' or 'final', got {eps_mono_time!r}")
        grid = self._on_my_grid(ref)
        Xr = grid(ref.X)
        E = self.X - Xr
        max_abs = float(np.max(np.abs(E))) if E.size else 0.0
        scale = float(np.max(np.abs(Xr))) if Xr.size else 0.0
        dev = np.sum((Xr - Xr.mean(axis=0)) ** 2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.sqrt(np.sum(E ** 2, axis=0) / dev)
        per = per[np.isfinite(per)]
        per_sub = {}
        for s, a, b in zip(self.system.subsystems, self.system.state_offset[:-1], self.system.state_offset[1:]):
            per_sub[s.name] = float(np.max(np.abs(E[:, a:b]))) if b > a and E.size else 0.0
        out = ErrorSummary(max_abs=max_abs, max_rel=max_abs / scale if scale > 0 else max_abs,
                           final_abs=float(np.max(np.abs(E[-1]))) if E.size else 0.0,
                           nrmse=float(np.linalg.norm(per)), per_subsystem=per_sub)

        refs = {"x": Xr, "y": grid(ref.Y), "u": grid(ref.U)}
        mine = {"x": self.X, "y": self.Y, "u": self.U}
        metrics = {k: _signal_metrics(mine[k], refs[k], eps_mono_time) for k in ("x", "y", "u")}
        per_signal = {}
        for label, kind, col in self._selection(signals):
            per_signal[label] = {name: float(v[col]) for name, v in metrics[kind].items()}
        out["per_signal"] = per_signal
        eps_sub = {}
        for s, a, b in zip(self.system.subsystems, self.system.out_offset[:-1], self.system.out_offset[1:]):
            if b > a:
                eps_sub[s.name] = float(np.mean(metrics["y"]["eps_mono"][a:b]))
        out["eps_mono_per_subsystem"] = eps_sub
        out["eps_mono"] = float(math.sqrt(sum(v * v for v in eps_sub.values()))) if eps_sub else 0.0
        return out


def _signal_metrics(Z, Zr, eps_mono_time="mean"):
    """Per-column error measures of Z against the reference Zr (both (n, m) on the same grid); see error_to."""
    n, m = Z.shape
    if m == 0:
        z = np.zeros(0)
        return dict(max_abs=z, max_rel=z, final_abs=z, nrmse=z, eps_mono=z)
    E = np.abs(Z - Zr)
    max_abs = E.max(axis=0)
    scale = np.abs(Zr).max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        max_rel = np.where(scale > 0, max_abs / scale, np.where(max_abs == 0, 0.0, np.nan))
        num = np.sum(E ** 2, axis=0)
        den = np.sum((Zr - Zr.mean(axis=0)) ** 2, axis=0)
        nrmse = np.where(den > 0, np.sqrt(num / den), np.where(num == 0, 0.0, np.nan))
    # genser2020 eq. 3.10: the running range of the reference over the macro points up to N
    rng = np.maximum.accumulate(Zr, axis=0) - np.minimum.accumulate(Zr, axis=0)
    term = E / (rng + EPS_MONO_EPSILON)
    eps = {"mean": term.mean(axis=0), "max": term.max(axis=0), "final": term[-1]}[eps_mono_time]
    return dict(max_abs=max_abs, max_rel=max_rel, final_abs=E[-1], nrmse=nrmse, eps_mono=eps)


class ErrorSummary(dict):
    """The dict :meth:`Result.error_to` returns; :meth:`to_dataframe` gives the per-signal table."""

    def to_dataframe(self):
        """One row per signal (index: its label), columns max_abs, max_rel, final_abs, nrmse, eps_mono."""
        import pandas as pd
        cols = ["max_abs", "max_rel", "final_abs", "nrmse", "eps_mono"]
        per = self.get("per_signal", {})
        df = pd.DataFrame.from_dict(per, orient="index", columns=cols)
        df.index.name = "signal"
        return df
