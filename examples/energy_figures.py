"""Conservation: balance correction and ECCO
=========================================

Figures of the conservation features (moshagen §4.2, Sadjina's ECCO), written as PNG files:

1. energy_convergence.png: convergence on Moshagen's spring-mass problem M (T = 10) with and without balance
   correction, P = 0 (ZOH) and P = 1 (Hermite): orders 1, 2 (without) and 2, 3 (with).
2. energy_drift.png: energy of the quarter truck's two masses and springs relative to the monolithic solution
   (drop test on a flat road) with ZOH at fixed H, with balance correction and with ECCO.

Usage: .venv/bin/python examples/energy_figures.py [outdir] [--quick]
"""
import pathlib
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import cosim  # noqa: E402
from cosim import models  # noqa: E402

BOND = [("chassis.v", "chassis.F", "wheel.F", "wheel.v")]


def convergence(ax, quick):
    Hs = [0.2 * 2.0**-N for N in range(4 if quick else 7)]
    exact = np.array([np.cos(10.0), -np.sin(10.0)])
    for label, approx in (("P = 0 (ZOH)", cosim.ZOH()), ("P = 1 (Hermite)", cosim.Hermite(1))):
        for bc in (None, cosim.BalanceCorrection()):
            errs = [np.max(np.abs(cosim.simulate(models.mutual_2x2(), 10.0, H, approximation=approx,
                                                 solver=cosim.Exact(), coupling=bc).X[-1] - exact)) for H in Hs]
            ax.loglog(Hs, errs, "o-" if bc else "s--", label=label + (" + BC" if bc else ""))
    ax.set_xlabel("macro step H [-] (dimensionless time)")
    ax.set_ylabel("max |x(T) − x_exact(T)| at T = 10 [-]")
    ax.set_title("spring-mass problem M (moshagen, m = c = 1, dimensionless):\nbalance correction (BC) adds one order")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper left", fontsize=9)


def energy(system, res):
    p = system.params
    d, vc = res["chassis.d"], res["chassis.vc"]
    dt, vw = res["wheel.dt"], res["wheel.vw"]
    return 0.5 * p["m_c"] * vc**2 + 0.5 * p["k_c"] * d**2 + 0.5 * p["m_w"] * vw**2 + 0.5 * p["k_w"] * dt**2


def drift(ax, quick):
    T = 1.0 if quick else 4.0
    truck = models.quarter_truck(road_amplitude=0.0)
    x0 = {"chassis": [0.1, 0.0]}
    runs = {"ZOH, fixed H = 2e-3": cosim.simulate(truck, T, 2e-3, solver=cosim.Exact(), x0=x0),
            "ZOH + BC, H = 2e-3": cosim.simulate(truck, T, 2e-3, solver=cosim.Exact(), x0=x0,
                                                  coupling=cosim.BalanceCorrection()),
            "ZOH + ECCO (rtol 1e-3)": cosim.simulate(truck, T, 1e-4, solver=cosim.Exact(), x0=x0,
                                                     step_control=cosim.ECCO(BOND, rtol=1e-3, atol=1e-3,
                                                                             H_min=1e-5, H_max=1e-2))}
    for label, res in runs.items():
        ref = cosim.simulate_monolithic(truck, T, t_eval=res.t, x0=x0)
        ax.plot(res.t, energy(truck, res) - energy(truck, ref),
                label=f"{label} ({res.stats['macro_steps']} steps)")
    ax.set_xlabel(f"t [{res.unit('t')}]")
    ax.set_ylabel("energy error E − E_mono [J]")
    ax.set_title("quarter truck drop test (chassis released at d = 0.1 m):\nenergy of masses and springs against "
                 "the monolithic solution")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.15), fontsize=9, frameon=False)


def main(outdir=".", quick=False):
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for name, fn in (("energy_convergence.png", convergence), ("energy_drift.png", drift)):
        fig, ax = plt.subplots(figsize=(7, 5.4), layout="constrained")
        fn(ax, quick)
        fig.savefig(out / name, dpi=100)
        plt.close(fig)
        files.append(out / name)
    return files


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    print(main(args[0] if args else ".", "--quick" in sys.argv))
