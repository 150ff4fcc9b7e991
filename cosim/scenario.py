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


def one_line(exc):
    """An error's message on one line (for the command's exit-2 message)."""
    return " ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def run_model_file(path, run_name, error):
    """The namespace of the model file ``path``: the file is executed as Python (with this process's rights; the
    docs say it must be trusted); ``error`` names a file that raises."""
    try:
        return runpy.run_path(path, run_name=run_name)
    except (Exception, SystemExit) as exc:
        raise error(f"model.file: {path} raised {type(exc).__name__}: {one_line(exc)}") from None


def output_dir(name, error, allow_outside=False):
    """The output directory ``name`` of a scenario or study file: inside the current directory unless
    ``allow_outside``; created."""
    if not isinstance(name, str) or not name:
        raise error(f"output.dir: expected a directory name, got {name!r}")
    real, here = os.path.realpath(name), os.path.realpath(os.curdir)
    if not allow_outside and os.path.commonpath([real, here]) != here:
        raise error(f"output.dir: {name!r} resolves to {real}, outside the current directory {here}; give --out DIR "
                    "(or --allow-outside)")
    if os.path.exists(real) and not os.path.isdir(real):
        raise error(f"output.dir: {real} exists and is not a directory")
    return name


class Outputs:
    """The output files of one command, each resolved inside the output directory ``out_dir`` (unless
    ``allow_outside``), none of them an input file (``protected``), a directory or another output."""

    def __init__(self, out_dir, error, allow_outside=False, protected=()):
        self.dir, self.error, self.allow_outside = out_dir, error, allow_outside
        self.real = os.path.realpath(out_dir)
        self.protected = {os.path.realpath(p) for p in protected if p}
        self.taken = {}

    def path(self, name, key, outside_ok=False):
        """The path of output ``key`` (a TOML key, e.g. output.csv) named ``name``."""
        if not isinstance(name, str) or not name:
            raise self.error(f"{key}: expected a file name, got {name!r}")
        path = os.path.join(self.dir, name)
        real = os.path.realpath(path)
        inside = os.path.commonpath([real, self.real]) == self.real and real != self.real
        if not (inside or self.allow_outside or outside_ok):
            raise self.error(f"{key}: {name!r} resolves to {real}, outside the output directory {self.real}; give a "
                             "file name inside it (or --allow-outside)")
        if real in self.protected:
            raise self.error(f"{key}: {name!r} is an input file of this command ({real}); it is not overwritten")
        if os.path.isdir(real):
            raise self.error(f"{key}: {real} is a directory; expected a file name")
        if real in self.taken:
            raise self.error(f"{key}: {name!r} is also {self.taken[real]}; give each output its own file")
        self.taken[real] = key
        return path


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
    ns = run_model_file(path, "cosim_scenario_model", ScenarioError)
    if callable(ns.get("build")):
        try:
            system = ns["build"](**params)
        except TypeError as exc:
            raise ScenarioError(f"model.params: {exc}") from None
        except Exception as exc:
            raise ScenarioError(f"model.file: build() of {path} raised {type(exc).__name__}: {one_line(exc)}") from None
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
