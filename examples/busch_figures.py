"""Busch (2016): stability maps and local error (Figs. 9-15)
=========================================================

Reproduce busch2016 Figs. 9-15 as PNG files (stability of EXTRIPOL-C0/C1 versus Lagrange; local error).

    python examples/busch_figures.py                # full size (30^3 grid per map), writes out/busch_fig09.png ...
    python examples/busch_figures.py --reduced      # 6^3 grids, few step sizes (what the test suite runs)

Two-mass oscillator with Busch's parameters (m1 = m2 = 10, c1 = 1e6, c2 = 1e7, d1 = 1, d2 = 2); ck, dk and H are
swept on log grids (the paper does not give its grid). Subsystems are integrated exactly; the output update is
busch2016 eq. 19 (update="simplified"). Each stability figure has rows k = 0..3 and, per method, a pair of 3-D plots
(stable left, unstable right). ``busch_slice_fd_gs_k1.png`` and ``busch_slices_fd_gs.png`` show ρ itself over
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
    """panels: list of (column label, coupling, scheme, method); one row per degree k = 0..3."""
    ck, dk, H = grid
    fig = plt.figure(figsize=(4.6 * len(panels), 12.5))
    counts = {}
    for col, (label, coupling, scheme, method) in enumerate(panels):
        for k in range(4):
            m = an.two_mass_stability_map(ck, dk, H, coupling, scheme, METHODS[method](k), update="simplified",
                                          threads=threads)
            counts[label, k] = m.count_unstable()
            axs = (fig.add_subplot(4, 2 * len(panels), 2 * len(panels) * k + 2 * col + 1, projection="3d"),
                   fig.add_subplot(4, 2 * len(panels), 2 * len(panels) * k + 2 * col + 2, projection="3d"))
            cplot.stability_scatter(m, ax=axs, s=2)
            axs[0].set_title(f"{label}, k={k}: stable {m.count_stable()}", fontsize=8)
            axs[1].set_title(f"unstable {m.count_unstable()}", fontsize=8)
    fig.suptitle(title)
    fig.subplots_adjust(left=0.02, right=0.97, bottom=0.03, top=0.93, wspace=0.12, hspace=0.22)
    fig.savefig(path, dpi=70)
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
            cplot.local_error_plot(res, ax=axes[r, c], title=f"{short}, {scheme}: {method}")
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
    figs = [
        (9, FD, "F/D coupling, Gauss-Seidel: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [("C1 GS", FD, "gauss-seidel", "EXTRIPOL-C1"), ("Lagrange GS", FD, "gauss-seidel", "Lagrange")]),
        (10, FD, "F/D coupling, Jacobi: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [("C1 Jacobi", FD, "jacobi", "EXTRIPOL-C1"), ("Lagrange Jacobi", FD, "jacobi", "Lagrange")]),
        (11, FD, "F/D coupling, EXTRIPOL-C0: Gauss-Seidel (left) vs Jacobi (right)",
         [("C0 GS", FD, "gauss-seidel", "EXTRIPOL-C0"), ("C0 Jacobi", FD, "jacobi", "EXTRIPOL-C0")]),
        (12, DD, "D/D coupling, Gauss-Seidel: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [("C1 GS", DD, "gauss-seidel", "EXTRIPOL-C1"), ("Lagrange GS", DD, "gauss-seidel", "Lagrange")]),
        (13, DD, "D/D coupling, Jacobi: EXTRIPOL-C1 (left) vs Lagrange (right)",
         [("C1 Jacobi", DD, "jacobi", "EXTRIPOL-C1"), ("Lagrange Jacobi", DD, "jacobi", "Lagrange")]),
        (14, DD, "D/D coupling, EXTRIPOL-C0: Gauss-Seidel (left) vs Jacobi (right)",
         [("C0 GS", DD, "gauss-seidel", "EXTRIPOL-C0"), ("C0 Jacobi", DD, "jacobi", "EXTRIPOL-C0")]),
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
