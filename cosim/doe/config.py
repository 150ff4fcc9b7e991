"""A study from a TOML file (``cosim doe study.toml``): model, fixed simulation options, factors, design,
responses by name, how to run, outputs. Format (every section but [factors] optional; unknown keys are refused
with a message naming them)::

    title = "ZOH study of the two-mass oscillator"
    study_id = "zoh-2024-06"                 # optional label stored in the checkpoint (a resume must match it)

    [model]                                  # as `cosim run`: a model of cosim.models or a Python file with build()
                                             # (model.file RUNS that Python file: use only files you trust)
    library = "two_mass_oscillator"
    [model.params]                           # fixed keyword arguments of the model function
    coupling = "force/displacement"

    [simulation]                             # fixed keyword arguments of cosim.simulate (as `cosim run`)
    t_end = 0.2
    approximation = "zoh"
    solver = { type = "exact" }

    [factors]                                # name = [levels] ({low, high, log} ranges for lhs/sobol)
    ck = [1e4, 1e5, 1e6]                     # a parameter of the model function ...
    H = [1e-4, 1e-3]                         # ... or an option of cosim.simulate ("model.x0" / "simulation.x0"
    approximation = ["zoh", "lagrange k=1"]  #     when both have it); approximation and solver levels are
                                             #     "type key=value ..." strings
    [design]
    type = "full"                            # "full" | "lhs" | "sobol"; n, seed, second_order for the sampled ones
    max_runs = 1000000                       # a larger design is refused before it is built (--max-runs)

    [responses]
    names = ["eps_mono_sat", "stable"]       # built-in responses (cosim.doe.responses)
    reference = true                         # monolithic reference (needed by eps_mono*, max_rel, nrmse)

    [run]
    backend = "threads"                      # "serial" | "threads" | "processes" | "dask" (a local_cluster)
    workers = 2
    # scheduler = "tcp://HOST:8786"          # a running Dask cluster's scheduler instead (--scheduler)
    checkpoint = "study.sqlite"              # in the output directory; resumes an interrupted study
    checkpoint_mode = "resume"               # "resume" | "new" | "overwrite" (--checkpoint-mode)
    retry_failed = false                     # run the runs recorded as "failed" again (--retry-failed)

    [output]
    dir = "out"
    table = "study.csv"                      # .csv or .parquet (pyarrow)
    anova = "anova.csv"                      # the ANOVA table, "" = none
    response = "eps_mono_sat"                # the response the ANOVA analyses (default: the first)
    interactions = 2
"""
from __future__ import annotations

import inspect
import os

from ..scenario import (LIBRARY, ScenarioError, check_keys, make_approximation, make_solver, read_toml,
                        run_model_file, simulation_options)
from .errors import StudyError

SECTIONS = {"title", "study_id", "model", "simulation", "factors", "design", "responses", "run", "output"}
KEYS = {"model": {"library", "file", "params"}, "design": {"type", "n", "seed", "second_order", "max_runs"},
        "responses": {"names", "reference"},
        "run": {"backend", "scheduler", "workers", "checkpoint", "chunksize", "checkpoint_mode", "retry_failed"},
        "output": {"dir", "table", "anova", "response", "interactions"}}


def _unknown(table, known, where):
    check_keys(table, known, where, StudyError)


