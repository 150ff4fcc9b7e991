"""``cosim run scenario.toml``: one co-simulation described by a TOML file, with its outputs.

A scenario names a model, the co-simulation options and the outputs::

    title = "two-mass oscillator"            # optional

    [model]
    library = "two_mass_oscillator"          # a model of cosim.models (see LIBRARY) ...
    # file = "my_system.py"                  # ... or a Python file (path relative to the scenario) that defines
    #                                        #     build(**params) -> CoupledSystem, or a CoupledSystem `system`.
    #                                        #     The file is EXECUTED as Python with your rights: run only
    #                                        #     scenarios whose model files you trust
    [model.params]                           # keyword arguments of the model function / build()
    ck = 2e5
    dk = 200.0

    [simulation]                             # keyword arguments of cosim.simulate
    t_end = 0.2                              # end time [s]
    H = 1e-3                                 # macro step size H [s]
    scheme = "gauss-seidel"                  # "jacobi" | "gauss-seidel"
    approximation = { type = "lagrange", k = 1 }   # or "zoh"; types: zoh, lagrange, extripol (k, continuity), hermite
    solver = { type = "cvode", rtol = 1e-10, atol = 1e-12 }   # or "exact", "rk4", "euler"; options as the classes
    # solvers = { S1 = "exact", S2 = { type = "rk4", substeps = 4 } }   # one solver per subsystem instead
    # any other key (update, startup, order, ...) is passed to cosim.simulate as it is

    [reference]                              # optional: options of cosim.simulate_monolithic (e.g. solver)

    [output]
    dir = "out"                              # inside the current directory; --out overrides it
    csv = "result.csv"                       # the result at the macro points (Result.to_csv), "" = none; every
    #                                        # output is a file name inside the output directory (a path that
    #                                        # leaves it, e.g. "../x.csv" or "/tmp/x.csv", is refused unless the
    #                                        # command gets --allow-outside; the scenario file is never written)
    png = "result.png"                       # the signals over time (Result.plot) with the reference, "" = none
    signals = ["S1.x1", "S2.F"]              # signals of the figure (default: the outputs)
    ylabels = { "S2.F" = "F [N]" }           # axis labels of the figure (e.g. with units)
    errors = "errors.csv"                    # error table against the monolithic reference, "" = none

Exit status: 0 on success, 1 if the run diverged or a solver failed (the partial result is written), 2 for a bad
scenario (one line on stderr that names the key: a missing file, a directory where a file is expected, an unknown
signal, a model file that raises, an output outside the output directory, ...).
"""
from __future__ import annotations

import argparse
import os
import runpy
import sys
import time

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


def _approximation(spec, where="simulation.approximation"):
    return _from_table(spec, _APPROX, "approximation", where)


def _solver(spec, where):
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
        kw["approximation"] = _approximation(kw["approximation"])
    if "solver" in kw and "solvers" in kw:
        raise ScenarioError("simulation: give 'solver' (all subsystems) or 'solvers' (per subsystem), not both")
    if "solver" in kw:
        kw["solver"] = _solver(kw["solver"], "simulation.solver")
    if "solvers" in kw:
        table = kw.pop("solvers")
        if not isinstance(table, dict):
            raise ScenarioError("simulation.solvers: expected a table subsystem name -> solver")
        kw["solver"] = {name: _solver(spec, f"simulation.solvers.{name}") for name, spec in table.items()}
    return kw


