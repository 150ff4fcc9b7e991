"""Genser (2020): DoE sensitivity studies of the pre-step method
=============================================================

Genser's DoE sensitivity studies of the pre-step method (genser2020 §12) with cosim.doe.

* §12.2: exact interface Jacobians, continuous version, linear DMO (ck = 1e5, dk = 1e3, ΔT = 1 ms): 512 runs,
  factors of Table 3.3; ANOVA (Table 3.4) and the ascending-sorting optimum (Table 3.5).
* §12.3: approximated IJs, discrete version, nonlinear DMO + F_ex (ΔT = 1 ms, δt = 1e-5 explicit Euler, 1 s):
  RLS (17 640 runs, Tables 3.7 + 3.8) and MOESP (7 056 runs, Table 3.9); ANOVA (Tables 3.10, 3.11) and optima
  (Tables 3.12, 3.13; ≤ 1.1·min for RLS, the best 50 for MOESP).

With ``cosim.PreStep`` the script runs §12.2 in full and the §12.3 rows the pre-step supports (see ``supported``;
wall times in benchmarks/README.md, ``benchmarks/doe.py --only-full``). Without it this script says so and runs a
reduced study: the same nonlinear DMO + F_ex, explicit Euler δt = 1e-5, ΔT ∈ {0.5, 1, 2} ms, with
the signal-based couplings (ZOH, Lagrange k = 1, 2) and the impulse amplitude as factors.

Run: .venv/bin/python examples/genser_doe.py [12.2 | rls | moesp | zoh] [--workers 2] [--runs N] [--out DIR]
(``--runs N`` keeps the first N runs of the design, e.g. for a quick look; the checkpoint in --out resumes an
interrupted study.)
"""
from __future__ import annotations

import argparse
import functools
import os
import sys

import numpy as np

import cosim
from cosim import doe

T_END = 1.0          # genser2020 §12.3: 1 s
DT_MACRO = 1e-3      # ΔT = 1 ms
DT_MICRO = 1e-5      # explicit Euler δt = 1e-5

# genser2020 Table 3.3 (§12.2)
FACTORS_12_2 = {"optionErrDiffEqu": ["exact", "ex. euler"], "stepsErrDiffEqu": [1, 10, 100, 1000],
                "optionExtrapolation": ["exact", "ex. euler"], "stepsExtrapolation": [1, 10, 100, 1000],
                "stepsDiscreteSystemMatrices": [1, 10, 100, 1000], "useErrDiffEqu": [True, False]}
# genser2020 Tables 3.7 + 3.8 (RLS) and 3.9 (MOESP)
GENERAL = {"timeLearning": [0.1, 0.2, 0.5], "timeSwitchphase": [0.002, 0.01, 0.05],
           "thresholdMbc2sbcCoupling": [0.01, 0.05, 0.1, 0.5, 1, 2, 5],
           "thresholdMbcNoInputOpt": [0.01, 0.05, 0.1, 0.5, 1, 2, 5], "useErrDiffEqu": [True, False]}
FACTORS_RLS = dict(GENERAL, **{"lambda": [0.95, 0.98, 0.99, 0.999, 1.0], "M": [1, 2], "N": [1, 2]})
FACTORS_MOESP = dict(GENERAL, **{"modelOrder": [1, 2], "windowSize": [50, 200, 500, 1000]})
# the reduced study of today (no pre-step)
FACTORS_ZOH = {"approximation": ["zoh", "lagrange1", "lagrange2"], "H": [5e-4, 1e-3, 2e-3],
               "impulse_amplitude": [1e5, 5e5, 1e6]}

# units of the factors for the figures' axes (genser2020 §8-§12): times in s, the impulse in N; step counts, orders,
# window sizes, the forgetting factor and the thresholds on the relative error ε_SI,global are dimensionless ("-");
# text and boolean factors (options, approximation, useErrDiffEqu) are names, not quantities
UNITS = {"stepsErrDiffEqu": "-", "stepsExtrapolation": "-", "stepsDiscreteSystemMatrices": "-",
         "timeLearning": "s", "timeSwitchphase": "s", "thresholdMbc2sbcCoupling": "-", "thresholdMbcNoInputOpt": "-",
         "lambda": "-", "M": "-", "N": "-", "modelOrder": "-", "windowSize": "-", "H": "s", "impulse_amplitude": "N"}


