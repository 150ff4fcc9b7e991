"""kraft2021 App. A's numerical examples (spec §13.4): the sap interface Jacobian against fd and the two-term
series sap2 in the implicit scheme under imMD step and order control, at larger sizes than tests/test_sap_examples.py.

1. Ex. 1, damping sweep (Fig. A.13): the steel rod (preset "tableA.3", n_K = 100, 20 subsystems, rtol = 1e-5,
   atol^pos = 1e-3 rtol, atol^vel = rtol, n_cor^max = 10, τ = 0.33) for damping ratios D = 1e-3 … 100, fd, sap and
   sap2: macro steps, n̄_cor, corrector failures, wall time; the figure ``--plot FILE`` (macro steps and n̄_cor over
   D, the thesis' sap2 threshold d_i = 6.38e5 Ns/m marked).
2. Ex. 1, element count (Fig. A.12): n_K = 20, 100, 1000 (``--rod-sizes``; CVODE band units from 500 bodies),
   D = 1e-3, fd and sap.
3. Ex. 2 (Figs. A.23, A.24): the asymmetric two-mass oscillator (Table 5.6, imMD rtol = 1e-3, τ = 0.01) for mass
   ratios m_r = 1, 1e3, 1e6 and coupling dampings d_c = 0 … 1e4 Ns/m, fd and sap.
4. Ex. 4 (Figs. A.28, A.29): the Sec. 5.8 impulse chain (Table 5.9 reduced to n_K = 50, n_s = 10, t = 1.2e-4 s)
   at rtol = 1e-4 … 1e-6, fd and sap, wall time best of ``--repeats`` side by side.

n̄_cor = corrector iterations per macro step (retried attempts included). Usage:
``.venv/bin/python benchmarks/sap_examples.py [--quick] [--t-rod 2e-5] [--plot sap_damping.png]``
(``--quick``: shorter runs and fewer points, about a minute).
"""
import argparse
import time
import warnings

import numpy as np

import cosim

#: the thesis' two-term threshold d_i = 6.38e5 Ns/m as a damping ratio of the n_K = 100 rod
SAP2_THRESHOLD = 6.38e5


def implicit_run(system, t_end, jacobian, rtol, atol, tau, max_iter, H0, solver=None):
    t0 = time.perf_counter()
    try:
        r = cosim.simulate(system, t_end, H=H0, solver=solver, approximation=cosim.Lagrange(0), last_step="shorten",
                           divergence_growth=np.inf,
                           step_control=cosim.StepControl(estimator="imMD", rtol=rtol, atol=atol),
                           scheme=cosim.Implicit(jacobian=jacobian, tol=rtol, max_iter=max_iter, convergence="y",
                                                 tau=tau))
    except cosim.SolverError as e:
        return dict(steps=np.nan, n_cor=np.nan, fails=np.nan, wall=time.perf_counter() - t0, error=str(e)[:60])
    st = r.stats
    return dict(steps=st["macro_steps"], n_cor=st["iterations"] / st["macro_steps"], fails=st["corrector_failures"],
                wall=time.perf_counter() - t0)


