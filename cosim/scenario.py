"""Scenario files (TOML) of the command line: the model library, the objects named in a table
(``{ type = "lagrange", k = 1 }``) and the checks that name the offending key. Read by :mod:`cosim.cli`
(``cosim run``) and :mod:`cosim.doe.config` (``cosim doe``); the file format is described in :mod:`cosim.cli`."""
from __future__ import annotations

import os
import runpy
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

import cosim
from cosim import models

#: models of cosim.models usable as ``[model] library = "..."``
LIBRARY = {"two_mass_oscillator": models.two_mass_oscillator, "unidirectional_2x2": models.unidirectional_2x2,
           "mutual_2x2": models.mutual_2x2, "spring_mass": models.spring_mass, "linear_split": models.linear_split}

_APPROX = {"zoh": lambda **kw: cosim.ZOH(**kw), "lagrange": lambda **kw: cosim.Lagrange(**kw),
           "extripol": lambda **kw: cosim.ExtrapolatedInterpolation(**kw),
           "extrapolated-interpolation": lambda **kw: cosim.ExtrapolatedInterpolation(**kw),
           "hermite": lambda **kw: cosim.Hermite(**kw)}
_SOLVERS = {"cvode": cosim.CVODE, "exact": cosim.Exact, "rk4": cosim.RK4, "euler": cosim.Euler}
_SECTIONS = {"title", "model", "simulation", "reference", "output"}
_MODEL_KEYS = {"library", "file", "params"}
_OUTPUT_KEYS = {"dir", "csv", "png", "signals", "ylabels", "errors"}


class ScenarioError(ValueError):
    """A scenario file that cannot be run; the message names the key."""


def check_keys(table, known, where, error):
    """Raise ``error`` naming the keys of ``table`` (a TOML table at ``where``) that are not in ``known``."""
    extra = sorted(set(table) - set(known))
    if extra:
        raise error(f"{where}: unknown key(s) {extra}; known: {sorted(known)}")


def _unknown(table, known, where):
    check_keys(table, known, where, ScenarioError)


def read_toml(path, what, error):
    """The TOML file ``path`` as a dict; ``error`` (naming ``what``: scenario, study) if it is missing or invalid."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a file name, got {type(path).__name__}")
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise error(f"{what}: file not found: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{what}: {path} is not valid TOML: {exc}") from None


def _from_table(spec, table, what, where):
    """An object from a name or a table {type = name, option = value, ...}: table[name](**options)."""
    if isinstance(spec, str):
        spec = {"type": spec}
    if not isinstance(spec, dict) or "type" not in spec:
        raise ScenarioError(f"{where}: expected a name or a table with 'type' (one of {sorted(table)}), got {spec!r}")
    kw = dict(spec)
    kind = str(kw.pop("type")).lower()
    if kind not in table:
        raise ScenarioError(f"{where}.type: unknown {what} {kind!r}; known: {sorted(table)}")
    try:
        return table[kind](**kw)
    except TypeError as exc:
        raise ScenarioError(f"{where}: {exc}") from None


def make_approximation(spec, where="simulation.approximation"):
    return _from_table(spec, _APPROX, "approximation", where)


def make_solver(spec, where):
    return _from_table(spec, _SOLVERS, "solver", where)


def load_scenario(path):
    """Read and check a scenario file; returns (scenario dict, directory of the file)."""
    sc = read_toml(path, "scenario", ScenarioError)
    _unknown(sc, _SECTIONS, "scenario")
    for section in ("model", "simulation"):
        if not isinstance(sc.get(section), dict):
            raise ScenarioError(f"{section}: missing section [{section}]")
    for section in ("reference", "output"):
        if not isinstance(sc.setdefault(section, {}), dict):
            raise ScenarioError(f"{section}: expected a table [{section}]")
    _unknown(sc["model"], _MODEL_KEYS, "model")
    _unknown(sc["output"], _OUTPUT_KEYS, "output")
    for key in ("t_end", "H"):
        if key not in sc["simulation"]:
            raise ScenarioError(f"simulation.{key}: missing (the end time t_end and the macro step size H)")
    return sc, os.path.dirname(os.path.abspath(path))


def build_system(model, base_dir="."):
    """The CoupledSystem of a ``[model]`` table."""
    params = model.get("params", {})
    if not isinstance(params, dict):
        raise ScenarioError(f"model.params: expected a table, got {params!r}")
    if ("library" in model) == ("file" in model):
        raise ScenarioError("model: give exactly one of 'library' (a model of cosim.models) or 'file' (a Python file)")
    if "library" in model:
        name = model["library"]
        if name not in LIBRARY:
            raise ScenarioError(f"model.library: unknown model {name!r}; known: {sorted(LIBRARY)}")
        try:
            return LIBRARY[name](**params)
        except TypeError as exc:
            raise ScenarioError(f"model.params: {exc}") from None
    path = os.path.join(base_dir, str(model["file"]))
    if not os.path.isfile(path):
        raise ScenarioError(f"model.file: no such file {path}")
    ns = runpy.run_path(path, run_name="cosim_scenario_model")
    if callable(ns.get("build")):
        try:
            system = ns["build"](**params)
        except TypeError as exc:
            raise ScenarioError(f"model.params: {exc}") from None
    elif "system" in ns:
        if params:
            raise ScenarioError("model.params: the file defines a fixed `system`; parameters need a build() function")
        system = ns["system"]
    else:
        raise ScenarioError(f"model.file: {path} defines neither build(**params) nor `system`")
    if not isinstance(system, cosim.CoupledSystem):
        raise ScenarioError(f"model.file: expected a cosim.CoupledSystem from {path}, got {type(system).__name__}")
    return system


def simulation_options(sim):
    """Keyword arguments of cosim.simulate from a ``[simulation]`` table."""
    kw = dict(sim)
    if "approximation" in kw:
        kw["approximation"] = make_approximation(kw["approximation"])
    if "solver" in kw and "solvers" in kw:
        raise ScenarioError("simulation: give 'solver' (all subsystems) or 'solvers' (per subsystem), not both")
    if "solver" in kw:
        kw["solver"] = make_solver(kw["solver"], "simulation.solver")
    if "solvers" in kw:
        table = kw.pop("solvers")
        if not isinstance(table, dict):
            raise ScenarioError("simulation.solvers: expected a table subsystem name -> solver")
        kw["solver"] = {name: make_solver(spec, f"simulation.solvers.{name}") for name, spec in table.items()}
    return kw