def _literal(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def _object_level(value, kind, where):
    """An approximation or solver from a level "type key=value ..." (or an inline table)."""
    if isinstance(value, str):
        parts = value.split()
        if not parts:
            raise StudyError(f"{where}: empty {kind} name")
        spec = {"type": parts[0]}
        for p in parts[1:]:
            if "=" not in p:
                raise StudyError(f"{where}: expected key=value after the {kind} type in {value!r}, got {p!r}")
            k, v = p.split("=", 1)
            spec[k] = _literal(v)
        value = spec
    try:
        return make_approximation(value, where) if kind == "approximation" else make_solver(value, where)
    except (ScenarioError, TypeError, ValueError) as exc:
        raise StudyError(str(exc)) from None


class TomlBuild:
    """build(p) of a study file: the model function with the fixed and the factor parameters, and the simulate
    options with the factor options."""

    def __init__(self, model_fn, model_params, sim_options, routes, model_file=None):
        self.model_fn, self.model_params, self.sim_options, self.routes = model_fn, model_params, sim_options, routes
        self._model_file = model_file     # not part of the study's identity (the folder may move)

    def __call__(self, p):
        mp = dict(self.model_params)
        so = dict(self.sim_options)
        for name, value in p.items():
            where, key = self.routes[name]
            if where == "model":
                mp[key] = value
            elif key in ("approximation", "solver"):
                so[key] = _object_level(value, key, f"factors.{name}")
            else:
                so[key] = value
        return dict(system=self.model_fn(**mp), **so)


def _model(model, base):
    if not isinstance(model, dict):
        raise StudyError("model: expected a table [model]")
    _unknown(model, KEYS["model"], "model")
    params = model.get("params", {})
    if not isinstance(params, dict):
        raise StudyError(f"model.params: expected a table, got {params!r}")
    if ("library" in model) == ("file" in model):
        raise StudyError("model: give exactly one of 'library' (a model of cosim.models) or 'file' (a Python file)")
    if "library" in model:
        name = model["library"]
        if name not in LIBRARY:
            raise StudyError(f"model.library: unknown model {name!r}; known: {sorted(LIBRARY)}")
        return LIBRARY[name], params, name, None
    path = os.path.join(base, str(model["file"]))
    if not os.path.isfile(path):
        raise StudyError(f"model.file: no such file {path}")
    ns = run_model_file(path, "cosim_study_model", StudyError)
    if not callable(ns.get("build")):
        raise StudyError(f"model.file: {path} defines no build(**params) function")
    return ns["build"], params, os.path.basename(path), path


def _routes(factors, model_fn, model_name):
    from .. import simulate as _simulate_fn
    sig = inspect.signature(model_fn).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.values())
    model_keys = {k for k, p in sig.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    sim_keys = set(inspect.signature(_simulate_fn).parameters) - {"system"}
    sim_keys = {k for k in sim_keys if not k.startswith("_")}
    routes = {}
    for name in factors:
        if name.startswith("model."):
            key = name[6:]
            if key not in model_keys and not takes_any:
                raise StudyError(f"factors.{name}: {key!r} is not a parameter of the model {model_name}; known: "
                                 f"{sorted(model_keys)}")
            routes[name] = ("model", key)
        elif name.startswith("simulation."):
            key = name[11:]
            if key not in sim_keys:
                raise StudyError(f"factors.{name}: {key!r} is not an option of cosim.simulate; known: "
                                 f"{sorted(sim_keys)}")
            routes[name] = ("simulation", key)
        elif name in model_keys:
            routes[name] = ("model", name)
        elif name in sim_keys:
            routes[name] = ("simulation", name)
        else:
            raise StudyError(f"factors.{name}: unknown name {name!r}: neither a parameter of the model "
                             f"{model_name} ({sorted(model_keys)}) nor an option of cosim.simulate "
                             f"({sorted(sim_keys)})")
    return routes


def load_study(path, max_runs=None):
    """(Study, run options, output options, title) of a study file; ``max_runs`` overrides ``[design] max_runs``."""
    from .study import Study
    sc = read_toml(path, "study", StudyError)
    _unknown(sc, SECTIONS, "study")
    for sec in SECTIONS - {"title", "study_id"}:
        if not isinstance(sc.setdefault(sec, {}), dict):
            raise StudyError(f"{sec}: expected a table [{sec}]")
        if sec in KEYS:
            _unknown(sc[sec], KEYS[sec], sec)
    if not sc["factors"]:
        raise StudyError("factors: no factor given ([factors] name = [levels])")
    base = os.path.dirname(os.path.abspath(path))
    model_fn, model_params, model_name, model_file = _model(sc["model"] or {"library": "two_mass_oscillator"}, base)
    routes = _routes(sc["factors"], model_fn, model_name)
    sim = dict(sc["simulation"])
    try:
        sim = simulation_options(sim)
    except ScenarioError as exc:
        raise StudyError(str(exc)) from None
    fixed_and_factor = set(sim) | {key for where, key in routes.values() if where == "simulation"}
    for key in ("t_end",):
        if key not in fixed_and_factor:
            raise StudyError(f"simulation.{key}: missing (give it in [simulation] or as a factor)")
    if "H" not in fixed_and_factor and "grid" not in fixed_and_factor:
        raise StudyError("simulation.H: missing the macro step size H (in [simulation] or as a factor)")
    design = sc["design"]
    kind = design.get("type", "full")
    factors = {}
    for name, spec in sc["factors"].items():
        if isinstance(spec, dict):
            factors[name] = spec
        elif isinstance(spec, list):
            factors[name] = spec
        else:
            raise StudyError(f"factors.{name}: expected a list of levels or a range {{low, high, log}}, got {spec!r}")
    for name, levels in factors.items():   # every approximation and solver level parses (before any run)
        key = routes[name][1]
        if routes[name][0] == "simulation" and key in ("approximation", "solver") and isinstance(levels, list):
            for value in levels:
                _object_level(value, key, f"factors.{name}")
    resp = sc["responses"]
    names = resp.get("names", ["eps_mono_sat", "stable"])
    reference = resp.get("reference", True)
    if not isinstance(reference, bool):
        raise StudyError(f"responses.reference: expected true or false, got {reference!r}")
    build = TomlBuild(model_fn, model_params, sim, routes, model_file)
    from .designs import MAX_RUNS
    max_runs = max_runs if max_runs is not None else design.get("max_runs", MAX_RUNS)
    try:
        study = Study(build, factors, design=kind, responses=names, reference=reference, n=design.get("n"),
                      seed=design.get("seed"), second_order=design.get("second_order", True), max_runs=max_runs,
                      study_id=sc.get("study_id"))
    except (TypeError, ValueError) as exc:
        raise StudyError(str(exc)) from None
    title = sc.get("title") or os.path.splitext(os.path.basename(path))[0]
    return study, dict(sc["run"]), dict(sc["output"]), title
