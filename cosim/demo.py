"""The main job (``make demo``, ``python -m cosim demo``): stability and accuracy of non-iterative co-simulation of
the two-mass oscillator.

System: the linear two-mass (dual-mass) oscillator in force/displacement decomposition with feed-through
(genser2020 §3.1, kraft2021 eq. 2.7): S1 (mass m1, force driven) receives the coupling force F = u1 and outputs
y1 = (x1, ẋ1); S2 (mass m2 with the coupling spring/damper, base-point excited) receives u2 = (x1, ẋ1) and outputs
y2 = F = ck (x2 − x1) + dk (ẋ2 − ẋ1). Parameters are genser's accuracy/stability case study: m1 = m2 = 10 kg,
c1 = 1e6, c2 = 1e7 N/m, d1 = 1, d2 = 2 Ns/m, ck = 2e5 N/m, dk = 200 Ns/m, x1(0) = 0.1 m.

Every run co-simulates with a fixed macro step H (T_{N+1} = T_N + H) and one coupling approximation of the inputs
on [T_N, T_{N+1}] (busch2016 §2): ZOH (Lagrange k = 0), Lagrange extrapolation of degree k (busch2016 eq. 11),
EXTRIPOL-C0/C1 of degree k (busch2016 eq. 12a/12b), under the Jacobi scheme (both subsystems extrapolate, eq. 14)
and the Gauss-Seidel scheme S1 → S2 (S2 interpolates x1, ẋ1 through T_{N+1}, eq. 13). Two variants of the update
at the macro points (kraft2021 §2.3, App. B):

* ``consistent``: the exchanged force u1(T_{N+1}) = F is recomputed from the new states x1, x2 (kraft2021 eq. 2.22);
* ``simplified``: u1(T_{N+1}) is S2's output computed with S2's own *extrapolated* inputs ũ2(T_{N+1}), as a
  black-box tool would report it (genser2020's parallel setting).

Errors are against the monolithic solution (:func:`cosim.simulate_monolithic`, matrix exponential):
``max_rel`` = max |z − z_ref| / max |z_ref| over all states z = (x1, ẋ1, x2, ẋ2) and ``nrmse`` (kraft2021
eq. 5.1-5.2). Stability is classified by genser2020's amplitude rule (§11: a run is unstable if max |F| over the
last 20 % of the run exceeds max |F| over the first 20 %); a run whose states exceed 100× the largest reference
state raises :class:`cosim.DivergenceError` and is reported as diverged, with the macro time T_N at which that
happened.

Nothing in the printed text is precomputed: the table and the remarks below it are derived from the runs.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

import cosim
from cosim import analysis, models

CK, DK = 2e5, 200.0

#: (label, factory) for every coupling approximation of the demo, in table order.
APPROXIMATIONS = [
    ("ZOH (Lagrange k=0)", lambda: cosim.ZOH()),
    ("Lagrange k=1", lambda: cosim.Lagrange(k=1)),
    ("Lagrange k=2", lambda: cosim.Lagrange(k=2)),
    ("EXTRIPOL-C0 k=0", lambda: cosim.ExtrapolatedInterpolation(k=0, continuity=0)),
    ("EXTRIPOL-C0 k=1", lambda: cosim.ExtrapolatedInterpolation(k=1, continuity=0)),
    ("EXTRIPOL-C1 k=1", lambda: cosim.ExtrapolatedInterpolation(k=1, continuity=1)),
    ("EXTRIPOL-C0 k=2", lambda: cosim.ExtrapolatedInterpolation(k=2, continuity=0)),
    ("EXTRIPOL-C1 k=2", lambda: cosim.ExtrapolatedInterpolation(k=2, continuity=1)),
]
SCHEMES = ["jacobi", "gauss-seidel"]

#: The cases (H, update) of the table. H = 1 ms is genser2020's case study (Fig. 3.63); H = 3 ms is close to half
#: the period of the fast eigenmode (|λ| ≈ 1010 rad/s, period ≈ 6.2 ms), where the approximations separate.
CASES = [
    dict(H=1e-3, update="consistent"),
    dict(H=1e-3, update="simplified"),
    dict(H=3e-3, update="consistent"),
]


def amplitude_growth(F):
    """genser2020 §11 amplitude rule: max |F| over the last 20 % of the samples / max |F| over the first 20 %.
    A ratio > 1 classifies the run as unstable."""
    F = np.asarray(F, dtype=float)
    n = max(1, len(F) // 5)
    first = np.max(np.abs(F[:n]))
    return float(np.max(np.abs(F[-n:])) / first) if first > 0 else math.inf


def coupling_force(res):
    """The coupling force F(T_N) = ck (x2 − x1) + dk (ẋ2 − ẋ1) at the macro points, from the states (equal to S2's
    exchanged output 'F' under the consistent update)."""
    x1, v1 = res.x["S1"][:, 0], res.x["S1"][:, 1]
    x2, v2 = res.x["S2"][:, 0], res.x["S2"][:, 1]
    return CK * (x2 - x1) + DK * (v2 - v1)


def run_one(system, ref, H, t_end, scheme, update, approximation, solver, bound):
    """One co-simulation; returns a row dict (errors, stats, status) and the (t, F) curve."""
    t0 = time.perf_counter()
    diverged_at = None
    try:
        # the demo classifies runs itself (bound relative to the reference, amplitude rule): no relative growth
        # check; H = 3 ms does not divide t_end, the last macro step is shortened on purpose
        res = cosim.simulate(system, t_end=t_end, H=H, scheme=scheme, approximation=approximation,
                             solver=solver, update=update, divergence_bound=bound, divergence_growth=math.inf,
                             last_step="shorten")
    except cosim.DivergenceError as exc:
        res = exc.result
        # the partial result ends at the last macro point inside the bound; the bound was exceeded at the next one
        diverged_at = float(res.t[-1] + H) if len(res.t) else 0.0
    wall = time.perf_counter() - t0
    F = coupling_force(res)
    row = dict(scheme=scheme, update=update, H=H, wall_time=wall, diverged_at=diverged_at,
               macro_steps=int(res.stats.get("macro_steps", len(res.t) - 1)),
               rhs_calls=int(sum(s.get("rhs_calls", 0) for s in res.stats.get("subsystems", {}).values())))
    if diverged_at is None:
        err = res.error_to(ref)
        row.update(max_rel=err["max_rel"], nrmse=err["nrmse"], growth=amplitude_growth(F))
        row["status"] = "unstable" if row["growth"] > 1.0 else "stable"
    else:
        row.update(max_rel=math.nan, nrmse=math.nan, growth=math.nan, status=f"DIVERGED t={diverged_at:.3f}")
    return row, (np.asarray(res.t), F)


def run(out_dir="out", quick=False, solver="cvode", stream=sys.stdout):
    """Run every case and variant, print the table and the remarks, write ``demo_table.txt`` and
    ``coupling_force.png`` to ``out_dir``. Returns the list of row dicts."""
    t_start = time.perf_counter()
    t_end = 0.1 if quick else 0.5
    if solver == "cvode":
        make_solver = lambda: cosim.CVODE(rtol=1e-10, atol=1e-12)  # noqa: E731
    elif solver == "exact":
        make_solver = lambda: cosim.Exact()  # noqa: E731
    else:
        raise ValueError(f"solver: must be 'cvode' or 'exact', got {solver!r}")
    system = models.two_mass_oscillator(ck=CK, dk=DK, coupling="force/displacement")
    os.makedirs(out_dir, exist_ok=True)

    lines = []

    def emit(s=""):
        lines.append(s)
        print(s, file=stream)

    p = system.params
    emit("cosim demo: two-mass oscillator, force/displacement coupling with feed-through (genser2020 §3.1)")
    emit(f"  m1 = {p['m1']:g}, m2 = {p['m2']:g} kg, c1 = {p['c1']:g}, c2 = {p['c2']:g} N/m, d1 = {p['d1']:g}, "
         f"d2 = {p['d2']:g} Ns/m, ck = {CK:g} N/m, dk = {DK:g} Ns/m, x1(0) = {p['x0'][0]:g} m")
    eig = np.linalg.eigvals(models.two_mass.monolithic_matrix(ck=CK, dk=DK))
    emit("  monolithic eigenvalues: " + ", ".join(f"{z.real:.2f}{z.imag:+.2f}i" for z in eig if z.imag >= 0))
    emit(f"  t_end = {t_end:g} s, subsystem solver = {make_solver()!r}, reference = monolithic (matrix exponential)")
    emit("")

    rows, curves, refs = [], {}, {}
    for case in CASES:
        H, update = case["H"], case["update"]
        ref = cosim.simulate_monolithic(system, t_end=t_end, H=H)
        refs[(H, update)] = (ref.t, coupling_force(ref))
        bound = 100.0 * float(np.max(np.abs(ref.X)))
        for scheme in SCHEMES:
            for label, factory in APPROXIMATIONS:
                row, curve = run_one(system, ref, H, t_end, scheme, update, factory(), make_solver(), bound)
                row["approximation"] = label
                row["rho"] = float(analysis.spectral_radius(system, H, scheme, factory(), update=update))
                rows.append(row)
                curves[(H, update, scheme, label)] = curve

    header = (f"{'H [ms]':>6}  {'update':<10}  {'scheme':<12}  {'approximation':<18}  {'max_rel':>9}  {'nrmse':>9}  "
              f"{'growth':>7}  {'rho':>6}  {'status':<15}  {'macro':>5}  {'rhs calls':>9}  {'wall [s]':>8}")
    emit(header)
    emit("-" * len(header))
    last = None
    for r in rows:
        key = (r["H"], r["update"], r["scheme"])
        if last is not None and key != last:
            emit("")
        last = key
        f = lambda v, fmt: ("-" if not np.isfinite(v) else format(v, fmt))  # noqa: E731
        emit(f"{r['H'] * 1e3:>6g}  {r['update']:<10}  {r['scheme']:<12}  {r['approximation']:<18}  "
             f"{f(r['max_rel'], '9.3e'):>9}  {f(r['nrmse'], '9.3e'):>9}  {f(r['growth'], '7.3f'):>7}  {r['rho']:>6.4f}  "
             f"{r['status']:<15}  {r['macro_steps']:>5}  {r['rhs_calls']:>9}  {r['wall_time']:>8.3f}")
    emit("")
    emit("max_rel: max over time and states of |z - z_ref| / max |z_ref|;  nrmse: kraft2021 eq. 5.1-5.2;")
    emit("growth: max|F| in the last 20 % of the run / max|F| in the first 20 % (genser2020 §11; > 1 = unstable);")
    ref_growth = amplitude_growth(refs[(CASES[0]['H'], CASES[0]['update'])][1])
    emit(f"  the monolithic reference itself decays to growth = {ref_growth:.3f};")
    emit("rho: spectral radius of the macro-step amplification matrix (busch2016 eq. 23-25, exact subsystem")
    emit("  integration; cosim.analysis.spectral_radius): the scheme is numerically stable iff rho < 1;")
    emit("DIVERGED: a state exceeded 100x the largest reference state at macro time t (cosim.DivergenceError).")
    emit("")
    for s in remarks(rows):
        emit(s)
    emit("")
    emit("Shrinking H re-stabilises (the unstable runs above, repeated with H/2, H/4, ...):")
    for s in refine_unstable(system, rows, t_end, make_solver):
        emit(s)

    with open(os.path.join(out_dir, "demo_table.txt"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    png = os.path.join(out_dir, "coupling_force.png")
    plot(curves, refs, png, t_end,
         {(r['H'], r['update'], r['scheme'], r['approximation']): r['status'] for r in rows})
    emit("")
    emit(f"wrote {os.path.join(out_dir, 'demo_table.txt')} and {png}  ({time.perf_counter() - t_start:.1f} s)")
    return rows


def _names(rows, pred):
    return [f"{r['approximation']} ({r['scheme']})" for r in rows if pred(r)]


def remarks(rows):
    """Observations derived from the rows (no precomputed claims)."""
    out = ["What the table shows:"]
    bad = lambda r: r["status"] != "stable"  # noqa: E731
    for case in CASES:
        H, upd = case["H"], case["update"]
        sel = [r for r in rows if r["H"] == H and r["update"] == upd]
        unstable = _names(sel, bad)
        head = f"* H = {H * 1e3:g} ms, {upd} update: "
        if unstable:
            out.append(head + f"{len(unstable)} of {len(sel)} runs unstable or diverged: " + "; ".join(unstable) + ".")
        else:
            out.append(head + f"all {len(sel)} runs stable.")
        ok = [r for r in sel if not bad(r)]
        if ok:
            best = min(ok, key=lambda r: r["max_rel"])
            worst = max(ok, key=lambda r: r["max_rel"])
            if best["max_rel"] > 0.1:
                out.append("  stable is not accurate: even the best stable run has an error of "
                           f"{best['max_rel']:.0%} of the reference amplitude.")
            out.append(f"  among the stable runs max_rel ranges from {best['max_rel']:.2e} "
                       f"({best['approximation']}, {best['scheme']}) to {worst['max_rel']:.2e} "
                       f"({worst['approximation']}, {worst['scheme']}).")
    # Jacobi vs Gauss-Seidel under the simplified update, and consistent vs simplified
    for H in sorted({c["H"] for c in CASES}):
        ups = {c["update"] for c in CASES if c["H"] == H}
        if {"consistent", "simplified"} <= ups:
            same = all(math.isclose(a["max_rel"], b["max_rel"], rel_tol=1e-6)
                       for a in rows for b in rows
                       if a["H"] == b["H"] == H and a["scheme"] == b["scheme"] == "gauss-seidel"
                       and a["approximation"] == b["approximation"] and a["update"] == "consistent"
                       and b["update"] == "simplified" and np.isfinite(a["max_rel"]) and np.isfinite(b["max_rel"]))
            if same:
                out.append(f"* H = {H * 1e3:g} ms, Gauss-Seidel S1 -> S2: the simplified and the consistent update "
                           "give the same numbers: S2 interpolates x1 through the new value x1(T_N+1), so its "
                           "output F is already consistent.")
            nj = {u: sum(bad(r) for r in rows if r["H"] == H and r["update"] == u and r["scheme"] == "jacobi")
                  for u in ("consistent", "simplified")}
            if nj["simplified"] != nj["consistent"]:
                out.append(f"* H = {H * 1e3:g} ms, Jacobi: {nj['simplified']} unstable runs with the simplified "
                           f"update against {nj['consistent']} with the consistent one.")
    agree = sum((r["rho"] < 1.0) == (r["status"] == "stable") for r in rows)
    out.append(f"* The amplitude rule of the simulated runs and the linear analysis (rho < 1) agree on {agree} of "
               f"{len(rows)} runs" + ("." if agree == len(rows) else
                                      " (a run of finite length can miss a slowly growing mode)."))
    for case in CASES:
        H, upd = case["H"], case["update"]
        nb = {sc: sum(bad(r) for r in rows if r["H"] == H and r["update"] == upd and r["scheme"] == sc)
              for sc in SCHEMES}
        out.append(f"* H = {H * 1e3:g} ms, {upd} update: unstable/diverged runs: "
                   + ", ".join(f"{n} under {sc}" for sc, n in nb.items()) + ".")
    return out


def refine_unstable(system, rows, t_end, make_solver, factors=(2, 4, 8, 16)):
    """For every unstable or diverged (approximation, scheme, update, H), halve H until the run is stable
    (amplitude rule) and return the lines to print. Co-simulation is zero-stable here (no algebraic loop because
    S1 has no feed-through; busch2016 §5), so a small enough H must re-stabilise every variant."""
    labels = dict(APPROXIMATIONS)
    out = []
    for r in rows:
        if r["status"] == "stable":
            continue
        found = None
        for f in factors:
            h = r["H"] / f
            ref = cosim.simulate_monolithic(system, t_end=t_end, H=h)
            row, _ = run_one(system, ref, h, t_end, r["scheme"], r["update"], labels[r["approximation"]](),
                             make_solver(), 100.0 * float(np.max(np.abs(ref.X))))
            if row["status"] == "stable":
                found = (h, row)
                break
        what = f"{r['approximation']}, {r['scheme']}, {r['update']}, H = {r['H'] * 1e3:g} ms"
        if found:
            h, row = found
            out.append(f"  {what}: stable at H = {h * 1e3:g} ms (growth {row['growth']:.3f}, "
                       f"max_rel {row['max_rel']:.2e})")
        else:
            out.append(f"  {what}: still unstable at H = {r['H'] / factors[-1] * 1e3:g} ms")
    return out


#: the panels' families of approximations: (column title, labels of APPROXIMATIONS); each panel shows one family
#: (at most three curves) and the monolithic reference, so that no panel holds more than four curves
FAMILIES = [
    ("Lagrange extrapolation (ZOH = k = 0)", ["ZOH (Lagrange k=0)", "Lagrange k=1", "Lagrange k=2"]),
    ("EXTRIPOL-C0", ["EXTRIPOL-C0 k=0", "EXTRIPOL-C0 k=1", "EXTRIPOL-C0 k=2"]),
    ("EXTRIPOL-C1", ["EXTRIPOL-C1 k=1", "EXTRIPOL-C1 k=2"]),
]


def _degree(label):
    """The degree k of an approximation label of :data:`APPROXIMATIONS` (ZOH is k = 0)."""
    return 0 if label.startswith("ZOH") else int(label.rsplit("k=", 1)[1])


def plot(curves, refs, path, t_end, statuses=None):
    """Write :func:`figure` to ``path`` (PNG)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig = figure(curves, refs, t_end, statuses)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def figure(curves, refs, t_end, statuses=None):
    """Coupling force F over time: one row per (H, update, scheme), one column per family of approximations
    (:data:`FAMILIES`), at most four curves per panel (the family's degrees k and the monolithic reference). The
    colour is the degree k, the same in every column. Curves of unstable runs are thin and leave the frame (the
    y-range is 2.5x the reference amplitude); x marks where a run diverged. Returns the matplotlib Figure."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    statuses = statuses or {}
    rows = [(case, scheme) for case in CASES for scheme in SCHEMES]
    fig, axes = plt.subplots(len(rows), len(FAMILIES), figsize=(14, 2.25 * len(rows) + 1.6), sharex=True,
                             squeeze=False, layout="constrained")
    colors = {0: "tab:blue", 1: "tab:orange", 2: "tab:green"}
    for i, (case, scheme) in enumerate(rows):
        H, upd = case["H"], case["update"]
        tr, Fr = refs[(H, upd)]
        lim = 2.5 * np.max(np.abs(Fr)) / 1e3
        for j, (family, labels) in enumerate(FAMILIES):
            ax = axes[i, j]
            ax.plot(tr, Fr / 1e3, "k-", lw=2.4, alpha=0.3)
            for label in labels:
                t, F = curves[(H, upd, scheme, label)]
                stable = statuses.get((H, upd, scheme, label)) == "stable"
                color = colors[_degree(label)]
                ax.plot(t, F / 1e3, "-", color=color, lw=1.3 if stable else 0.7, alpha=1.0 if stable else 0.6)
                if t[-1] < t_end - 0.5 * H:  # diverged: mark the end
                    ax.plot(t[-1], np.clip(F[-1] / 1e3, -lim, lim), "x", color=color, ms=8, mew=2)
            ax.set_ylim(-lim, lim)
            ax.grid(alpha=0.3)
            ax.tick_params(labelsize=8)
            if i == 0:
                ax.set_title(family, fontsize=11, fontweight="bold")
            if j == 0:
                ax.set_ylabel(f"H = {H * 1e3:g} ms, {scheme},\n{upd} update\n\nF [kN]", fontsize=9)
            else:
                ax.set_ylabel("F [kN]", fontsize=9)
            if i == len(rows) - 1:
                ax.set_xlabel("t [s]")
    handles = [Line2D([], [], color="k", lw=2.4, alpha=0.3, label="monolithic reference")]
    handles += [Line2D([], [], color=colors[k], lw=1.3, label=f"degree k = {k}") for k in colors]
    handles += [Line2D([], [], color="0.4", lw=0.7, alpha=0.6, label="thin: unstable run"),
                Line2D([], [], color="0.4", ls="none", marker="x", ms=8, mew=2, label="x: diverged")]
    fig.legend(handles=handles, loc="outside lower center", ncol=len(handles), fontsize=9, frameon=False)
    fig.suptitle(f"Two-mass oscillator, force/displacement, ck = {CK:g} N/m, dk = {DK:g} Ns/m: coupling force F at "
                 "the macro points", fontsize=11)
    return fig


def main(argv=None):
    """``cosim demo [--out DIR] [--quick] [--solver cvode|exact]``."""
    ap = argparse.ArgumentParser(prog="cosim demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out", help="output directory for demo_table.txt and coupling_force.png")
    ap.add_argument("--quick", action="store_true", help="short run (t_end = 0.1 s), same variants")
    ap.add_argument("--solver", choices=["cvode", "exact"], default="cvode",
                    help="subsystem integrator: CVODE(rtol=1e-10, atol=1e-12) or Exact() (matrix exponential)")
    args = ap.parse_args(argv)
    run(out_dir=args.out, quick=args.quick, solver=args.solver)
    return 0


if __name__ == "__main__":
    sys.exit(main())
