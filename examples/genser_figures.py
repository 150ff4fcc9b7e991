"""Genser (2020): stability regions and the pre-step method
========================================================

Figures of genser2020 (pre-step stabilization) with cosim: writes PNG files.

1. stability regions of ZOH, FOH, NEPCE and the pre-step method on the (log10(ck/dk), ΔT) plane (Fig. 3.52-3.56
   style; family ck dk = 1e8),
2. the ΔT sweep of AT-21 at ck = 2e5, dk = 200 (Fig. 3.62 style): ε_mono,global of ZOH, NEPCE and pre-step,
3. the coupling force at ΔT = 2 ms (Fig. 3.65 style, AT-28): pre-step against the monolithic solution,
4. the discrete pre-step with RLS on the nonlinear DMO with impulses (AT-29): phases and identified parameters.

Usage: python examples/genser_figures.py [--out DIR] [--small]   (--small: reduced grids, as the tests run it)
"""
import argparse
import math
import os
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cosim  # noqa: E402
from cosim.analysis import stability_region_area  # noqa: E402
from cosim.models import two_mass_oscillator  # noqa: E402

EULER = cosim.Euler(h=1e-5)


def eps_of(system, H, coupling, t_end=0.2):
    try:
        res = cosim.simulate(system, t_end=t_end, H=H, solver=EULER, coupling=coupling, update="simplified",
                             last_step="shorten", divergence_growth=math.inf)
    except cosim.DivergenceError:
        return 1.0
    ref = cosim.simulate_monolithic(system, t_end=t_end, t_eval=res.t)
    return cosim.metrics.eps_mono(res, ref)


def main(out, small=False):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    H = np.array([0.5e-3, 2e-3, 5e-3, 10e-3]) if small else None
    ratios = 10.0 ** np.arange(-2, 4.01, 1.0) if small else None
    fig, axes = plt.subplots(1, 4, figsize=(16, 4.4), sharey=True, layout="constrained")
    for i, (ax, (name, cp)) in enumerate(zip(axes, (("ZOH", None), ("FOH", cosim.FOH()), ("NEPCE", cosim.NEPCE()),
                                                    ("pre-step", cosim.PreStep())))):
        reg = stability_region_area(coupling=cp, H=H, ratios=ratios, label=name)
        reg.plot(ax, color=f"C{i}")
        ax.set_title(f"{name}: stable area A = {reg.area:.3g} ms·l_x")
        if i:
            ax.set_ylabel("")
    fig.suptitle("Stable region of the two-mass oscillator (ck·dk = 1e8 N²s/m², 20 % amplitude rule); "
                 "l_x = one decade of ck/dk")
    files.append(out / "genser_stability_regions.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    system = two_mass_oscillator(ck=2e5, dk=200)
    Hs = [1e-3, 3e-3, 6e-3] if small else [1e-3, 2e-3, 3e-3, 4e-3, 5e-3, 6e-3, 7e-3, 8e-3, 9e-3, 10e-3]
    fig, ax = plt.subplots(figsize=(6.5, 3.8), layout="constrained")
    for name, cp in (("ZOH", None), ("NEPCE", cosim.NEPCE()), ("pre-step", cosim.PreStep())):
        ax.plot(np.array(Hs) * 1e3, [eps_of(system, h, cp) for h in Hs], "o-", label=name)
    ax.set_xlabel("macro step ΔT [ms]")
    ax.set_ylabel("relative error ε_mono,global [-]\n(saturated at 1)")
    ax.set_title("two-mass oscillator, ck = 2e5 N/m, dk = 200 Ns/m")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    files.append(out / "genser_dT_sweep.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    res = cosim.simulate(system, t_end=0.06, H=2e-3, solver=EULER, coupling=cosim.PreStep(), output_interval=1e-4)
    ref = cosim.simulate_monolithic(system, t_end=0.06, H=1e-5)
    fig, ax = plt.subplots(figsize=(6.5, 3.5), layout="constrained")
    ax.plot(ref.t, ref["S2.F"], "k-", lw=1, label="monolithic")
    ax.plot(res.t, res["S2.F"], "C3-", lw=1, label="pre-step, ΔT = 2 ms")
    ax.set_xlim(0.01, 0.05)
    ax.set_xlabel(f"t [{res.unit('t')}]")
    ax.set_ylabel(f"coupling force F [{res.unit('S2.F')}]")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    files.append(out / "genser_phase.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)

    nl = two_mass_oscillator(nonlinear=True, external_force=True)
    cp = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.996, P0=1e4))
    t_end = 0.4 if small else 1.0
    res = cosim.simulate(nl, t_end=t_end, H=1e-3, solver=EULER, coupling=cp)
    log = res.coupling_log
    fig, axes = plt.subplots(3, 1, figsize=(7, 6.5), sharex=True, layout="constrained")
    axes[0].plot(res.t, res["S2.F"])
    axes[0].set_ylabel(f"coupling force F [{res.unit('S2.F')}]")
    code = {"SBC": 0, "MOD": 1, "MBC": 2}
    axes[1].step(log["t"], [code[p] for p in log["phase"]], where="post")
    axes[1].set_yticks([0, 1, 2], ["SBC", "MOD", "MBC"])
    axes[1].set_ylabel("pre-step phase")
    axes[1].set_title("phases: SBC signal-based coupling, MOD pre-step without input optimization, MBC full pre-step",
                      fontsize=9)
    axes[2].plot(log["t"], log["params"]["S2"]["a"][:, 0], label="a₁ of S2")
    axes[2].plot(log["t"], log["params"]["S1"]["a"][:, 0], label="a₁ of S1 (x1)")
    axes[2].set_ylabel("identified ARX\ncoefficient a₁ [-]")
    axes[2].set_xlabel(f"t [{res.unit('t')}]")
    axes[2].legend(loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    fig.suptitle("discrete pre-step with RLS, nonlinear two-mass oscillator with impulses, ΔT = 1 ms", fontsize=10)
    files.append(out / "genser_rls_phases.png")
    fig.savefig(files[-1], dpi=100)
    plt.close(fig)
    return files


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default="figures")
    p.add_argument("--small", action="store_true")
    a = p.parse_args()
    for f in main(a.out, a.small):
        print(f)
