"""Busch (2016): stability maps and local error (Figs. 9-15)
=========================================================

Reproduce busch2016 Figs. 9-15 as PNG files (stability of EXTRIPOL-C0/C1 versus Lagrange; local error).

    python examples/busch_figures.py                # full size (30^3 grid per map), writes out/busch_fig09.png ...
    python examples/busch_figures.py --reduced      # 6^3 grids, few step sizes (what the test suite runs)

Two-mass oscillator with Busch's parameters (m1 = m2 = 10, c1 = 1e6, c2 = 1e7, d1 = 1, d2 = 2); ck, dk and H are
swept on log grids (the paper does not give its grid). Subsystems are integrated exactly; the output update is
busch2016 eq. 19 (update="simplified"). Each stability figure has rows k = 0..3 and one column per method; a panel
shows the 3-D stable region as a 2-D map: over (ck, dk), the largest macro step H up to which every grid H is stable
(cosim.plot.stable_limit_map; the paper draws the stable and unstable points as 3-D clouds). ``busch_slice_fd_gs_k1.png`` and ``busch_slices_fd_gs.png`` show ρ itself over
(ck, H) at dk ≈ 1e3 Ns/m, on a colour scale diverging at ρ = 1 (cosim.plot.RhoNorm).
"""
import argparse
import os
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cosim import analysis as an  # noqa: E402
from cosim import plot as cplot  # noqa: E402
from cosim.approximations import ExtrapolatedInterpolation, Lagrange  # noqa: E402
from cosim.models.two_mass import two_mass_oscillator  # noqa: E402

FD, DD = "force/displacement", "displacement/displacement"
METHODS = {"EXTRIPOL-C1": lambda k: ExtrapolatedInterpolation(k, 1),
           "EXTRIPOL-C0": lambda k: ExtrapolatedInterpolation(k, 0),
           "Lagrange": Lagrange}


def stability_figure(path, title, panels, grid, threads):
    """panels: list of (column label, coupling, scheme, method); one row per degree k = 0..3. Each panel is the
    stable region of the 3-D map over (ck, dk, H) drawn as the largest stable macro step H over (ck, dk)
    (cosim.plot.stable_limit_map), with one colour scale for the whole figure."""
    from matplotlib.colors import LogNorm
    ck, dk, H = grid
    fig, axes = plt.subplots(4, len(panels), figsize=(4.3 * len(panels) + 1.6, 13), sharex=True, sharey=True,
                             squeeze=False, layout="constrained")
    norm = LogNorm(H.min(), H.max())
    counts = {}
    for col, (label, coupling, scheme, method) in enumerate(panels):
        for k in range(4):
            m = an.two_mass_stability_map(ck, dk, H, coupling, scheme, METHODS[method](k), update="simplified",
                                          threads=threads)
            counts[label, k] = m.count_unstable()
            _, above = cplot.stable_limit(m)
            head = f"{label}\n" if k == 0 else ""
            note = f" ({above} above the limit)" if above else ""
            ax = cplot.stable_limit_map(m, ax=axes[k, col], norm=norm, colorbar=False,
                                        title=f"{head}k = {k}: {m.count_stable()} of {m.rho.size} points stable{note}")
            if col:
                ax.set_ylabel("")
            if k < 3:
                ax.set_xlabel("")
    cplot.stable_limit_colorbar(fig, axes[0, 0].collections[0], list(axes.ravel()), shrink=0.6)
    fig.suptitle(title + "\nstable region: largest macro step H up to which every grid H is stable (ρ(Ω) < 1)",
                 fontsize=11)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return counts


