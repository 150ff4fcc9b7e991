"""Iterative schemes (issue 10): waveform relaxation on preCICE's two-mass oscillator and implicit vs explicit
co-simulation at equal error.

1. preCICE oscillator (m = 1, k1 = k2 = 4π², k12 = 16π², u(0) = (1, 0)), RK4 units with h = 0.005 (left) and
   2e-4 (right) as in the published study, windows 0.01 ... 0.2, sub-step waveforms (cubic splines), Gauss-Seidel
   order, tol 1e-10: error against the analytic solution (at t = 1 and the maximum over all macro points, both
   displacements), mean iterations per window and wall time, per acceleration.
   Targets: error <= 5e-6 at every window (preCICE: 3.9-5.8e-6); IQN-ILS <= 6 iterations per window.
2. Implicit (fd) vs explicit (Jacobi, same κ = 2) on kraft's M1 (cosim.models.kraft_two_mass("M1")), fixed H, Exact
   and CVODE units: macro steps and wall time at equal error.
3. The same model under step control: exMD/exCV (explicit) vs imMD/imCV (implicit) at equal rtol.
4. Waveform relaxation in Jacobi order with threads=2 vs threads=1 on the Table 5.4 chain with CVODE units.

Usage: .venv/bin/python benchmarks/iterative.py [--quick]   (--quick: parts 2-3 with Exact units only)
"""
import time

import numpy as np

import cosim

WINDOWS = [0.01, 0.02, 0.05, 0.1, 0.2]
ACCELS = {"plain (omega=1)": dict(), "aitken": dict(acceleration="aitken", omega=0.5),
          "iqn-ils": dict(acceleration="iqn-ils"), "iqn-ils reuse=2": dict(acceleration="iqn-ils", reuse=2)}


def oscillator():
    sys = cosim.models.precice_oscillator()
    solver = {"S1": cosim.RK4(h=0.005), "S2": cosim.RK4(h=2e-4)}
    print("1. preCICE oscillator, RK4 h = 0.005 / 2e-4, sub-step waveforms, Gauss-Seidel, tol 1e-10, t_end = 1")
    print(f"{'acceleration':18s} {'window':>7s} {'err(t=1)':>10s} {'err max':>10s} {'it/window':>9s} {'wall [s]':>9s}")
    worst = {}
    for name, kw in ACCELS.items():
        for W in WINDOWS:
            scheme = cosim.WaveformRelaxation(tol=1e-10, max_iter=200, waveform="substeps", sweep="gauss-seidel", **kw)
            t0 = time.perf_counter()
            r = cosim.simulate(sys, 1.0, W, scheme=scheme, solver=solver, approximation=cosim.ZOH())
            wall = time.perf_counter() - t0
            ex = sys.solution(r.t)
            e_end = np.max(np.abs(r.X[-1, [0, 2]] - ex[-1, [0, 2]]))
            e_max = np.max(np.abs(r.X[:, [0, 2]] - ex[:, [0, 2]]))
            itw = r.stats["iterations"] / r.stats["macro_steps"]
            e0, i0 = worst.get(name, (0.0, 0.0))
            worst[name] = (max(e0, e_max), max(i0, itw))
            print(f"{name:18s} {W:7.2f} {e_end:10.2e} {e_max:10.2e} {itw:9.2f} {wall:9.3f}")
    for name, (e, it) in worst.items():
        print(f"   {name}: worst max error {e:.2e} (target <= 5e-6: {'met' if e <= 5e-6 else 'NOT met'}), "
              f"largest mean iterations/window over the windows {it:.2f}")


def _m1_error(sys, r):
    """Largest error of all states over the macro points, relative to max |x| (the monolithic reference at r.t)."""
    ref = cosim.simulate_monolithic(sys, r.t[-1], t_eval=r.t, solver=cosim.Exact())
    return np.max(np.abs(r.X - ref.X)) / np.max(np.abs(ref.X))