def rod(n_bodies, D, jacobian, t_end, band=False):
    s = cosim.models.oscillator_chain(preset="tableA.3", n_bodies=n_bodies, damping_ratio=D)
    rtol = 1e-5
    return implicit_run(s, t_end, jacobian, rtol, {"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}, 0.33, 10, 1e-9,
                        solver=cosim.CVODE(linear_solver="band") if band else None)


def row(label, jac, r):
    if "error" in r:
        print(f"  {label:28s} {jac:5s} failed: {r['error']}", flush=True)
    else:
        print(f"  {label:28s} {jac:5s} {r['steps']:7d} {r['n_cor']:6.2f} {r['fails']:6d} {r['wall']:8.2f}", flush=True)


def header(title):
    print(title)
    print(f"  {'case':28s} {'jac':5s} {'N_mac':>7s} {'n_cor':>6s} {'fails':>6s} {'wall [s]':>8s}")


def damping_sweep(Ds, t_end):
    header(f"1. Ex. 1 rod, n_K = 100, t = {t_end:g} s: damping sweep")
    out = {j: [] for j in ("fd", "sap", "sap2")}
    d_unit = cosim.models.oscillator_chain(preset="tableA.3", damping_ratio=1.0).params["d"][0]
    for D in Ds:
        for j in out:
            r = rod(100, D, j, t_end)
            out[j].append(r)
            row(f"D = {D:g} (d_i = {D * d_unit:.3g} Ns/m)", j, r)
    return out, SAP2_THRESHOLD / d_unit


def plot_damping(Ds, out, D_threshold, ax=None):
    """Macro steps, n̄_cor and corrector failures over the damping ratio D, one line per Jacobian (Fig. A.13's
    quantities). ``ax``: three Axes, or None for a new figure. Returns the three Axes."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(1, 3, figsize=(15, 4.2), constrained_layout=True)
    styles = {"fd": "o-", "sap": "s-", "sap2": "^--"}
    for j, rs in out.items():
        ax[0].loglog(Ds, [r["steps"] for r in rs], styles[j], label=j)
        ax[1].semilogx(Ds, [r["n_cor"] for r in rs], styles[j], label=j)
        ax[2].semilogx(Ds, [r["fails"] for r in rs], styles[j], label=j)
    for a in ax:
        a.axvline(1.0, color="0.6", lw=0.8)
        a.axvline(D_threshold, color="C3", lw=0.8, ls=":", label="sap2 threshold d_i = 6.38e5 Ns/m (thesis)")
        a.set_xlabel("damping ratio D = d_i / (2 √(c_i m_i)) [-]")
        a.grid(True, which="both", alpha=0.3)
    ax[0].set_ylabel("macro steps N_mac [-]")
    ax[1].set_ylabel("corrector iterations per macro step n̄_cor [-]")
    ax[0].legend(fontsize=8)
    ax[0].set_title("steel rod (Table A.3), n_K = 100: macro steps")
    ax[1].set_title("corrector iterations")
    ax[2].set_ylabel("count of corrector failures (H/4 retries)")
    ax[2].set_title("corrector failures")
    return ax


def element_count(ns, t_end):
    header(f"2. Ex. 1 rod, D = 1e-3, t = {t_end:g} s: element count n_K")
    for n in ns:
        for j in ("fd", "sap"):
            row(f"n_K = {n}", j, rod(n, 1e-3, j, t_end, band=n >= 500))


def asymmetric(ratios, dcs, quick):
    header("3. Ex. 2 asymmetric two-mass oscillator, imMD rtol 1e-3, tau = 0.01")
    for mr in ratios:
        t_end = 2e-3 if mr >= 1e6 else (0.02 if quick else 0.05)
        for dc in dcs:
            s = cosim.models.kraft_asymmetric(m1=1.0 / mr, dc=dc)
            for j in ("fd", "sap"):
                r = implicit_run(s, t_end, j, 1e-3, {"pos": 1e-6, "vel": 1e-3, "u": 1e-2}, 0.01, 10, 1e-6,
                                 solver=cosim.CVODE(rtol=1e-6, atol=1e-9))
                row(f"m_r = {mr:g}, d_c = {dc:g}, t = {t_end:g}", j, r)


def impulse_chain(rtols, repeats):
    header(f"4. Ex. 4 Sec. 5.8 chain (n_K = 50, n_s = 10, t = 1.2e-4 s), wall best of {repeats}")
    s = cosim.models.oscillator_chain(preset="table5.9", n_bodies=50, n_subsystems=10, seed=1)
    band = cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band")
    for rtol in rtols:
        best = {}
        for _ in range(repeats):
            for j in ("fd", "sap"):
                r = implicit_run(s, 1.2e-4, j, rtol, {"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}, 0.33, 10,
                                 1e-8, solver=band)
                if j not in best or r["wall"] < best[j]["wall"]:
                    best[j] = r
        for j, r in best.items():
            row(f"rtol = {rtol:g}", j, r)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="shorter runs, fewer points")
    ap.add_argument("--t-rod", type=float, default=None, help="simulated time of the rod runs [s] (default 2e-5)")
    ap.add_argument("--plot", default=None, help="write the damping-sweep figure to this file")
    ap.add_argument("--repeats", type=int, default=None, help="best of N wall times in part 4 (default 3)")
    ap.add_argument("--rod-sizes", default=None, help="n_K values of part 2, comma-separated (default 20,100,1000)")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore", cosim.CouplingInstabilityWarning)   # waves growing from rest
    t_rod = a.t_rod or (1e-5 if a.quick else 2e-5)
    Ds = [1e-3, 0.3, 3.0, 30.0] if a.quick else [1e-3, 0.1, 0.3, 1.0, 3.0, 10.0, 20.0, 30.0, 60.0, 100.0]
    out, D_threshold = damping_sweep(Ds, t_rod)
    if a.plot:
        import matplotlib
        matplotlib.use("Agg")
        ax = plot_damping(Ds, out, D_threshold)
        ax[0].figure.savefig(a.plot, dpi=120)
        print(f"  figure: {a.plot}")
    sizes = [int(v) for v in a.rod_sizes.split(",")] if a.rod_sizes else ([20, 100] if a.quick else [20, 100, 1000])
    element_count(sizes, t_rod)
    asymmetric([1e3, 1e6] if a.quick else [1.0, 1e3, 1e6], [0.0, 10.0, 100.0] if a.quick else
               [0.0, 1.0, 10.0, 30.0, 100.0, 1e3, 1e4], a.quick)
    impulse_chain([1e-4, 1e-5] if a.quick else [1e-4, 1e-5, 1e-6], a.repeats or (1 if a.quick else 3))


if __name__ == "__main__":
    main()
