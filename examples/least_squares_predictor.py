"""Kraft's least-squares predictor: a larger stable macro step
=============================================================

Kraft (kraft2021 §2.4.1, §5.1) predicts the coupling variable at T_{N+1} from a least-squares polynomial of degree
κ through the last N_sp macro points instead of the polynomial through the last κ + 1 of them
(:class:`cosim.LeastSquares`). The fit smooths the history, which enlarges the stable macro step; the price is a
larger error constant, with the same convergence order. Written as ``least_squares_predictor.png``:

1. left: the stability limit (the first H with spectral radius ρ(Ω) > 1, busch2016 eq. 25) of the two-mass
   oscillator over N_sp, well damped (d_k = 1e3 Ns/m) and lightly damped (d_k = 10 Ns/m): the fit helps the first
   (2.5 -> 7.3 ms) and hurts the second (1.2 -> 0.5 ms), so it is no universal remedy;
2. right: the largest stable H on Kraft's nonlinear Table 5.1 chain (κ = 2, explicit Jacobi, CVODE), found by
   bisection on co-simulations, classic against N_sp = 4..8. The thesis reports about 5x (Fig. 5.4 right).

It prints the ratio of the stable steps (least squares / classic). Usage:
``python examples/least_squares_predictor.py [outdir] [--quick]`` (``--quick``: fewer bisection steps and N_sp
values; about a minute on one core).
"""
import pathlib
import sys

import matplotlib.pyplot as plt
import numpy as np

import cosim
from cosim.models import oscillator_chain, two_mass_oscillator


def first_unstable_H(system, approx, H):
    rho = cosim.stability.spectral_radius(system, H, approximation=approx)
    bad = np.nonzero(rho > 1.0 + 1e-9)[0]
    return H[bad[0]] if len(bad) else np.nan


def two_mass_limits(ax):
    """The stability limit from ρ(Ω) = 1 (the analysis, exact for these LTI subsystems)."""
    H = np.geomspace(1e-4, 3e-2, 600)
    ns = np.arange(3, 9)
    for (ck, dk), marker in (((1e5, 1e3), "o"), ((1e6, 10.0), "s")):
        system = two_mass_oscillator(ck=ck, dk=dk)
        lim = [first_unstable_H(system, cosim.Lagrange(2) if n == 3 else cosim.LeastSquares(2, n), H) for n in ns]
        ax.plot(ns, np.array(lim) * 1e3, marker=marker, label=f"c_k = {ck:.0e} N/m, d_k = {dk:g} Ns/m")
        print(f"two-mass c_k = {ck:.0e}, d_k = {dk:g}: first unstable H [ms] for N_sp = 3 (classic) .. 8: "
              + ", ".join(f"{h * 1e3:.3g}" for h in lim))
    ax.set_xlabel("least-squares points N_sp [-] (3 = classic)")
    ax.set_ylabel("stability limit H [ms]")
    ax.set_title("two-mass oscillator, κ = 2, Jacobi: ρ(Ω) = 1")
    ax.legend(fontsize=8, loc="upper left")


def diverges(system, approx, H, T=0.03):
    try:
        cosim.simulate(system, t_end=T, H=H, approximation=approx, solver=cosim.CVODE(rtol=1e-8, atol=1e-8),
                       output_interval=T / 10)
    except (cosim.DivergenceError, cosim.SolverError):
        return True
    return False


def critical_H(system, approx, lo, hi, steps, T=0.03):
    """Bisection between a stable lo and an unstable hi over the steps H = T/n that divide T (no shortened last
    step): returns the largest stable and the smallest unstable H found."""
    n_lo, n_hi = int(round(T / lo)), int(round(T / hi))     # n_lo > n_hi
    assert not diverges(system, approx, T / n_lo) and diverges(system, approx, T / n_hi)
    for _ in range(steps):
        if n_lo - n_hi <= 1:
            break
        mid = int(round(np.sqrt(n_lo * n_hi)))
        mid = min(max(mid, n_hi + 1), n_lo - 1)
        if diverges(system, approx, T / mid):
            n_hi = mid
        else:
            n_lo = mid
    return T / n_lo, T / n_hi


def chain_limits(ax, quick):
    system = oscillator_chain(preset="table5.1")
    steps = 3 if quick else 5
    classic = critical_H(system, cosim.Lagrange(2), 5e-6, 5e-5, steps)
    ns = (5, 8) if quick else (4, 5, 6, 7, 8)
    limits = [critical_H(system, cosim.LeastSquares(2, n), 1e-5, 4e-4, steps) for n in ns]
    ax.errorbar([3], [np.sqrt(np.prod(classic)) * 1e6], fmt="s", color="C0", capsize=4,
                yerr=[[(np.sqrt(np.prod(classic)) - classic[0]) * 1e6], [(classic[1] - np.sqrt(np.prod(classic))) * 1e6]],
                label="classic (N_sp = κ + 1 = 3)")
    mids = np.array([np.sqrt(lo * hi) for lo, hi in limits])
    ax.errorbar(ns, mids * 1e6, yerr=[(mids - [lo for lo, _ in limits]) * 1e6, ([hi for _, hi in limits] - mids) * 1e6],
                fmt="o", color="C3", capsize=4, label="least squares")
    ax.axhline(5e-5 * 1e6, color="C3", ls=":", lw=0.8, label="thesis: least squares, N_sp = 8 (5e-5 s)")
    ax.axhline(1e-5 * 1e6, color="C0", ls=":", lw=0.8, label="thesis: classic stable (1e-5 s)")
    ax.set_xlabel("least-squares points N_sp [-]")
    ax.set_ylabel("largest stable macro step H [µs]")
    ax.set_title("Table 5.1 chain (nonlinear), κ = 2, t = 0.03 s")
    ax.set_ylim(0, 60)
    ax.legend(fontsize=8, loc="lower right")
    for n, (lo, hi) in zip(ns, limits):
        print(f"N_sp = {n}: stable H in [{lo:.3g}, {hi:.3g}] s; ratio to classic "
              f"{lo / classic[1]:.2f}..{hi / classic[0]:.2f} (thesis: about 5 for N_sp = 8)")
    print(f"classic kappa = 2: stable H in [{classic[0]:.3g}, {classic[1]:.3g}] s")


def main(outdir=".", quick=False):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    two_mass_limits(a)
    chain_limits(b, quick)
    out = pathlib.Path(outdir) / "least_squares_predictor.png"
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(args[0] if args else ".", quick="--quick" in sys.argv)
