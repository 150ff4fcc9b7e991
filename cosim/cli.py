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
import contextlib
import functools
import os
import sys
import time
import warnings

import cosim
from .scenario import (LIBRARY, Outputs, ScenarioError, build_system, check_keys, load_scenario, make_approximation, make_solver, one_line, output_dir, read_toml, run_model_file, simulation_options)  # noqa: F401  (cosim.cli.*)

#: seconds ``cosim doe --scheduler`` waits for the Dask scheduler to answer
DASK_CONNECT_TIMEOUT = 10


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
        ref_opts["solver"] = make_solver(ref_opts["solver"], "reference.solver")
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
        import numpy as np
        fig = np.ravel(res.plot(signals=signals, ref=ref, title=title, ylabels=ylabels))[0].figure
        written["png"] = paths["png"]
        fig.savefig(written["png"], dpi=100)
        plt.close(fig)
    print("", file=stream)
    print("wrote " + ", ".join(written.values()), file=stream)
    return status, res, written


def _one_line_warnings(prog):
    """The command's warnings as one line each on stderr ("cosim doe: CouplingInstabilityWarning: ..."), not as
    Python's two lines that end with a line of cosim's own source, which says nothing to a user of the command."""
    def show(message, category, filename, lineno, file=None, line=None):
        print(f"{prog}: {category.__name__}: {message}", file=file or sys.stderr)

    def wrap(command):
        @functools.wraps(command)
        def run(argv=None):
            with warnings.catch_warnings():
                warnings.showwarning = show
                return command(argv)
        return run
    return wrap


@_one_line_warnings("cosim run")
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


@contextlib.contextmanager
def _dask_client(backend, scheduler, workers):
    """For ``backend`` "dask": a ``distributed.Client`` of the cluster at ``scheduler`` (which has its own workers)
    or of a :func:`cosim.doe.local_cluster` of ``workers`` processes, closed at the end; None for the other
    backends. A cluster that cannot be reached is an OSError naming the address (exit code 2)."""
    if scheduler is not None and not (isinstance(scheduler, str) and scheduler.strip()):
        raise ValueError(f"run.scheduler: expected a scheduler address such as 'tcp://HOST:8786', got {scheduler!r}")
    if backend != "dask":
        if scheduler:
            raise ValueError(f"--scheduler: only with --backend dask, got --backend {backend}")
        yield None
        return
    import distributed
    from .doe import local_cluster
    if scheduler:
        if workers is not None:
            raise ValueError("--workers: the cluster at --scheduler has its own workers; leave --workers out")
        try:
            client = distributed.Client(scheduler, timeout=DASK_CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as exc:
            raise OSError(f"--scheduler: no Dask scheduler reachable at {scheduler!r} "
                          f"({type(exc).__name__}: {one_line(exc)})") from None
        with client:
            yield client
        return
    with local_cluster(workers) as cluster, distributed.Client(cluster) as client:
        yield client


@_one_line_warnings("cosim doe")
def doe_main(argv=None):
    """``cosim doe STUDY.toml [--out DIR] [--backend B] [--scheduler ADDRESS] [--workers N] [--checkpoint FILE]
    [--no-progress]``: a design of experiments from a TOML file (format: cosim.doe.config); writes the table
    (CSV/Parquet) and the ANOVA."""
    from . import _extras
    try:
        _extras.require("doe", "cosim doe")
    except ImportError as exc:                   # one line naming the extra, not a traceback from cosim.doe
        print(exc, file=sys.stderr)              # "cosim doe needs the optional dependencies ...: pip install ..."
        return 1
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
    ap.add_argument("--backend", default=None, choices=["serial", "threads", "processes", "dask"],
                    help="where the runs execute (default: [run] backend, or threads; dask: a LocalCluster of "
                    "--workers processes on this machine, or the cluster of --scheduler)")
    ap.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="a running Dask scheduler (e.g. tcp://HOST:8786) whose workers run the study (default: "
                    "[run] scheduler; implies --backend dask)")
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
        scheduler = args.scheduler or (run.get("scheduler") if args.backend in (None, "dask") else None)
        backend = args.backend or ("dask" if scheduler else run.get("backend", "threads"))
        workers = args.workers
        if workers is None and not (args.backend == "serial" or args.scheduler):
            workers = run.get("workers")          # the file's pool size, unless the command line chose no pool
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
              f"backend {backend}" + (f" at {scheduler}" if scheduler else "") + (f", checkpoint {ck}" if ck else ""))
        t0 = time.perf_counter()
        with _dask_client(backend, scheduler, workers) as client:
            df = study.run(backend=client or backend, workers=None if client else workers, checkpoint=ck,
                           progress=not args.no_progress, chunksize=run.get("chunksize"),
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
            tab = doe_analysis.anova(data, response, study.factors, interactions=out.get("interactions", 2))
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