def have_prestep():
    return hasattr(cosim, "PreStep")


@functools.lru_cache(maxsize=16)
def _nonlinear_dmo(**kw):
    # genser2020 §10.2-10.3: progressive coupling characteristics (Table 3.1) and the F_ex impulses every 50 ms.
    # One system object per distinct parameter set, shared by the runs (cosim.simulate only reads it): a study
    # does not rebuild and re-validate the same system thousands of times
    return cosim.models.two_mass_oscillator(nonlinear=True, impulse=True, **kw)


# ---------------------------------------------------------------------------------------------------- builds
def build_12_2(p):
    """§12.2: continuous pre-step with exact IJs on the linear DMO (thesis parameter names, issue 12's API)."""
    system = cosim.models.two_mass_oscillator(ck=1e5, dk=1e3, coupling="force/displacement")
    coupling = cosim.PreStep(variant="continuous", jacobians="exact", **p)
    return dict(system=system, t_end=T_END, H=DT_MACRO, solver=cosim.Euler(h=DT_MICRO), coupling=coupling)


def _general(p):
    th_sbc, th_mod = p["thresholdMbc2sbcCoupling"], p["thresholdMbcNoInputOpt"]
    # genser2020 §12.3 runs every combination, also th_mod > th_SBC; with th_SBC checked first (§8.2) the
    # modified phase then never occurs, which th_mod = th_SBC reproduces (PreStep refuses th_mod > th_SBC, eq. 3.13)
    return dict(timeLearning=p["timeLearning"], timeSwitchphase=p["timeSwitchphase"],
                thresholdMbc2sbcCoupling=th_sbc, thresholdMbcNoInputOpt=min(th_mod, th_sbc),
                useErrDiffEqu=p["useErrDiffEqu"])


def build_rls(p):
    """§12.3 RLS: discrete pre-step with RLS-identified IJs (λ, M = n_b, N = n_a; P(0) = 1e4 I)."""
    rls = cosim.sysid.RLS(n_y=1, n_u=1, n_a=p["N"], n_b=p["M"], lam=p["lambda"], P0=1e4)   # template per subsystem
    coupling = cosim.PreStep(variant="discrete", jacobians=rls, **_general(p))
    return dict(system=_nonlinear_dmo(), t_end=T_END, H=DT_MACRO, solver=cosim.Euler(h=DT_MICRO), coupling=coupling)


def build_moesp(p):
    """§12.3 MOESP: discrete pre-step with MOESP-identified IJs (model order, window size)."""
    moesp = cosim.sysid.MOESPWindow(n_u=1, n_y=1, window=p["windowSize"], order=p["modelOrder"])
    coupling = cosim.PreStep(variant="discrete", jacobians=moesp, **_general(p))
    return dict(system=_nonlinear_dmo(), t_end=T_END, H=DT_MACRO, solver=cosim.Euler(h=DT_MICRO), coupling=coupling)


_APPROX = {"zoh": cosim.ZOH(), "lagrange1": cosim.Lagrange(k=1), "lagrange2": cosim.Lagrange(k=2)}


def build_zoh(p):
    """Today's reduced study: signal-based coupling of the nonlinear DMO + F_ex, Euler δt = 1e-5."""
    return dict(system=_nonlinear_dmo(impulse_amplitude=p["impulse_amplitude"]), t_end=T_END, H=p["H"],
                approximation=_APPROX[p["approximation"]], solver=cosim.Euler(h=DT_MICRO))


STUDIES = {  # name: (factors, build, needs PreStep, optimum rule, thesis table)
    "12.2": (FACTORS_12_2, build_12_2, True, dict(tol=1.1), "Tables 3.4/3.5"),
    "rls": (FACTORS_RLS, build_rls, True, dict(tol=1.1), "Tables 3.10/3.12"),
    "moesp": (FACTORS_MOESP, build_moesp, True, dict(top=50), "Tables 3.11/3.13"),
    "zoh": (FACTORS_ZOH, build_zoh, False, dict(tol=1.1), "(no thesis table: signal-based couplings)"),
}


