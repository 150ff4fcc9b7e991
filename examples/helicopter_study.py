"""Genser (2020): the helicopter study
===================================

The helicopter study of genser2020 §15 (Fig. 4.11): σ_mono,global and ε_mono,global over the communication step ΔT.

    .venv/bin/python examples/helicopter_study.py [--t-end 150] [--dts 0.01,0.02,...] [--out helicopter_study]

Westland Lynx (App. A) + the *reconstructed* controller (cosim.models.helicopter_controller: an H∞ loop-shaping
design, not the thesis's unpublished S/KS controller) + v1-like pilot commands (cosim.models.pilot_v1), 150 s, both
subsystems exact (matrix exponential), Jacobi scheduling. Methods:

* ``zoh`` and ``lagrange1`` (Lagrange k = 1 = FOH), signal-based;
* ``prestep_exact``: continuous pre-step with the exact IJs of S1 and S2 (pinv of C, eq. 2.12-2.14), 12 s learning
  with ZOH and 1 s switch as in §15.1 (the pilot's IJs are zero: its commands are held over a step);
* ``prestep_rls``: discrete pre-step with RLS (n_a = n_b = 1, λ = 0.996, P0 = 1e4, th_SBC = 3.54, th_mod = 0.21,
  useErrDiffEqu; Table 3.12), timeLearning = 12 s, timeSwitchphase = 1 s (§10.4);
* ``prestep_rls_loaded``: the same with timeLearning = 2 s and initial RLS parameters loaded from a ΔT = 0.1 s
  ``prestep_rls`` run at t = 8 s and resampled to ΔT with eq. 4.13-4.14 (:func:`loaded_parameters`).
  cosim.PreStep takes them as ``jacobians={name: RLS}`` ("their current parameters are the initial ones").

The pre-step needs every unit to have inputs, so the system is ``models.helicopter(pilot_input=True)`` (the pilot gets
one unused input) for every method. σ_mono,global (eq. 4.11) is :func:`cosim.metrics.sigma_mono`, ε_mono,global
(eq. 3.9-3.10, time-mean) :func:`cosim.metrics.eps_mono`; diverged runs count as σ = 1 (saturated, as the thesis
plots it). Writes ``<out>.csv`` and ``<out>.png`` (σ and ε over ΔT) and ``<out>_timeseries.png`` (ΔT = 0.08 s, §15.3)
unless ``--no-plots``.
The thesis's claims to compare with (orderings, not values: the controller differs): ZOH unstable for ΔT > 0.14 s;
pre-step RLS the only stable method in [0.16, 0.2] s; loaded parameters + 2 s learning stable up to 0.3 s.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cosim  # noqa: E402
from cosim import models  # noqa: E402
from cosim import metrics  # noqa: E402

DTS = (0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3)
SOLVER = {"S1": cosim.Exact(), "S2": cosim.Exact(), "pilot": cosim.Euler()}
#: Table 3.12 settings of the identified pre-step (thesis names) and the helicopter's time parameters (§10.4)
RLS_LAMBDA, RLS_P0 = 0.996, 1e4
PRESTEP_RLS = dict(thresholdMbc2sbcCoupling=3.54, thresholdMbcNoInputOpt=0.21, useErrDiffEqu=True,
                   timeSwitchphase=1.0)
LOAD_DT, LOAD_TIME = 0.1, 8.0   # loaded parameters: from a ΔT = 0.1 s run at t = 8 s (§10.4, §15.4)


def pilot_ijs():
    """Zero IJs of the state-less pilot (4 outputs, 1 unused input): its commands are held over a step."""
    return np.zeros((4, 4)), np.zeros((4, 1)), np.zeros((4, 1))


def prestep(method, loaded=None, dt=None):
    """The pre-step coupling of ``method`` ("prestep_exact", "prestep_rls", "prestep_rls_loaded"); the loaded variant
    needs ``loaded`` (from :func:`loaded_parameters`) and the step ``dt`` it is resampled to."""
    if method == "prestep_exact":
        return cosim.PreStep("continuous", {"pilot": pilot_ijs()}, timeLearning=12.0, timeSwitchphase=1.0)
    if method == "prestep_rls":
        return cosim.PreStep("discrete", cosim.sysid.RLS(1, 1, lam=RLS_LAMBDA, P0=RLS_P0), timeLearning=12.0,
                             **PRESTEP_RLS)
    if method == "prestep_rls_loaded":
        if loaded is None or dt is None:
            raise ValueError("loaded: the loaded variant needs the parameters of loaded_parameters() and dt")
        ids = {}
        for name, (a, b) in loaded["params"].items():
            at, bt = cosim.sysid.resample(a, b, dt / loaded["dt"])                 # eq. 4.13-4.14
            r = cosim.sysid.RLS(b.shape[0], b.shape[1], lam=RLS_LAMBDA, P0=RLS_P0)
            r.set_parameters(np.reshape(at, (-1, 1)), np.reshape(bt, (b.shape[0], b.shape[1], 1)))
            ids[name] = r
        return cosim.PreStep("discrete", ids, timeLearning=2.0, **PRESTEP_RLS)
    raise ValueError(f"method: unknown pre-step method {method!r}")


def loaded_parameters(system, dt=LOAD_DT, t_load=LOAD_TIME):
    """The RLS parameters (a_i, b_ij) per subsystem of a ``prestep_rls`` run at ΔT = ``dt`` at t = ``t_load``
    (genser §15.4: ΔT = 0.1 s, t ≈ 8 s, where the parameters are nearly steady). Returns dict(dt, t, params=
    {name: (a (n_y,), b (n_y, n_u))})."""
    res = cosim.simulate(system, t_load + 2 * dt, dt, solver=SOLVER, coupling=prestep("prestep_rls"),
                         divergence_growth=math.inf)
    log = res.coupling_log
    k = int(np.argmin(np.abs(log["t"] - t_load)))
    params = {name: (np.array(p["a"][k]), np.array(p["b"][k])) for name, p in log["params"].items()}
    return dict(dt=dt, t=float(log["t"][k]), params=params)


METHODS = {
    "zoh": lambda dt, ctx: dict(approximation=cosim.ZOH()),
    "lagrange1": lambda dt, ctx: dict(approximation=cosim.Lagrange(1)),
    "prestep_exact": lambda dt, ctx: dict(coupling=prestep("prestep_exact")),
    "prestep_rls": lambda dt, ctx: dict(coupling=prestep("prestep_rls")),
    "prestep_rls_loaded": lambda dt, ctx: dict(coupling=prestep("prestep_rls_loaded", ctx["loaded"], dt)),
}


def run_one(system, method, dt, t_end, sigma_limit=0.5, ctx=None):
    """One co-simulation: dict(method, dt, stable, sigma, eps, wall, note, result, reference).

    Stability is judged as the thesis reads Fig. 4.11, by σ_mono,global: a run is stable if it stays below the
    divergence bound and σ_mono,global < ``sigma_limit``. (The engine's relative-growth check is off here: with the
    pilot commands starting at t = 1 s, the first 20 % of a short run has almost no amplitude to compare with.)"""
    row = dict(method=method, dt=dt, stable=None, sigma=math.nan, eps=math.nan, wall=math.nan, note="")
    kw = METHODS[method](dt, ctx or {})
    t0 = time.perf_counter()
    try:
        res = cosim.simulate(system, t_end, dt, solver=SOLVER, last_step="shorten", divergence_growth=math.inf,
                             **kw)
        stable = True
    except cosim.DivergenceError as e:
        res, stable = e.result, False
    row["wall"] = time.perf_counter() - t0
    row["stable"] = stable
    if not stable or res is None or len(res.t) < 3:
        row.update(sigma=1.0, eps=1.0, note="diverged")
        return row
    ref = cosim.simulate_monolithic(system, t_end, t_eval=res.t)
    sigma = metrics.sigma_mono(res, ref, saturate=False)
    row.update(sigma=min(1.0, sigma), eps=metrics.eps_mono(res, ref), result=res, reference=ref,
               stable=bool(sigma < sigma_limit))
    if not row["stable"]:
        row["note"] = f"sigma_mono,global = {sigma:.3g} >= {sigma_limit}"
    return row


def sweep(dts=DTS, methods=("zoh", "lagrange1", "prestep_exact", "prestep_rls", "prestep_rls_loaded"), t_end=150.0,
          controller=None, pilot="v1", sigma_limit=0.5):
    """The ΔT sweep of §15.2: a list of row dicts (see :func:`run_one`), one per (method, ΔT)."""
    system = models.helicopter(controller, pilot, pilot_input=True)
    for method in methods:
        if method not in METHODS:
            raise ValueError(f"methods: unknown method {method!r}; known: {sorted(METHODS)}")
    ctx = dict(loaded=loaded_parameters(system)) if "prestep_rls_loaded" in methods else {}
    rows = []
    for method in methods:
        for dt in dts:
            rows.append(run_one(system, method, float(dt), t_end, sigma_limit, ctx))
    return rows


def max_stable_dt(rows, method, sigma_limit=0.5):
    """Largest ΔT of ``method`` up to which every run is stable with σ_mono,global below ``sigma_limit``."""
    best = None
    for r in sorted((r for r in rows if r["method"] == method and r["stable"] is not None), key=lambda r: r["dt"]):
        if not r["stable"] or not r["sigma"] < sigma_limit:  # noqa: SIM102
            break
        best = r["dt"]
    return best


def print_table(rows):
    print(f"{'method':20s} {'dT [s]':>7s} {'stable':>6s} {'sigma':>9s} {'eps':>9s} {'wall [s]':>8s}  note")
    for r in rows:
        st = "-" if r["stable"] is None else ("yes" if r["stable"] else "no")
        print(f"{r['method']:20s} {r['dt']:7.3f} {st:>6s} {r['sigma']:9.4g} {r['eps']:9.4g} {r['wall']:8.3f}  "
              f"{r['note']}")


def plots(rows, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for method in dict.fromkeys(r["method"] for r in rows):
        rr = [r for r in rows if r["method"] == method and r["stable"] is not None]
        if not rr:
            continue
        dts = [r["dt"] for r in rr]
        axes[0].semilogy(dts, [max(r["sigma"], 1e-8) for r in rr], "o-", ms=3, label=method)
        axes[1].semilogy(dts, [max(r["eps"], 1e-8) for r in rr], "o-", ms=3, label=method)
    for ax, lab in zip(axes, (r"stability measure $\sigma_{mono,global}$ [-] (saturated at 1)",
                              r"relative error $\varepsilon_{mono,global}$ [-] (saturated at 1)")):
        ax.set_xlabel(r"communication step $\Delta T$ [s]")
        ax.set_ylabel(lab, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.suptitle("Helicopter + reconstructed controller, pilot v1 (genser2020 Fig. 4.11 analogue)", fontsize=9)
    fig.savefig(out + ".png", dpi=120)
    plt.close(fig)
    at = [r for r in rows if abs(r["dt"] - 0.08) < 1e-9 and r.get("result") is not None]
    if at:
        fig, axes = plt.subplots(2, 1, figsize=(10, 5.2), sharex=True, layout="constrained")
        ref = at[0]["reference"]
        axes[0].plot(ref.t, ref["S1.Hdot"], "k", lw=1.5, label="monolithic")
        axes[1].plot(ref.t, ref["S2.collective"], "k", lw=1.5, label="monolithic")
        for r in at:
            axes[0].plot(r["result"].t, r["result"]["S1.Hdot"], lw=0.8, label=r["method"])
            axes[1].plot(r["result"].t, r["result"]["S2.collective"], lw=0.8, label=r["method"])
        axes[0].set_ylabel(f"heave velocity Ḣ [{ref.unit('S1.Hdot')}]")
        axes[1].set_ylabel(f"main rotor collective [{ref.unit('S2.collective')}]")
        axes[1].set_xlabel(f"t [{ref.unit('t')}]")
        axes[0].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
        fig.suptitle(r"$\Delta T$ = 0.08 s (genser2020 §15.3 analogue)", fontsize=9)
        fig.savefig(out + "_timeseries.png", dpi=120)
        plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--t-end", type=float, default=150.0)
    p.add_argument("--dts", type=str, default=",".join(map(str, DTS)))
    p.add_argument("--methods", type=str, default="zoh,lagrange1,prestep_exact,prestep_rls,prestep_rls_loaded")
    p.add_argument("--out", type=str, default="helicopter_study")
    p.add_argument("--no-plots", action="store_true")
    a = p.parse_args(argv)
    dts = [float(v) for v in a.dts.split(",")]
    rows = sweep(dts, a.methods.split(","), a.t_end)
    print_table(rows)
    for m in dict.fromkeys(r["method"] for r in rows):
        if any(r["stable"] is not None for r in rows if r["method"] == m):
            print(f"max stable dT ({m}, sigma < 0.5): {max_stable_dt(rows, m)}")
    with open(a.out + ".csv", "w") as f:
        f.write("method,dt,stable,sigma_mono_global,eps_mono_global,wall_s,note\n")
        for r in rows:
            f.write(f"{r['method']},{r['dt']},{r['stable']},{r['sigma']},{r['eps']},{r['wall']},{r['note']}\n")
    if not a.no_plots:
        plots(rows, a.out)
    return rows


if __name__ == "__main__":
    main()
