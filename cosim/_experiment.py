"""The run's defaults from the DefaultExperiments of its FMUs and of its SSP (docs/fmu.md "DefaultExperiment").

Precedence, for each quantity: the argument given to :func:`cosim.simulate` > the SSP's DefaultExperiment
(``system.default_experiment``: startTime, stopTime) > the DefaultExperiments of the system's FMUs, where every FMU
that declares the quantity declares the same value > the start time 0; a stop time or step size that none of these
gives (or that the FMUs give differently) is an error naming the argument. The tolerance of a model-exchange FMU's
DefaultExperiment becomes the relative tolerance of its CVODE when ``solver`` is not given.
"""
from __future__ import annotations

from .fmu import FMU
from .solvers import CVODE

_XML = {"start_time": "startTime", "stop_time": "stopTime", "step_size": "stepSize"}


def _declared(system, key, arg):
    """(value, where it comes from) of DefaultExperiment quantity ``key`` for ``system``, or (None, None);
    ValueError naming ``arg`` where the FMUs disagree."""
    ssp = getattr(system, "default_experiment", None) or {}
    if key in ssp:
        return float(ssp[key]), "the SSP's DefaultExperiment"
    values = {s.name: s.default_experiment[key] for s in system.subsystems
              if isinstance(s, FMU) and key in s.default_experiment}
    if not values:
        return None, None
    if len(set(values.values())) > 1:
        shown = ", ".join(f"{n}: {_XML[key]}={v!r}" for n, v in values.items())
        raise ValueError(f"{arg}: not given, and the FMUs' DefaultExperiments disagree ({shown}); give {arg}=")
    names = ", ".join(repr(n) for n in values)
    return next(iter(values.values())), f"the DefaultExperiment of FMU {names}"


def run_times(system, t_start, t_end, H, grid):
    """``(t_start, t_end, H, source of H or None)`` with the arguments left at None taken from the DefaultExperiments
    (module docstring); ``grid`` given: no step size is taken."""
    if t_start is None:
        t_start = _declared(system, "start_time", "t_start")[0]
        t_start = 0.0 if t_start is None else t_start
    if t_end is None:
        t_end, where = _declared(system, "stop_time", "t_end")
        if t_end is None:
            raise TypeError("t_end: missing, and no DefaultExperiment of the system (SSP) or of its FMUs declares a "
                            "stopTime; give t_end=")
    source = None
    if H is None and grid is None:
        H, source = _declared(system, "step_size", "H")
    return t_start, t_end, H, source


def solvers(system):
    """The default solver per subsystem: CVODE, with the relative tolerance of a model-exchange FMU's
    DefaultExperiment where it declares one."""
    out = []
    for s in system.subsystems:
        tol = s.default_experiment.get("tolerance") if isinstance(s, FMU) and s.kind == "me" else None
        out.append(CVODE() if tol is None else CVODE(rtol=tol))
    return out