def run_scenario(path, out_dir=None, stream=None, allow_outside=False):
    """Run a scenario file; write its outputs (each inside the output directory unless ``allow_outside``);
    returns (exit status, Result, dict of written files)."""
    stream = sys.stdout if stream is None else stream
    sc, base = load_scenario(path)
    out = sc["output"]
    out_dir = out_dir if out_dir is not None else output_dir(out.get("dir", "."), ScenarioError, allow_outside)
    model_file = os.path.join(base, str(sc["model"]["file"])) if "file" in sc["model"] else None
    outputs = Outputs(out_dir, ScenarioError, allow_outside, protected=(path, model_file))
    names = {key: out.get(key, default) for key, default in
             (("csv", "result.csv"), ("png", "result.png"), ("errors", "errors.csv"))}
    paths = {key: outputs.path(name, f"output.{key}") for key, name in names.items() if name}
    signals, ylabels = out.get("signals"), out.get("ylabels")
    if signals is not None and (not isinstance(signals, list) or not all(isinstance(x, str) for x in signals)):
        raise ScenarioError(f"output.signals: expected a list of signal names, got {signals!r}")
    if ylabels is not None and not isinstance(ylabels, dict):
        raise ScenarioError(f"output.ylabels: expected a table signal -> label, got {ylabels!r}")
    system = build_system(sc["model"], base)
    opts = simulation_options(sc["simulation"])
    ref_opts = dict(sc["reference"])
    if "solver" in ref_opts:
        ref_opts["solver"] = _solver(ref_opts["solver"], "reference.solver")
    os.makedirs(out_dir, exist_ok=True)
    title = sc.get("title") or os.path.splitext(os.path.basename(path))[0]
    print(f"cosim {cosim.__version__}: {title}", file=stream)
    print(f"  model: {sc['model'].get('library') or sc['model'].get('file')} "
          f"{sc['model'].get('params', {}) or ''}".rstrip(), file=stream)
    print("  " + ", ".join(f"{k} = {v!r}" for k, v in opts.items()), file=stream)
    status, message = 0, ""
    t0 = time.perf_counter()
    try:
        res = cosim.simulate(system, **opts)
    except TypeError as exc:
        raise ScenarioError(f"simulation: {exc}") from None
    except (cosim.DivergenceError, cosim.SolverError) as exc:
        res, status, message = exc.result, 1, f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - t0
    print(f"  {len(res.t) - 1} macro steps in {wall:.3f} s" + (f"; {message}" if message else ""), file=stream)
    for key, names_ in (("signals", signals or []), ("ylabels", list(ylabels or {}))):
        unknown = [x for x in names_ if x not in res.signals]
        if unknown:
            raise ScenarioError(f"output.{key}: unknown signal(s) {unknown}; signals: {res.signals}")

    written = {}
    ref = None
    if "errors" in paths or "png" in paths:
        if len(res.t) >= 2:
            ref = cosim.simulate_monolithic(system, float(res.t[-1]), t_eval=res.t, **ref_opts)
    if "csv" in paths:
        written["csv"] = res.to_csv(paths["csv"])
    if "errors" in paths and ref is not None:
        err = res.error_to(ref)
        table = err.to_dataframe()
        path_err = paths["errors"]
        table.to_csv(path_err, float_format="%.6e")
        written["errors"] = path_err
        print("", file=stream)
        print("error against the monolithic reference (max_rel = max|z - z_ref| / max|z_ref| per signal; nrmse: "
              "kraft2021 eq. 5.1; eps_mono: genser2020 eq. 3.10, time mean):", file=stream)
        print(table.to_string(float_format=lambda v: f"{v:.3e}"), file=stream)
        print(f"eps_mono (genser2020 eq. 3.9) = {err['eps_mono']:.4e}; nrmse over the states (kraft2021 eq. 5.2) "
              f"= {err['nrmse']:.4e}", file=stream)
    if "png" in paths:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = res.plot(signals=signals, ref=ref, title=title, ylabels=ylabels)
        written["png"] = paths["png"]
        fig.savefig(written["png"], dpi=100)
        plt.close(fig)
    print("", file=stream)
    print("wrote " + ", ".join(written.values()), file=stream)
    return status, res, written


def main(argv=None):
    """``cosim run SCENARIO.toml [--out DIR]``."""
    ap = argparse.ArgumentParser(prog="cosim run", description="Run the co-simulation described by a TOML scenario "
                                 "file and write its outputs (CSV, PNG, error table).",
                                 epilog="Scenario format: see the docstring of cosim.cli (python -m pydoc cosim.cli) "
                                 "and examples/two_mass.toml.")
    ap.add_argument("scenario", help="scenario file (TOML)")
    ap.add_argument("--out", default=None, help="output directory (default: [output] dir of the scenario, or .)")
    ap.add_argument("--allow-outside", action="store_true", help="let the scenario's output names leave the output "
                    "directory (refused by default)")
    args = ap.parse_args(argv)
    try:
        status, _, _ = run_scenario(args.scenario, args.out, allow_outside=args.allow_outside)
    except (ScenarioError, ValueError, TypeError, KeyError, OSError) as exc:
        print(f"cosim run: {one_line(exc)}", file=sys.stderr)
        return 2
    return status