def _timed(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        r = fn()
        best = min(best, time.perf_counter() - t0)
    return r, best


def implicit_vs_explicit(quick=False):
    """Kraft's M1 (kraft2021 §18.5: m1 = 2, m2 = 1, c1 = 1e5, cc = 5e3, c2 = 1e3, undamped), force/force, κ = 2.
    Fixed H: explicit Jacobi vs implicit with the fd interface Jacobian (tol 1e-10); for every implicit run the
    explicit run with the largest H that is at least as accurate (equal error). Units: Exact (one matrix exponential
    per step: cheapest possible units) and CVODE (rtol 1e-10: units that cost what real subsystems cost). Adaptive:
    exMD/imMD and exCV/imCV at the same rtol."""
    sys = cosim.models.kraft_two_mass("M1")
    T = 0.1
    Hs = [1e-3, 5e-4, 2.5e-4, 1.25e-4, 6.25e-5, 3.125e-5, 1.5625e-5, 7.8125e-6, 3.90625e-6]
    solvers = {"Exact": cosim.Exact(), "CVODE": cosim.CVODE(rtol=1e-10, atol=1e-12)}
    if quick:
        solvers.pop("CVODE")
    for sname, solver in solvers.items():
        print(f"\n2. kraft M1, {sname} units, Lagrange(2), t_end = {T}: fixed H (error: max over macro points, "
              "relative to max|x|)")
        print(f"{'scheme':10s} {'H':>10s} {'steps':>6s} {'iters':>6s} {'error':>10s} {'wall [s]':>9s}")
        rows = {"explicit": [], "implicit": []}
        # CVODE units (restarted at every macro point) have an error floor of ~1e-6 on M1: smaller H says nothing
        for H in (Hs if sname == "Exact" else Hs[:6]):
            for name, scheme in (("explicit", "jacobi"),
                                 ("implicit", cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20))):
                try:
                    r, wall = _timed(lambda: cosim.simulate(sys, T, H, scheme=scheme, solver=solver,
                                                            approximation=cosim.Lagrange(2),
                                                            divergence_growth=float("inf")),
                                     3 if sname == "Exact" else 1)
                except cosim.CosimError as e:
                    print(f"{name:10s} {H:10.3e}  failed: {type(e).__name__}")
                    continue
                err = _m1_error(sys, r)
                rows[name].append((err, H, r.stats["macro_steps"], wall))
                print(f"{name:10s} {H:10.3e} {r.stats['macro_steps']:6d} {r.stats.get('iterations', 0):6d} "
                      f"{err:10.2e} {wall:9.4f}")
        print(f"   equal error ({sname} units): implicit run vs the explicit run with the largest H at least as "
              "accurate")
        for e_imp, H_imp, n_imp, w_imp in rows["implicit"]:
            cands = [r for r in rows["explicit"] if r[0] <= e_imp]
            if not cands:
                print(f"   implicit H = {H_imp:.3e} (error {e_imp:.1e}): no explicit run in the sweep is as accurate")
                continue
            e_ex, H_ex, n_ex, w_ex = cands[0]
            print(f"   error <= {e_imp:.1e}: implicit H = {H_imp:.3e} ({n_imp} steps, {w_imp:.4f} s) vs explicit "
                  f"H = {H_ex:.3e} ({n_ex} steps, {w_ex:.4f} s): steps explicit/implicit {n_ex / n_imp:.1f}, wall "
                  f"explicit/implicit {w_ex / w_imp:.2f}")
    print("\n3. kraft M1, Exact units, adaptive (StepControl, k_max = 4, rtol 1e-6): explicit vs implicit estimators")
    print(f"{'estimator':10s} {'steps':>6s} {'rejected':>8s} {'iters':>6s} {'error':>10s} {'wall [s]':>9s}")
    for est in ("exMD", "imMD", "exCV", "imCV"):
        scheme = cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20) if est.startswith("im") else "jacobi"
        r, wall = _timed(lambda: cosim.simulate(sys, T, 1e-6, scheme=scheme, solver=cosim.Exact(),
                                                approximation=cosim.Lagrange(2),
                                                step_control=cosim.StepControl(est, 1e-6, k_max=4)), 3)
        print(f"{est:10s} {r.stats['macro_steps']:6d} {r.stats['rejected_steps']:8d} {r.stats.get('iterations', 0):6d} "
              f"{_m1_error(sys, r):10.2e} {wall:9.4f}")


def wr_threads(t_end=1e-7, repeats=2):
    """Waveform relaxation in Jacobi order with threads=2 over threads=1: the units of every sweep on the pool. Table
    5.4 chain (cosim.models.oscillator_chain(preset="table5.4"), n_K = 1000, n_s = 10), CVODE band units
    (rtol 1e-8), H = 1e-8 s, κ = 1, tol 1e-6; best of ``repeats``. Results are bit-identical for both thread counts."""
    print("\n4. waveform relaxation (Jacobi order), threads=2 over threads=1: Table 5.4 chain, n_K = 1000, n_s = 10, "
          f"CVODE band units, H = 1e-8, Lagrange(1), tol 1e-6, t_end = {t_end:g}")
    s = cosim.models.oscillator_chain(preset="table5.4", n_subsystems=10)
    for wf in ("polynomial",):  # substeps with CVODE: resampling noise keeps the residual above 1e-6 (max_iter sweeps)
        best, res = {}, {}
        for th in (1, 2):
            scheme = cosim.WaveformRelaxation(tol=1e-6, max_iter=50, waveform=wf, on_failure="continue")
            res[th], best[th] = _timed(lambda: cosim.simulate(
                s, t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=1), threads=th, scheme=scheme,
                solver=cosim.CVODE(rtol=1e-8, atol=1e-13, linear_solver="band"), output_interval=t_end / 5,
                divergence_growth=float("inf")), repeats)
        same = np.array_equal(res[1].X, res[2].X)
        it = res[1].stats["iterations"] / res[1].stats["macro_steps"]
        print(f"   waveform={wf:10s}: threads=1 {best[1]:.3f} s, threads=2 {best[2]:.3f} s, speed-up "
              f"{best[1] / best[2]:.2f}x ({it:.1f} sweeps per window; bit-identical: {same})")


if __name__ == "__main__":
    import sys as _sys
    quick = "--quick" in _sys.argv
    if not quick:
        oscillator()
    implicit_vs_explicit(quick)
    wr_threads(t_end=5e-8 if quick else 1e-7)