def local_error_figure(path, Hs):
    fig, axes = plt.subplots(4, 3, figsize=(12, 13))
    rows = [(FD, "gauss-seidel"), (FD, "jacobi"), (DD, "gauss-seidel"), (DD, "jacobi")]
    for r, (coupling, scheme) in enumerate(rows):
        s = two_mass_oscillator(ck=1e5, dk=1e3, coupling=coupling)
        for c, method in enumerate(METHODS):
            res = {f"k={k}": an.local_error(s, Hs, scheme, METHODS[method](k), update="simplified", t=0.01)
                   for k in range(4)}
            short = "F/D" if coupling == FD else "D/D"
            # the maximum runs over states and outputs of several quantities: name their units
            units = "m, m/s, N" if coupling == FD else "m, m/s"
            cplot.local_error_plot(res, ax=axes[r, c], title=f"{short}, {scheme}: {method}",
                                   ylabel=f"local error max |ε| over x, y [{units}]")
    fig.suptitle("busch2016 Fig. 15: local error over H (ck = 1e5 N/m, dk = 1e3 Ns/m)")
    fig.tight_layout()
    fig.savefig(path, dpi=70)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reduced", action="store_true", help="small grids (test suite)")
    ap.add_argument("--n", type=int, default=None, help="grid points per axis (default 30, reduced 6)")
    ap.add_argument("--out", default="out", help="output directory (default out/)")
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    n = args.n or (6 if args.reduced else 30)
    if n < 2:
        ap.error("--n must be >= 2")
    grid = (np.logspace(3, 9, n), np.logspace(0, 6, n), np.logspace(-6, -2, n))
    Hs = np.logspace(-6, -4, 4 if args.reduced else 9)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.perf_counter()
    written = []
    gs, jac = "Gauss-Seidel", "Jacobi"
    c1, c0, lag = "EXTRIPOL-C1", "EXTRIPOL-C0", "Lagrange"
    figs = [
        (9, FD, "F/D coupling, Gauss-Seidel: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [(f"{c1}, {gs}", FD, "gauss-seidel", c1), (f"{lag}, {gs}", FD, "gauss-seidel", lag)]),
        (10, FD, "F/D coupling, Jacobi: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [(f"{c1}, {jac}", FD, "jacobi", c1), (f"{lag}, {jac}", FD, "jacobi", lag)]),
        (11, FD, "F/D coupling, EXTRIPOL-C0: Gauss-Seidel (left) vs Jacobi (right)",
         [(f"{c0}, {gs}", FD, "gauss-seidel", c0), (f"{c0}, {jac}", FD, "jacobi", c0)]),
        (12, DD, "D/D coupling, Gauss-Seidel: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [(f"{c1}, {gs}", DD, "gauss-seidel", c1), (f"{lag}, {gs}", DD, "gauss-seidel", lag)]),
        (13, DD, "D/D coupling, Jacobi: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [(f"{c1}, {jac}", DD, "jacobi", c1), (f"{lag}, {jac}", DD, "jacobi", lag)]),
        (14, DD, "D/D coupling, EXTRIPOL-C0: Gauss-Seidel (left) vs Jacobi (right)",
         [(f"{c0}, {gs}", DD, "gauss-seidel", c0), (f"{c0}, {jac}", DD, "jacobi", c0)]),
    ]
    for num, _, title, panels in figs:
        path = os.path.join(args.out, f"busch_fig{num:02d}.png")
        counts = stability_figure(path, f"busch2016 Fig. {num}: {title}", panels, grid, args.threads)
        written.append(path)
        print(f"Fig. {num}: unstable points of {n ** 3}: " +
              ", ".join(f"{lab} k={k}: {c}" for (lab, k), c in counts.items()))
    # 2-D slice: ρ over ck and H at dk = 1e3 (F/D, Gauss-Seidel, Lagrange k = 1)
    m = an.two_mass_stability_map(grid[0], grid[1], grid[2], FD, "gauss-seidel", Lagrange(1), update="simplified",
                                  threads=args.threads)
    ax = cplot.stability_slice(m, dk=1e3, title="F/D, Gauss-Seidel, Lagrange k=1: ρ over ck and H, dk ≈ 1e3 Ns/m")
    fig = ax.figure
    path = os.path.join(args.out, "busch_slice_fd_gs_k1.png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    written.append(path)
    # the same slice for k = 0..3, Lagrange and EXTRIPOL-C1, with one shared colour scale and colour bar
    maps = {f"{meth} k={k}": an.two_mass_stability_map(grid[0], grid[1], grid[2], FD, "gauss-seidel",
                                                       METHODS[meth](k), update="simplified", threads=args.threads)
            for meth in ("Lagrange", "EXTRIPOL-C1") for k in range(4)}
    panels = cplot.stability_slices(maps, ncols=4, dk=1e3,
                                    suptitle="F/D, Gauss-Seidel: ρ over ck and H at dk ≈ 1e3 Ns/m (black: ρ = 1)")
    fig = panels[0].figure
    path = os.path.join(args.out, "busch_slices_fd_gs.png")
    fig.savefig(path, dpi=80)
    plt.close(fig)
    written.append(path)
    path = os.path.join(args.out, "busch_fig15.png")
    local_error_figure(path, Hs)
    written.append(path)
    print(f"wrote {len(written)} files to {args.out}/ in {time.perf_counter() - t0:.1f} s")
    return written


if __name__ == "__main__":
    main()
