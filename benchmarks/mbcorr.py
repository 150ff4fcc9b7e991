"""MBCorr (the reconstruction of spec mbcorr.md) against genser2020's figures on the dual-mass oscillator.

1. Stability-region areas on genser §13's plane (ck dk = 1e8, ΔT 0.5..10 ms, log10(ck/dk) -3..5 in quarter decades,
   T_end 0.2 s, Euler δt = 1e-5 s; ``cosim.analysis.stability_region_area``) of ZOH, NEPCE, MBCorr variants and the
   pre-step; the thesis: A_ZOH 7.5, A_NEPCE 10.5, A_MBCorr 19.5, A_pre 62 ms·l_x, nested ZOH ⊂ NEPCE ⊂ MBCorr ⊂ pre.
   The nesting is checked point by point on the stable maps (the counted connected regions).
2. ck = 2e5, dk = 200: stable up to which ΔT of {0.5, 1, 2, ..., 10} ms (thesis: accurate to 5 ms, unstable at
   6 ms), and ε_mono,global at 1, 2, 5, 6 ms (t_end 0.5 s, the spec's §3.3 set-up).

Run: .venv/bin/python benchmarks/mbcorr.py [--only areas,sweep] [--plot FILE.png]
"""
import argparse
import math

import numpy as np

import cosim
from cosim.analysis import stability_region_area
from cosim.models import two_mass_oscillator

EULER = cosim.Euler(h=1e-5)
GRID_MS = [0.5] + list(range(1, 11))


def variants():
    return [("MBCorr B1 p0", cosim.MBCorr(0)), ("MBCorr B2 p0", cosim.MBCorr(0, "discrete")),
            ("MBCorr B1 p1 end", cosim.MBCorr(1, shape="end")), ("MBCorr B1 p2 end", cosim.MBCorr(2, shape="end")),
            ("MBCorr B1 p2 const", cosim.MBCorr(2)), ("MBCorr B2 p2 end", cosim.MBCorr(2, "discrete", shape="end"))]


def areas(plot=None):
    print("== stability-region areas (ck dk = 1e8, ΔT 0.5..10 ms, log10(ck/dk) -3..5 step 0.25, T_end 0.2 s)")
    base = [("ZOH", None), ("NEPCE", cosim.NEPCE())]
    reg = {name: stability_region_area(coupling=c, label=name) for name, c in base + variants()
           + [("pre-step", cosim.PreStep())]}
    thesis = {"ZOH": 7.5, "NEPCE": 10.5, "pre-step": 62.0}
    for name, r in reg.items():
        t = thesis.get(name, 19.5 if name.startswith("MBCorr") else None)
        print(f"A_{name:20s} = {r.area:7.3f} ms*l_x   (thesis {t})   {r.wall_time:.2f} s")
    print("nesting of the counted regions (points of the left region outside the right one):")
    for a, b in [("ZOH", "NEPCE")] + [(x, y) for n, _ in variants() for x, y in (("NEPCE", n), (n, "pre-step"))]:
        out = int(np.sum(reg[a].region & ~reg[b].region))
        print(f"  {a:20s} ⊂ {b:20s}: {'holds' if out == 0 else f'fails at {out} points'}")
    if plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(8, 5))
        for q, name in enumerate(("ZOH", "NEPCE", "MBCorr B1 p2 end", "MBCorr B2 p0", "pre-step")):
            reg[name].plot(ax=ax, color=f"C{q}")
        ax.set_title("Stable regions on genser §13's plane (ck·dk = 1e8)")
        fig.savefig(plot, dpi=110, bbox_inches="tight")
        print(f"plot: {plot}")
    return reg


def run(system, H, coupling, t_end=0.5):
    try:
        res = cosim.simulate(system, t_end=t_end, H=H, solver=EULER, coupling=coupling, last_step="shorten",
                             divergence_growth=math.inf, update="simplified")
    except cosim.DivergenceError:
        return 1.0, False
    ref = cosim.simulate_monolithic(system, t_end=t_end, t_eval=res.t)
    return cosim.metrics.eps_mono(res, ref), cosim.metrics.is_stable(res)


def sweep():
    print("== ck = 2e5, dk = 200, t_end 0.5 s: first unstable ΔT on {0.5, 1, 2, ..., 10} ms; ε_mono at 1/2/5/6 ms")
    system = two_mass_oscillator(ck=2e5, dk=200)
    import warnings
    for name, c in [("ZOH", None), ("NEPCE", cosim.NEPCE())] + variants() + [("pre-step", cosim.PreStep())]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = {h: run(system, h * 1e-3, c) for h in GRID_MS}
        first = next((h for h in GRID_MS if not res[h][1]), None)
        eps = " / ".join(f"{res[h][0]:.3f}" for h in (1, 2, 5, 6))
        print(f"{name:20s} first unstable ΔT: {first} ms   ε_mono: {eps}")


def main():
    import warnings
    warnings.simplefilter("ignore", cosim.CouplingInstabilityWarning)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="areas,sweep")
    ap.add_argument("--plot", default=None)
    a = ap.parse_args()
    parts = set(a.only.split(","))
    if "sweep" in parts:
        sweep()
    if "areas" in parts:
        areas(a.plot)


if __name__ == "__main__":
    main()
