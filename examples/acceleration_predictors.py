"""Kraft's acc and accRel predictors: stability maps and convergence (App. C)
===========================================================================

Kraft (kraft2021 App. C) compares three explicit predictors on the symmetric two-mass oscillator of Fig. C.1
(m = 1 kg, c = 1 N/m in all three spring/dampers): *classic* (the coupling variables extrapolated,
:class:`cosim.Lagrange`), *acc* (the accelerations of the coupling bodies extrapolated and integrated into their
velocity and position polynomials, :class:`cosim.IntegratedAcceleration`) and *accRel* (the acc value at T_{N+1}
relaxed against the classic extrapolant, :class:`cosim.RelaxedAcceleration`), each with and without the update
of the accelerations at T_{N+1}. Written:

1. ``acceleration_stability.png``: the spectral radius ρ of one force/force Jacobi macro step over the plane of
   subsystem 1's eigenvalue λH (H = 1 s, c = (Re λ)² + (Im λ)², d = −2 Re λ; the style of Figs. C.7-C.12), for acc κ_a = 0,
   accRel κ_a = κ_λ = 0 (ω = 1/2) and κ_a = κ_λ = 1 (ω = 1/6), with the update (top) and without (bottom); the
   white line is ρ = 1 and the dashed one the classic κ = 0 limit. The update enlarges every region;
2. ``acceleration_stability_gauss_seidel.png``: the same under Gauss-Seidel (S1 first; the style of Figs.
   C.13-C.18; the rule is our reading, see cosim.IntegratedAcceleration): every region is larger than its
   Jacobi one;
3. ``acceleration_convergence.png``: the global error at t = 2 s over H on the damped model (d = 0.5 Ns/m), with
   the slopes of Fig. C.2 (T11): accRel reaches the thesis's orders, acc converges one order faster than the
   thesis reports; the thesis's acc order is that of the end-value reading (the acc value at T_{N+1} as the end
   node of a degree-κ_a polynomial, RelaxedAcceleration(κ_a, κ_a, ω = 0)), drawn dashed.

It prints the stable share of each map and the fitted slopes. Usage:
``python examples/acceleration_predictors.py [outdir] [--quick]`` (``--quick``: coarse maps, a few seconds).
"""
import pathlib
import sys

import matplotlib.pyplot as plt
import numpy as np

import cosim
from cosim.models import two_mass_oscillator


def symmetric(c, d):
    return two_mass_oscillator(ck=c, dk=d, coupling="force/force", m1=1, m2=1, c1=c, c2=c, d1=d, d2=d)


PREDICTORS = [("acc, κ_a = 0", lambda u: cosim.IntegratedAcceleration(0, update=u)),
              ("accRel, κ_a = κ_λ = 0, ω = 1/2", lambda u: cosim.RelaxedAcceleration(0, 0, 0.5, update=u)),
              ("accRel, κ_a = κ_λ = 1, ω = 1/6", lambda u: cosim.RelaxedAcceleration(1, 1, 1 / 6, update=u))]


def rho_map(approx, re, im, scheme):
    """ρ over the plane of λH (H = 1 s): one symmetric system per point."""
    return np.array([[cosim.analysis.spectral_radius(symmetric(x**2 + y**2, -2 * x), 1.0, scheme, approx)
                      for x in re] for y in im])


def stability_figure(out, n, scheme="jacobi"):
    re = np.linspace(-0.7, -0.7 / n, n)
    im = np.linspace(1.6 / n, 1.6, n)
    classic = rho_map(cosim.ZOH(), re, im, scheme)
    fig, axes = plt.subplots(2, 3, figsize=(12, 7.4), sharex=True, sharey=True, layout="constrained")
    for col, (name, make) in enumerate(PREDICTORS):
        for row, update in enumerate((True, False)):
            ax = axes[row, col]
            rho = rho_map(make(update), re, im, scheme)
            img = ax.pcolormesh(re, im, np.clip(rho, 0.8, 1.2), cmap="RdBu_r", vmin=0.8, vmax=1.2, shading="nearest")
            ax.contour(re, im, rho, [1.0], colors="w", linewidths=1.5)
            ax.contour(re, im, classic, [1.0], colors="k", linewidths=1.0, linestyles="--")
            share = np.mean(rho <= 1)
            ax.set_title(f"{name}\n{'with' if update else 'without'} update: stable share {share:.2f}", fontsize=9)
            print(f"{scheme}, {name}, update={update}: stable share {share:.3f} "
                  f"(classic kappa = 0: {np.mean(classic <= 1):.3f})")
    for ax in axes[1]:
        ax.set_xlabel("Re(λH) [-]")
    for ax in axes[:, 0]:
        ax.set_ylabel("Im(λH) [-]")
    fig.colorbar(img, ax=axes, label="spectral radius ρ(Ω) [-] (clipped to 0.8..1.2)")
    label = "Jacobi" if scheme == "jacobi" else "Gauss-Seidel"
    fig.suptitle(f"force/force {label}, symmetric two-mass oscillator (kraft2021 App. C); dashed: classic κ = 0, "
                 "ρ = 1")
    path = pathlib.Path(out) / ("acceleration_stability.png" if scheme == "jacobi" else
                                "acceleration_stability_gauss_seidel.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def convergence_figure(out, quick):
    system = symmetric(1.0, 0.5)
    Hs = 0.1 * 2.0 ** -np.arange(4 if quick else 6)
    runs = [("classic κ = 0 (Fig. C.2: 1)", cosim.ZOH()), ("acc κ_a = 0 (1)", cosim.IntegratedAcceleration(0)),
            ("acc κ_a = 1 (2)", cosim.IntegratedAcceleration(1)),
            ("accRel 0, 0, ω = 1/2 (2)", cosim.RelaxedAcceleration(0, 0, 0.5)),
            ("accRel 0, 1, ω = 1/6 (2)", cosim.RelaxedAcceleration(0, 1, 1 / 6)),
            ("accRel 1, 1, ω = 1/6 (3)", cosim.RelaxedAcceleration(1, 1, 1 / 6)),
            ("acc κ_a = 0, end-value reading (1)", cosim.RelaxedAcceleration(0, 0, 0.0)),
            ("acc κ_a = 1, end-value reading (2)", cosim.RelaxedAcceleration(1, 1, 0.0))]
    fig, ax = plt.subplots(figsize=(6.4, 4.6), layout="constrained")
    for (name, approx), marker in zip(runs, "osd^vx<>"):
        err = []
        for H in Hs:
            res = cosim.simulate(system, 2.0, H, approximation=approx, solver=cosim.Exact(), startup="kraft")
            err.append(np.max(np.abs(res.X[-1] - cosim.simulate_monolithic(system, 2.0, t_eval=res.t).X[-1])))
        slope = np.polyfit(np.log(Hs), np.log(err), 1)[0]
        ax.loglog(Hs, err, marker=marker, label=f"{name}: slope {slope:.2f}", ls="--" if "end-value" in name else "-")
        print(f"{name}: global slope {slope:.2f}")
    ax.set_xlabel("macro step H [s]")
    ax.set_ylabel("global error max |z(2 s) − z_ref| [m, m/s]")
    ax.set_title("convergence, force/force Jacobi, d = 0.5 Ns/m\n(in brackets: the thesis's global order)", fontsize=9)
    ax.legend(fontsize=7)
    path = pathlib.Path(out) / "acceleration_convergence.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


def main(outdir=".", quick=False):
    for scheme in ("jacobi", "gauss-seidel"):
        stability_figure(outdir, 10 if quick else 40, scheme)
    convergence_figure(outdir, quick)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else ".", quick="--quick" in sys.argv)