def supported(name, design):
    """Rows of ``design`` that today's cosim.PreStep can run (all of them: RLS orders M, N in {1, 2} through the
    Gilbert realization, MOESP through recursive windows), and why others could not (none left)."""
    return design, ""


def make_study(name, runs=None):
    """The Study of ``name`` (the rows today's pre-step supports; the first ``runs`` of them if given)."""
    factors, build, _, _, _ = STUDIES[name]
    design, why = supported(name, doe.full_factorial(factors))
    if len(design) < len(doe.full_factorial(factors)):
        print(f"genser_doe: {len(doe.full_factorial(factors)) - len(design)} of the thesis's "
              f"{len(doe.full_factorial(factors))} runs of study {name!r} left out: {why}", file=sys.stderr)
    if len(design) == 0:
        raise SystemExit(f"genser_doe: study {name!r} cannot run: {why}")
    if runs is not None:
        design = design.iloc[:runs]
    return doe.Study(build, design=design, responses=["eps_mono_sat", "stable"], reference=True,
                     units={f: UNITS[f] for f in factors if f in UNITS})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", nargs="?", default="zoh", choices=sorted(STUDIES))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=None, help="only the first N runs of the design")
    ap.add_argument("--out", default="out/genser_doe")
    ap.add_argument("--no-progress", action="store_true")
    args = ap.parse_args(argv)
    factors, build, needs_prestep, rule, tables = STUDIES[args.study]
    if needs_prestep and not have_prestep():
        print(f"genser_doe: study {args.study!r} needs the pre-step coupling cosim.PreStep (genser2020 §2-§8), "
              "which this installation does not have yet (it comes with the pre-step issue). Running the reduced "
              "signal-based study 'zoh' instead.", file=sys.stderr)
        args.study = "zoh"
        factors, build, needs_prestep, rule, tables = STUDIES["zoh"]
    os.makedirs(args.out, exist_ok=True)
    study = make_study(args.study, args.runs)
    print(f"genser2020 §12 study {args.study!r}: {len(study)} runs, factors {study.factors} ({tables})")
    df = study.run(backend="threads", workers=args.workers, progress=not args.no_progress,
                   checkpoint=os.path.join(args.out, f"{args.study}.sqlite"))
    df.to_csv(os.path.join(args.out, f"{args.study}.csv"))
    print("status:", {k: int(v) for k, v in df["status"].value_counts().items()}, f"; mean wall per run {df['wall'].mean() * 1e3:.2f} ms")
    varied = [f for f in study.factors if df[f].nunique() > 1]      # a --runs subset may fix some factors
    tab = doe.anova(df, "eps_mono_sat", varied)
    print("\nANOVA of eps_mono (saturated at 1): MS and normalised % (genser2020 Table 3.10 style)")
    print(tab[["SS", "DoF", "MS", "F", "percent"]].to_string(float_format=lambda v: f"{v:.4g}"))
    tab.to_csv(os.path.join(args.out, f"{args.study}_anova.csv"))
    opt = doe.optimum(df, "eps_mono_sat", study.factors, **rule)
    print(f"\nascending-sorting optimum over {opt.attrs['n']} nearly optimal runs ({rule}):")
    for f, v in opt.items():
        print(f"  {f:28s} {v:.4g}" if isinstance(v, float) else f"  {f:28s} {v}")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for fname, axes in (("main_effects", doe.plots.main_effects(df, "eps_mono_sat", study.factors)),
                        ("heatmap", doe.plots.interaction_heatmap(tab)),
                        ("sorted", doe.plots.sorted_runs(df, "eps_mono_sat", study.factors)),
                        ("histograms", doe.plots.optimum_histograms(df, "eps_mono_sat", study.factors, **rule))):
        fig = np.ravel(axes)[0].figure
        fig.savefig(os.path.join(args.out, f"{args.study}_{fname}.png"), dpi=90)
        plt.close(fig)
    print(f"\nwrote {args.out}/{args.study}.csv, _anova.csv and figures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