def doe_main(argv=None):
    """``cosim doe STUDY.toml [--out DIR] [--backend B] [--workers N] [--checkpoint FILE] [--no-progress]``: a design
    of experiments from a TOML file (format: cosim.doe.config); writes the table (CSV/Parquet) and the ANOVA."""
    import numpy as np
    from .doe import analysis as doe_analysis
    from .doe.config import load_study
    from .doe.errors import StudyError
    ap = argparse.ArgumentParser(prog="cosim doe", description="Run a design-of-experiments study described by a "
                                 "TOML file; write its table and ANOVA. An interrupted study (Ctrl-C) resumes from "
                                 "its checkpoint when started again.",
                                 epilog="Study format: python -m pydoc cosim.doe.config; example: "
                                 "examples/doe_two_mass.toml.")
    ap.add_argument("study", help="study file (TOML)")
    ap.add_argument("--out", default=None, help="output directory (default: [output] dir of the study, or .)")
    ap.add_argument("--backend", default=None, choices=["serial", "threads", "processes"],
                    help="where the runs execute (default: [run] backend, or threads)")
    ap.add_argument("--workers", type=int, default=None, help="pool size (default: [run] workers, or the cores)")
    ap.add_argument("--checkpoint", default=None, help="SQLite checkpoint (default: [run] checkpoint, in the "
                    "output directory)")
    ap.add_argument("--checkpoint-mode", default=None, choices=["resume", "new", "overwrite"],
                    help="resume a checkpoint of the same study (default; another study's is refused, naming what "
                    "differs), refuse an existing file (new), or start afresh (overwrite)")
    ap.add_argument("--retry-failed", action="store_true", help="run again the runs the checkpoint holds as failed")
    ap.add_argument("--max-runs", type=int, default=None, help="largest design built (default: [design] max_runs, "
                    "or 1000000)")
    ap.add_argument("--allow-outside", action="store_true", help="let the study file's output names leave the "
                    "output directory (refused by default)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    import logging
    log = logging.getLogger("cosim.doe")      # the study's resume and summary lines, on stdout
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    level, log.level = log.level, logging.INFO
    try:
        study, run, out, title = load_study(args.study, max_runs=args.max_runs)
        out_dir = args.out if args.out is not None else output_dir(out.get("dir", "."), StudyError,
                                                                   args.allow_outside)
        outputs = Outputs(out_dir, StudyError, args.allow_outside,
                          protected=(args.study, getattr(study.build, "_model_file", None)))
        backend = args.backend or run.get("backend", "threads")
        workers = args.workers if args.workers is not None else run.get("workers")
        ck = None
        if args.checkpoint:                       # the command line's own choice: any place
            ck = outputs.path(os.path.abspath(args.checkpoint), "--checkpoint", outside_ok=True)
        elif run.get("checkpoint"):
            ck = outputs.path(run["checkpoint"], "run.checkpoint")
        table_name = out.get("table", "study.csv")
        if table_name and not str(table_name).endswith((".csv", ".parquet")):
            raise StudyError(f"output.table: expected a .csv or .parquet file name, got {table_name!r}")
        table_path = outputs.path(table_name, "output.table") if table_name else None
        anova_name = out.get("anova", "anova.csv")
        anova_path = outputs.path(anova_name, "output.anova") if anova_name else None
        os.makedirs(out_dir, exist_ok=True)
        print(f"cosim {cosim.__version__} doe: {title}: {len(study)} runs, factors {study.factors}, "
              f"backend {backend}" + (f", checkpoint {ck}" if ck else ""))
        t0 = time.perf_counter()
        df = study.run(backend=backend, workers=workers, checkpoint=ck, progress=not args.no_progress,
                       chunksize=run.get("chunksize"),
                       checkpoint_mode=args.checkpoint_mode or run.get("checkpoint_mode", "resume"),
                       retry_failed=args.retry_failed or run.get("retry_failed", False))
        wall = time.perf_counter() - t0
        print(f"{len(df)} runs in {wall:.2f} s; status: " +
              ", ".join(f"{k} {v}" for k, v in df["status"].value_counts().items()))
        written = []
        if table_path:
            path = table_path
            if table_name.endswith(".parquet"):
                df.to_parquet(path)
            else:
                df.to_csv(path, float_format="%.17g")
            written.append(path)
        responses = [c for c in df.columns if c not in study.factors and c not in ("status", "message", "wall")]
        response = out.get("response", responses[0] if responses else None)
        if anova_name and response is not None:
            if response not in df.columns:
                raise StudyError(f"output.response: {response!r} is not a response; responses: {responses}")
            y = df[response].astype(float)
            data = df[y.notna() & np.isfinite(y)] if len(df) else df
            if len(data) < len(df):
                print(f"ANOVA: {len(df) - len(data)} runs with a non-finite {response} left out")
            tab = doe_analysis.anova(data, study.factors, response, interactions=out.get("interactions", 2))
            print(f"\nANOVA of {response} (genser2020 eq. 3.11-3.12; percent = normalised MS, Table 3.10):")
            print(tab.to_string(float_format=lambda v: f"{v:.4g}"))
            path = anova_path
            tab.to_csv(path, float_format="%.10g")
            written.append(path)
        print("\nwrote " + ", ".join(written))
    except KeyboardInterrupt:
        print("cosim doe: interrupted", file=sys.stderr)
        return 130
    except (StudyError, ScenarioError, ValueError, TypeError, KeyError, OSError) as exc:
        print(f"cosim doe: {one_line(exc)}", file=sys.stderr)
        return 2
    finally:
        log.removeHandler(handler)
        log.setLevel(level)
    return 0
