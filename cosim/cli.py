"""``cosim run scenario.toml``: one co-simulation described by a TOML file, with its outputs.

A scenario names a model, the co-simulation options and the outputs::

    title = "two-mass oscillator"            # optional

    [model]
    library = "two_mass_oscillator"          # a model of cosim.models (see LIBRARY) ...
    # file = "my_system.py"                  # ... or a Python file (path relative to the scenario) that defines
    #                                        #     build(**params) -> CoupledSystem, or a CoupledSystem `system`
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
    dir = "out"                              # relative to the current directory; --out overrides it
    csv = "result.csv"                       # the result at the macro points (Result.to_csv), "" = none
    png = "result.png"                       # the signals over time (Result.plot) with the reference, "" = none
    signals = ["S1.x1", "S2.F"]              # signals of the figure (default: the outputs)
    ylabels = { "S2.F" = "F [N]" }           # axis labels of the figure (e.g. with units)
    errors = "errors.csv"                    # error table against the monolithic reference, "" = none

Exit status: 0 on success, 1 if the run diverged or a solver failed (the partial result is written), 2 for a bad
scenario (the message names the key).
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import cosim
from .scenario import (LIBRARY, ScenarioError, build_system, check_keys, load_scenario,  # noqa: F401  (cosim.cli.*)
                       make_approximation, make_solver, read_toml, simulation_options)

def run_scenario(path, out_dir=None, stream=None):
    """Run a scenario file; write its outputs; returns (exit status, Result, dict of written files)."""
    stream = sys.stdout if stream is None else stream
    sc, base = load_scenario(path)
    system = build_system(sc["model"], base)
    opts = simulation_options(sc["simulation"])
    ref_opts = dict(sc["reference"])
    if "solver" in ref_opts:
        ref_opts["solver"] = _solver(ref_opts["solver"], "reference.solver")
    out = sc["output"]
    out_dir = out_dir if out_dir is not None else out.get("dir", ".")
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

    written = {}
    ref = None
    if out.get("errors", "errors.csv") or out.get("png", "result.png"):
        if len(res.t) >= 2:
            ref = cosim.simulate_monolithic(system, float(res.t[-1]), t_eval=res.t, **ref_opts)
    csv = out.get("csv", "result.csv")
    if csv:
        written["csv"] = res.to_csv(os.path.join(out_dir, csv))
    errors = out.get("errors", "errors.csv")
    if errors and ref is not None:
        err = res.error_to(ref)
        table = err.to_dataframe()
        path_err = os.path.join(out_dir, errors)
        table.to_csv(path_err, float_format="%.6e")
        written["errors"] = path_err
        print("", file=stream)
        print("error against the monolithic reference (max_rel = max|z - z_ref| / max|z_ref| per signal; nrmse: "
              "kraft2021 eq. 5.1; eps_mono: genser2020 eq. 3.10, time mean):", file=stream)
        print(table.to_string(float_format=lambda v: f"{v:.3e}"), file=stream)
        print(f"eps_mono (genser2020 eq. 3.9) = {err['eps_mono']:.4e}; nrmse over the states (kraft2021 eq. 5.2) "
              f"= {err['nrmse']:.4e}", file=stream)
    png = out.get("png", "result.png")
    if png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig = res.plot(signals=out.get("signals"), ref=ref, title=title, ylabels=out.get("ylabels"))
        written["png"] = os.path.join(out_dir, png)
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
    args = ap.parse_args(argv)
    try:
        status, _, _ = run_scenario(args.scenario, args.out)
    except (ScenarioError, ValueError, TypeError) as exc:
        print(f"cosim run: {exc}", file=sys.stderr)
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
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    try:
        study, run, out, title = load_study(args.study)
        out_dir = args.out if args.out is not None else out.get("dir", ".")
        os.makedirs(out_dir, exist_ok=True)
        backend = args.backend or run.get("backend", "threads")
        workers = args.workers if args.workers is not None else run.get("workers")
        ck = args.checkpoint or run.get("checkpoint")
        if ck and args.checkpoint is None:
            ck = os.path.join(out_dir, ck)
        table_name = out.get("table", "study.csv")
        if table_name and not table_name.endswith((".csv", ".parquet")):
            raise StudyError(f"output.table: expected a .csv or .parquet file name, got {table_name!r}")
        print(f"cosim {cosim.__version__} doe: {title}: {len(study)} runs, factors {study.factors}, "
              f"backend {backend}" + (f", checkpoint {ck}" if ck else ""))
        t0 = time.perf_counter()
        df = study.run(backend=backend, workers=workers, checkpoint=ck, progress=not args.no_progress,
                       chunksize=run.get("chunksize"))
        wall = time.perf_counter() - t0
        print(f"{len(df)} runs in {wall:.2f} s; status: " +
              ", ".join(f"{k} {v}" for k, v in df["status"].value_counts().items()))
        written = []
        if table_name:
            path = os.path.join(out_dir, table_name)
            if table_name.endswith(".parquet"):
                df.to_parquet(path)
            else:
                df.to_csv(path, float_format="%.17g")
            written.append(path)
        anova_name = out.get("anova", "anova.csv")
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
            path = os.path.join(out_dir, anova_name)
            tab.to_csv(path, float_format="%.10g")
            written.append(path)
        print("\nwrote " + ", ".join(written))
    except KeyboardInterrupt:
        print("cosim doe: interrupted", file=sys.stderr)
        return 130
    except (StudyError, ScenarioError, ValueError, TypeError) as exc:
        print(f"cosim doe: {exc}", file=sys.stderr)
        return 2
    return 0
