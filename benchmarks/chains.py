"""Oscillator chains (kraft2021 §16, §18; issue 11): parallel units, cost per macro step, co-simulation against the
monolithic band-CVODE solve, idle time against H.

    .venv/bin/python benchmarks/chains.py            # the sizes of the issue (a few minutes)
    .venv/bin/python benchmarks/chains.py --quick    # reduced (seconds)
    .venv/bin/python benchmarks/chains.py --threads  # thread scaling alone (section 11, about 30 s)

1. speed-up of threads=2 over threads=1: the Table 5.4 chain (n_K = 1000) in 10 and 100 units with CVODE units
   (band linear solver, bandwidth 3), explicit Jacobi, Lagrange κ = 1, H = 1e-8 s; target >= 1.7x on 2 cores; the
   idle fraction (eq. 4.5) of each run.
2. cost per macro step against the number of units (10, 100, 1000; 10 bodies per unit): linear means a constant
   cost per unit and macro step.
3. co-simulation (fixed H) against monolithic CVODE with the band solver (and the dense solver, the reference a user
   would otherwise have) at equal accuracy: error of all states at t_end against a tight monolithic reference.
4. T25 (qualitative): idle fraction against H on the homogeneous Sec. 4.5 chain (scaled down): it peaks at
   intermediate H and is smallest when h_mic = H. Wall-clock and thread-CPU-clock idle fractions (the CPU clock
   does not charge a preemption of the process to the unit that was running); EXTRIPOL-C1 (CVODE continues across
   macro points, so h_mic reaches H) and Lagrange κ = 1 (CVODE restarts at every macro point).
5. T18: exMD on the Table 5.4 chain (n_K = 1000, n_s = 100, rtol = 1e-6, atol^pos = 1e-9, atol^vel = 1e-6), macro
   steps and failed steps, and imMD (implicit, fd, corrector test on y) with its corrector iterations (scaled
   down in t: the full t_sim = 1e-3 s takes hours here; the ratio exMD/imMD is over the same shortened run).
6. T16 over the full t_sim = 0.25 s: the implicit and waveform rows (κ = 2) at the thesis' H and half of it.
7. T24 over several seeds: exCV macro steps of the Table 5.5 chain against its repartitioned form.
8. threads=2 over threads=1 for the estimators' comparative integrations (exMD) and the implicit corrector with
   its fd perturbed integrations (Table 5.4 chain in 10 units).
9. equal accuracy (--equal-accuracy, or --only 9): co-simulation (fixed H with the best of ZOH, Lagrange κ = 1, 2,
   EXTRIPOL-C1; adaptive exMD; implicit) against the monolithic band-CVODE solve with its rtol tuned to the same
   error, for error targets 1e-3, 1e-4, 1e-5 (relative NRMSE of the monitored variables, Table 5.4 chain scaled
   to n_K = 100, n_s = 10).
10. T21's imMD row: κ of the accepted steps before, on and after the ramp of the first impulse (Table 5.9 chain,
   n_K = 1000, n_s = 10, rtol = 1e-4).
11. thread scaling (--threads, or --only 11; about 30 s): the Table 5.4 chain with n_K = 3200 in 64 CVODE-band units,
   explicit Jacobi, Lagrange κ = 1, H = 1e-8 s; threads 1, 2 (and 4, 8, ... up to the cores), interleaved, best of
   3; the machine's load; from the timing instrumentation the master's serial fraction s (Amdahl: n / (1 + (n-1) s)),
   the units per thread and cpu_parallelism (the units' CPU time over the critical path of the threads' lists, which
   the machine's load does not change); results bit-identical for every thread count. Target threads = 2 >= 1.9x.
12. Kraft's large-model studies (--large, or --only 12; Sec. 5.6 and 5.7): benchmarks/large_chains.py in a child
   process (scaling order P of the dense and band monolithic solves, time per part against the time model (4.1)-(4.4),
   speed-up at equal accuracy; about 9 min, 1 min with --quick).
13. T18 over t_sim from windows (--only 13; about 6 min of CPU, 1.5 min with --quick): exMD and imMD restarted from the
   monolithic state at t0 = 0, 2e-5, 1e-4, 3e-4, 6e-4, 9e-4 s over 2 µs each, with the units' CVODE at rtol 1e-6
   (the thesis' subsystem tolerance) and 1e-9; the late mean H of each window, the corrector failures, and the step
   counts over t_sim = 1e-3 s integrated from the late H (issue 31 part 5: imMD's steps follow CVODE's error).
   Sections: --only 1,3,5 (default all but 13).
Timings depend on the machine's load: the lead re-runs them on a quiet machine.
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import cosim  # noqa: E402
from cosim.models import chain_states, oscillator_chain  # noqa: E402

BAND = dict(linear_solver="band")


def run(system, **kw):
    t0 = time.perf_counter()
    r = cosim.simulate(system, divergence_growth=math.inf, **kw)
    return r, time.perf_counter() - t0


def speedup(t_end, repeats):
    print("== 1. threads=2 over threads=1 (Table 5.4 chain, n_K = 1000, CVODE band units, H = 1e-8 s, κ = 1)")
    for ns in (10, 100):
        s = oscillator_chain(preset="table5.4", n_subsystems=ns)
        kw = dict(t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=1), timing=True,
                  solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10)
        best = {}
        for th in (1, 2):
            times = []
            for _ in range(repeats):
                r, t = run(s, threads=th, **kw)
                times.append(t)
            best[th] = (min(times), r.stats["timing"])
        t1, t2 = best[1][0], best[2][0]
        tm = best[2][1]
        print(f"  n_s = {ns:4d}: threads=1 {t1:7.3f} s, threads=2 {t2:7.3f} s, speed-up {t1 / t2:5.2f}x (target "
              f">= 1.7x); idle fraction (eq. 4.5) {best[1][1]['idle_fraction']:.2f} / {tm['idle_fraction']:.2f}; "
              f"barrier wait per thread {np.round(tm['thread_idle_time'], 3)} s, interface "
              f"{tm['interface_time']:.3f} s")


def cost_per_step(steps):
    print("== 2. cost per macro step against the number of units (10 bodies per unit, CVODE band, threads=1)")
    rows = []
    for ns in (10, 100, 1000):
        s = oscillator_chain(preset="table5.4", n_bodies=10 * ns, n_subsystems=ns)
        r, t = run(s, t_end=steps * 1e-8, H=1e-8, approximation=cosim.Lagrange(k=1),
                   solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=steps * 1e-8 / 2)
        per = t / steps
        rows.append((ns, per))
        print(f"  n_s = {ns:5d}: {per * 1e3:8.3f} ms per macro step, {per / ns * 1e6:7.2f} us per unit and step")
    (n0, c0), (n1, c1) = rows[0], rows[-1]
    print(f"  growth exponent log(cost ratio)/log(n_s ratio) = {math.log(c1 / c0) / math.log(n1 / n0):.2f} "
          "(1 = linear)")


def versus_monolithic(t_end):
    print("== 3. co-simulation vs monolithic CVODE (Table 5.4 chain, n_K = 1000, n_s = 100), error of all states "
          "at t_end relative to max |state|")
    s = oscillator_chain(preset="table5.4", n_subsystems=100)
    ref = cosim.simulate_monolithic(s, t_end=t_end, H=t_end / 10,
                                    solver=cosim.CVODE(rtol=1e-11, atol=1e-16, **BAND))
    xr, vr = chain_states(s, ref.X[-1:])

    def err(X):
        x, v = chain_states(s, X[-1:])
        return max(np.max(np.abs(x - xr)) / np.max(np.abs(xr)), np.max(np.abs(v - vr)) / np.max(np.abs(vr)))

    for ls in ("band", "dense"):
        for rtol in (1e-6, 1e-8):
            t0 = time.perf_counter()
            m = cosim.simulate_monolithic(s, t_end=t_end, H=t_end / 10,
                                          solver=cosim.CVODE(rtol=rtol, atol=rtol * 1e-3 * 3e-4,
                                                             linear_solver=ls))
            tm = time.perf_counter() - t0
            print(f"  monolithic {ls:5s} rtol={rtol:.0e}: {tm:8.3f} s, error {err(m.X):.2e}")
            if ls == "dense":
                break
    for H, k in ((1e-8, 1), (4e-9, 1), (4e-9, 2), (2e-9, 2)):
        for th in (1, 2):
            r, t = run(s, t_end=t_end, H=H, approximation=cosim.Lagrange(k=k), threads=th,
                       solver=cosim.CVODE(rtol=1e-8, atol=1e-13, **BAND), output_interval=t_end / 10)
            print(f"  co-sim H={H:.0e} κ={k} threads={th}: {t:8.3f} s, error {err(r.X):.2e}")
    # adaptive macro steps (kraft's exMD, §18.7 tolerance relations) and the implicit scheme
    for rtol in (1e-6, 1e-8):
        sc = cosim.StepControl(estimator="exMD", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol})
        for th in (1, 2):
            try:
                r, t = run(s, t_end=t_end, H=1e-11, approximation=cosim.Lagrange(k=0), step_control=sc, threads=th,
                           solver=cosim.CVODE(rtol=min(1e-8, rtol), atol=1e-13, **BAND), output_interval=t_end / 10,
                           last_step="shorten")
            except cosim.CosimError as e:
                print(f"  co-sim exMD rtol={rtol:.0e}: failed ({str(e)[:80]})")
                break
            print(f"  co-sim exMD rtol={rtol:.0e} threads={th}: {t:8.3f} s, error {err(r.X):.2e}, "
                  f"{r.stats['macro_steps']} macro steps (mean H {r.stats['mean_H']:.2e}), "
                  f"{r.stats['rejected_steps']} rejected")
    for H in (1e-8, 4e-9):
        r, t = run(s, t_end=t_end, H=H, approximation=cosim.Lagrange(k=2), threads=1,
                   scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=10, on_failure="continue"),
                   solver=cosim.CVODE(rtol=1e-8, atol=1e-13, **BAND), output_interval=t_end / 10)
        print(f"  co-sim implicit (fd) H={H:.0e} κ=2: {t:8.3f} s, error {err(r.X):.2e}, "
              f"{r.stats['iterations'] / r.stats['macro_steps']:.2f} corrector iterations per step")


def idle_vs_H(n_bodies, t_end, max_steps=1000):
    """T25: idle fraction (eq. 4.5) against H, wall and thread-CPU clocks, for EXTRIPOL-C1 (continuous input:
    CVODE keeps its history across macro points, restart="auto", so h_mic can grow to H) and Lagrange κ = 1
    (CVODE restarts at every macro point). The thesis: ≈ 16 / 7 / 1 micro steps per macro step at H = 1e-6 /
    5e-7 / 1e-7 s with the idle fraction peaking (38 %) at ≈ 7."""
    print(f"== 4. T25: idle fraction against H (Sec. 4.5 homogeneous chain, n_K = {n_bodies}, n_s = 10, κ = 1, "
          f"at most {max_steps} macro steps per H, threads = 1)")
    s = oscillator_chain(preset="table4.2", n_bodies=n_bodies)
    for name, ap in (("EXTRIPOL-C1 k=1", cosim.ExtrapolatedInterpolation(k=1, continuity=1)),
                     ("Lagrange k=1", cosim.Lagrange(k=1))):
        rows = []
        for H in (1e-6, 5e-7, 2e-7, 1e-7, 5e-8, 2e-8, 1e-8):
            T = min(t_end, max_steps * H)   # the fraction is a ratio
            try:
                r, t = run(s, t_end=T, H=H, approximation=ap, timing=True,
                           solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=T / 10)
            except cosim.CosimError as e:
                print(f"  {name} H = {H:.0e}: failed ({str(e)[:60]})")
                continue
            st = r.stats["subsystems"]
            ratio = np.mean([H / st[f"S{L}"]["mean_micro_step"] for L in range(1, 11)])
            tm = r.stats["timing"]
            cpu = tm.get("cpu_idle_fraction", float("nan"))
            rows.append((H, ratio, cpu))
            print(f"  {name} H = {H:.0e}: {t:7.2f} s, H/h_mic = {ratio:5.1f} micro steps per macro step, idle "
                  f"fraction {tm['idle_fraction']:.3f} (wall clocks), {cpu:.3f} (thread CPU clocks)", flush=True)
        if rows:
            H, ratio, cpu = max(rows, key=lambda x: x[2])
            last = rows[-1]
            print(f"  {name}: CPU idle fraction peaks at {cpu:.3f} (H = {H:.0e}, H/h_mic = {ratio:.1f}); at the "
                  f"smallest H ({last[0]:.0e}, H/h_mic = {last[1]:.1f}) {last[2]:.3f}")


def t18(t_end):
    print(f"== 5. T18: exMD, Table 5.4 chain (n_K = 1000, n_s = 100), rtol = 1e-6, t = {t_end:.0e} s of t_sim = 1e-3 s")
    s = oscillator_chain(preset="table5.4", n_subsystems=100)
    rtol = 1e-6
    sc = cosim.StepControl(estimator="exMD", rtol=rtol, atol={"pos": 1e-9, "vel": 1e-6, "u": 1e4 * rtol})
    r, t = run(s, t_end=t_end, H=1e-9, approximation=cosim.Lagrange(k=0), step_control=sc, threads=2,
               solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10, last_step="shorten")
    n, f = r.stats["macro_steps"], r.stats["rejected_steps"]
    k = np.bincount(np.asarray(r.k, dtype=int))
    print(f"  exMD: {n} macro steps, {f} failed, mean H {r.stats['mean_H']:.3e} s, κ counts {k.tolist()}, "
          f"{t:.1f} s; pro rata over t_sim: {n * 1e-3 / t_end:.3g} macro steps, {f * 1e-3 / t_end:.3g} failed "
          "(thesis ≈ 2.5e5 and ≈ 2e2 over 1e-3 s, ±50 %)")
    # imMD: the implicit scheme (fd interface Jacobian, corrector test on the coupling bodies' states, §6/§8.5)
    # under the same controller; a corrector that does not converge in n_cor^max = 10 rejects the step
    r2, t2 = run(s, t_end=t_end, H=1e-9, approximation=cosim.Lagrange(k=0), threads=2,
                 step_control=cosim.StepControl(estimator="imMD", rtol=rtol,
                                                atol={"pos": 1e-9, "vel": 1e-6, "u": 1e4 * rtol}),
                 scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
                 solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10, last_step="shorten")
    n2, f2, it = r2.stats["macro_steps"], r2.stats["rejected_steps"], r2.stats["iterations"]
    k2 = np.bincount(np.asarray(r2.k, dtype=int))
    print(f"  imMD: {n2} macro steps, {f2} failed, {it} corrector iterations ({it / n2:.2f} per step), mean H "
          f"{r2.stats['mean_H']:.3e} s, κ counts {k2.tolist()}, {t2:.1f} s; pro rata over t_sim: "
          f"{n2 * 1e-3 / t_end:.3g} macro steps, {it * 1e-3 / t_end:.3g} corrector iterations, "
          f"{f2 * 1e-3 / t_end:.3g} failed (thesis ≈ 1.6e4, ≈ 3.6e4, ≈ 5e2)")
    print(f"  exMD / imMD macro steps over the same t = {t_end:.0e} s: {n / n2:.2f} (thesis ≈ 15 over t_sim, "
          "accepted 5-40)")
    late = [float(np.mean(np.asarray(x.H)[np.cumsum(x.H) > 0.8 * t_end])) for x in (r, r2)]
    print(f"  mean H over the last 20 % of the run: exMD {late[0]:.3e} s, imMD {late[1]:.3e} s (ratio "
          f"{late[1] / late[0]:.2f}; thesis mean H over t_sim: exMD 4.0e-9 s, imMD 6.3e-8 s)")


def t16_full():
    print("== 6. T16 implicit and waveform rows over the full t_sim = 0.25 s (Table 5.1 nonlinear chain, κ = 2)")
    s = oscillator_chain(preset="table5.1")
    T = 0.25
    rows = [("implicit (fd, tol 1e-10, ≤ 10 corrector steps)",
             cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=10, on_failure="continue"), (1.25e-4, 2.5e-4)),
            ("waveform (Kraft ω = 0.3, tol 1e-10, ≤ 10 iterations)",
             cosim.WaveformRelaxation(omega=0.7, tol=1e-10, max_iter=10, on_failure="continue"), (5e-5, 1e-4))]
    for name, scheme, Hs in rows:
        for H in Hs:
            t0 = time.perf_counter()
            try:
                cosim.simulate(s, t_end=T, H=H, approximation=cosim.Lagrange(k=2), scheme=scheme,
                               solver=cosim.CVODE(rtol=1e-8, atol=1e-8), output_interval=T / 10)
                out = "stable"
            except (cosim.DivergenceError, cosim.SolverError) as e:
                out = f"unstable ({str(e)[:70]})"
            print(f"  {name} H = {H:.2e}: {out} [{time.perf_counter() - t0:.1f} s]", flush=True)


def t24(t_end, seeds):
    print(f"== 7. T24: exCV and imCV (rtol = 1e-5) on the Table 5.5 chain vs repartitioned, t = {t_end:.0e} s, "
          f"seeds {seeds}")
    rtol = 1e-5
    # (estimator, scheme, thesis macro steps over 1 s before -> after, thesis reduction, accepted range)
    rows = [("exCV", "jacobi", "2.94e6 -> 3.35e5", "8.8, accepted 4-20"),
            ("imCV", cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"), "7.09e5 -> 3.19e5",
             "2.2, accepted 1.5-4")]
    for estimator, scheme, thesis_steps, thesis_reduction in rows:
        print(f"   {estimator}")
        red = []
        for seed in seeds:
            steps = []
            for rep in (False, True):
                s = oscillator_chain(preset="table5.5", repartitioned=rep, seed=seed)
                r, t = run(s, t_end=t_end, H=1e-7, approximation=cosim.Lagrange(k=0), scheme=scheme,
                           solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10,
                           step_control=cosim.StepControl(estimator=estimator, rtol=rtol, atol={"u": 1e4 * rtol}),
                           last_step="shorten")
                steps.append(r.stats["macro_steps"])
            red.append(steps[0] / steps[1])
            print(f"  seed {seed}: {steps[0]} -> {steps[1]} macro steps, reduction {red[-1]:.2f} (pro rata over 1 s: "
                  f"{steps[0] / t_end:.3g} -> {steps[1] / t_end:.3g}; thesis {thesis_steps})", flush=True)
        print(f"  reduction factor: mean {np.mean(red):.2f}, min {np.min(red):.2f}, max {np.max(red):.2f} "
              f"(thesis {thesis_reduction})")


def speedup_schemes(t_end):
    print("== 8. threads=2 over threads=1 with exMD step control and with the implicit scheme (fd), Table 5.4 chain, "
          "n_K = 1000, n_s = 10, CVODE band units")
    s = oscillator_chain(preset="table5.4", n_subsystems=10)
    rtol = 1e-6
    cases = [("exMD rtol 1e-6", dict(H=1e-11, approximation=cosim.Lagrange(k=0), last_step="shorten",
                                      step_control=cosim.StepControl(estimator="exMD", rtol=rtol, atol={
                                          "pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}))),
             ("implicit fd κ=2 H=1e-8", dict(H=1e-8, approximation=cosim.Lagrange(k=2), scheme=cosim.Implicit(
                 jacobian="fd", tol=1e-10, max_iter=10, on_failure="continue")))]
    for name, kw in cases:
        t = {}
        for th in (1, 2):
            r, t[th] = run(s, t_end=t_end, threads=th, timing=True, output_interval=t_end / 10,
                           solver=cosim.CVODE(rtol=1e-8, atol=1e-13, **BAND), **kw)
        print(f"  {name}: threads=1 {t[1]:.3f} s, threads=2 {t[2]:.3f} s, speed-up {t[1] / t[2]:.2f}x "
              f"({r.stats['macro_steps']} macro steps)")


def _monitored(system, r):
    """The monitored variables of a chain (system.monitor: coupling bodies' x, v and λ) of run r, (n_t, n_mon)."""
    names = [n for kind in ("pos", "vel", "u") for n in system.monitor[kind]]
    return np.column_stack([np.asarray(r[n], dtype=float) for n in names])


def _nrmse(Y, R):
    """Mean over the monitored variables of the relative NRMSE sqrt(mean((y - y_ref)^2)) / (max y_ref - min y_ref)."""
    return float(np.mean(np.sqrt(np.mean((Y - R) ** 2, axis=0)) / np.maximum(np.ptp(R, axis=0), 1e-300)))


def _best(f, repeats):
    """(result, best wall time of ``repeats`` calls) of f() (None, inf on a CosimError)."""
    best, r = math.inf, None
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            r = f()
        except cosim.CosimError as e:
            return None, math.inf, str(e)[:70]
        best = min(best, time.perf_counter() - t0)
    return r, best, ""


def equal_accuracy(n_bodies=100, n_s=10, t_end=1e-6, targets=(1e-3, 1e-4, 1e-5), h_min=3e-10, repeats=1):
    """Co-simulation against the monolithic band-CVODE solve at equal accuracy (issue 11, kraft2021 §17).

    Table 5.4 chain scaled to ``n_bodies`` in ``n_s`` units, t_end = 1e-6 s (about ten periods of the stiffest
    element). Error: the mean over Kraft's monitored variables (coupling bodies' x, v and λ, ``system.monitor``) of
    the relative NRMSE at 100 output points against a monolithic band-CVODE reference with rtol = 1e-12. For each
    error target ε: the monolithic rtol is tuned (the loosest of 10^-1 ... 10^-11 in half decades whose error is
    <= ε) and compared with the cheapest co-simulation run whose error is <= ε among fixed H (H halved from 1e-8 down
    to ``h_min``; ZOH, Lagrange κ = 1, 2, EXTRIPOL-C1 k = 1 with CVODE restart="auto", which keeps the BDF history
    across macro points for the continuous EXTRIPOL input), adaptive exMD (§18.7 tolerance relations, rtol scanned)
    and the implicit scheme (fd interface Jacobian, κ = 2, fixed H). Units: CVODE band, rtol = 1e-9, atol = 1e-15
    (unit errors below the smallest target)."""
    print(f"== 9. equal accuracy: co-simulation vs monolithic band CVODE (Table 5.4 chain, n_K = {n_bodies}, "
          f"n_s = {n_s}, t = {t_end:.0e} s), mean relative NRMSE of the monitored variables")
    s = oscillator_chain(preset="table5.4", n_bodies=n_bodies, n_subsystems=n_s)
    dt = t_end / 100
    ref = cosim.simulate_monolithic(s, t_end, dt, solver=cosim.CVODE(rtol=1e-12, atol=1e-18, **BAND))
    R = _monitored(s, ref)
    unit = cosim.CVODE(rtol=1e-9, atol=1e-15, **BAND)
    runs = {}                       # method -> [(setting, error, wall time)]

    def record(method, setting, f):
        r, t, msg = _best(f, repeats)
        e = _nrmse(_monitored(s, r), R) if r is not None else math.inf
        runs.setdefault(method, []).append((setting, e, t))
        extra = f", {r.stats['macro_steps']} macro steps" if r is not None else f" ({msg})"
        print(f"  {method:22s} {setting:>16s}: error {e:9.2e}, {t:8.3f} s{extra}", flush=True)
        return e

    for e10 in range(2, 23):
        rtol = 10.0 ** (-e10 / 2)
        e = record("monolithic band", f"rtol {rtol:.1e}", lambda: cosim.simulate_monolithic(
            s, t_end, dt, solver=cosim.CVODE(rtol=rtol, atol=rtol * 1e-6, **BAND)))
        if e <= min(targets) / 3:
            break
    approximations = [("ZOH", cosim.ZOH()), ("Lagrange k=1", cosim.Lagrange(k=1)),
                      ("Lagrange k=2", cosim.Lagrange(k=2)),
                      ("EXTRIPOL-C1 k=1", cosim.ExtrapolatedInterpolation(k=1, continuity=1))]
    for name, ap in approximations:
        H = 1e-8
        while H >= h_min * (1 - 1e-9):
            e = record(f"fixed H, {name}", f"H {H:.2e}", lambda: cosim.simulate(
                s, t_end, H, approximation=ap, solver=unit, output_interval=dt, last_step="shorten"))
            if e <= min(targets):
                break
            H /= 2
    for rtol in (1e-3, 1e-4, 1e-5, 1e-6, 1e-7):
        sc = cosim.StepControl(estimator="exMD", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol})
        e = record("adaptive exMD", f"rtol {rtol:.0e}", lambda: cosim.simulate(
            s, t_end, 1e-11, approximation=cosim.Lagrange(k=0), step_control=sc, solver=unit, output_interval=dt,
            last_step="shorten"))
        if e <= min(targets):
            break
    H = 1e-8
    while H >= 4 * h_min * (1 - 1e-9):
        e = record("implicit fd k=2", f"H {H:.2e}", lambda: cosim.simulate(
            s, t_end, H, approximation=cosim.Lagrange(k=2), solver=unit, output_interval=dt, last_step="shorten",
            scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=10, on_failure="continue")))
        if e <= min(targets):
            break
        H /= 2
    print("  cheapest run with error <= target (wall time, and its ratio to the tuned monolithic solve):")
    for eps in targets:
        best = {}
        for method, rows in runs.items():
            key = "fixed H (best approximation)" if method.startswith("fixed H") else method
            ok = [(t, st, method) for st, e, t in rows if e <= eps]
            if ok and (key not in best or min(ok)[0] < best[key][0]):
                best[key] = min(ok)
        mono = best.get("monolithic band")
        line = []
        for key in ("fixed H (best approximation)", "adaptive exMD", "implicit fd k=2"):
            if key not in best:
                line.append(f"{key}: not reached")
            else:
                t, st, method = best[key]
                who = f" [{method[9:]}]" if key.startswith("fixed") else ""
                line.append(f"{key}{who} {st} {t:.3f} s = {t / mono[0]:.0f}x" if mono else f"{key} {t:.3f} s")
        print(f"  ε = {eps:.0e}: monolithic {mono[1]} {mono[0]:.3f} s; " + "; ".join(line), flush=True)


def t21_imMD(n_bodies, t_end=1.2e-4, rtol=1e-4):
    """T21's imMD row: κ → 0 during the impulses and κ >= 2 otherwise (rtol <= 1e-4). Table 5.9 chain (scaled to
    ``n_bodies``, n_s = 10), the first impulse at t_I = 1e-4 s (ramp δ_I = 1e-6 s), implicit fd with the corrector
    test on y; κ of the accepted steps before, on the ramp and after it."""
    print(f"== 10. T21 imMD: κ around the first impulse (Table 5.9, n_K = {n_bodies}, n_s = 10, rtol = {rtol:.0e}, "
          f"t = {t_end:.1e} s)")
    s = oscillator_chain(preset="table5.9", n_bodies=n_bodies, n_subsystems=10, seed=1)
    sc = cosim.StepControl(estimator="imMD", rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol},
                           k_max=5)
    r, t = run(s, t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=0), step_control=sc,
               scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"),
               solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), last_step="shorten", output_interval=t_end / 10)
    H, k = np.asarray(r.H), np.asarray(r.k, dtype=int)
    te = np.cumsum(H)
    print(f"  {r.stats['macro_steps']} macro steps, {r.stats['rejected_steps']} rejected, "
          f"{r.stats['iterations'] / r.stats['macro_steps']:.2f} corrector iterations per step, {t:.1f} s")
    for a, b, what in ((0.0, 1e-4, "before the impulse"), (1e-4, 1.01e-4, "on the ramp [t_I, t_I + δ_I]"),
                       (1.01e-4, t_end, "after the ramp")):
        m = (te > a) & (te <= b * (1 + 1e-12))
        if m.any():
            print(f"  {what:30s}: {int(m.sum()):4d} steps, κ counts {np.bincount(k[m], minlength=6).tolist()}, "
                  f"mean H {H[m].mean():.2e} s")


def t18_windows(t0s, sub_rtols, window=2e-6, t_sim=1e-3):
    """Section 13: T18's step counts over t_sim from short windows (the full run takes hours here). Each window starts
    from the monolithic state at t0 (band CVODE, rtol 1e-10) with the controller's start-up; the mean H over its
    second half stands for H(t0 + 1.5 µs), and the steps over t_sim are the first window's count plus the integral
    of 1/H with log-linear interpolation. A contiguous imMD run over [0, 1e-4] s (units at rtol 1e-9) took 1754
    steps where the windows predict 2406: the windows overstate imMD's steps by about 1.4."""
    print(f"== 13. T18 windows: Table 5.4 chain (n_K = 1000, n_s = 100), rtol 1e-6, {window:.0e} s from t0 = {t0s}")
    base = oscillator_chain(preset="table5.4", n_subsystems=100)
    rtol = 1e-6
    atol = {"pos": 1e-9, "vel": 1e-6, "u": 1e4 * rtol}
    starts = {}
    for t0 in t0s:
        if t0 > 0:
            z = cosim.simulate_monolithic(base, t0, t_eval=[0.0, t0],
                                          solver=cosim.CVODE(rtol=1e-10, atol=1e-14, **BAND)).X[-1]
            starts[t0] = oscillator_chain(preset="table5.4", n_subsystems=100, x0=z[0:2000:2], v0=z[1:2000:2])
        else:
            starts[t0] = base
    for sub in sub_rtols:
        counts = {}
        for est in ("exMD", "imMD"):
            kw = dict(scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y")) if est == "imMD" else {}
            first, mid, late = 0, [], []
            for t0 in t0s:
                r, t = run(starts[t0], t_end=window, H=1e-9, approximation=cosim.Lagrange(k=0), last_step="shorten",
                           step_control=cosim.StepControl(estimator=est, rtol=rtol, atol=atol), output_interval=window,
                           solver=cosim.CVODE(rtol=sub, atol=1e-3 * sub, **BAND), **kw)
                H = np.asarray(r.H)
                Hl = float(H[np.cumsum(H) > 0.5 * window].mean())
                if t0 == 0:
                    first = r.stats["macro_steps"]
                mid.append(t0 + 0.75 * window)
                late.append(Hl)
                print(f"  units rtol {sub:.0e}, {est}, t0 = {t0:.0e}: {r.stats['macro_steps']} steps, "
                      f"{r.stats['rejected_steps']} rejected ({r.stats.get('corrector_failures', 0)} corrector "
                      f"failures), late mean H {Hl:.2e} s [{t:.0f} s]", flush=True)
            tt = np.linspace(window, t_sim, 200001)
            Hi = np.exp(np.interp(tt, mid, np.log(late)))
            counts[est] = first + float(np.trapezoid(1.0 / Hi, tt))
        print(f"  units rtol {sub:.0e}: steps over t_sim exMD {counts['exMD']:.3g}, imMD {counts['imMD']:.3g}, ratio "
              f"{counts['exMD'] / counts['imMD']:.1f} (thesis ≈ 2.5e5, ≈ 1.6e4, ≈ 15)", flush=True)


def _load():
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def thread_scaling(t_end=5e-7, repeats=3, n_bodies=3200, n_s=64):
    """Section 11: wall speed-up of threads = n over 1 (interleaved, best of repeats) and the load-independent
    figures of the timing instrumentation (cosim/timing.py): serial fraction, units per thread, cpu_parallelism."""
    cores = os.cpu_count() or 1
    counts = [1] + [n for n in (2, 4, 8, 16, 32, 64) if n <= max(2, cores)]
    print(f"== 11. thread scaling (Table 5.4 chain, n_K = {n_bodies}, {n_s} CVODE band units, Jacobi, κ = 1, "
          f"H = 1e-8 s, t = {t_end:.0e} s; {cores} cores; best of {repeats}, interleaved)")
    s = oscillator_chain(preset="table5.4", n_bodies=n_bodies, n_subsystems=n_s)
    kw = dict(t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=1), timing=True,
              solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10)
    best, res, loads = {n: math.inf for n in counts}, {}, [_load()]
    for _ in range(repeats):
        for n in counts:
            r, t = run(s, threads=n, **kw)
            if t < best[n]:
                best[n], res[n] = t, (r, t)
    loads.append(_load())
    for n in counts[1:]:
        r0, r = res[1][0], res[n][0]
        assert np.array_equal(r.X, r0.X) and np.array_equal(r.Y, r0.Y) and np.array_equal(r.U, r0.U), n
    print(f"  load average (1 min) {loads[0]:.2f} before, {loads[1]:.2f} after ({cores} cores); results "
          f"bit-identical for threads = {counts}")
    tm1 = res[1][0].stats["timing"]
    s_loop = tm1["serial_fraction"]
    s_all = (res[1][1] - tm1["scheme_time"]) / res[1][1]   # with the Python setup and result assembly
    print(f"  threads = 1: {best[1]:.3f} s; master's serial part in the macro-step loop {tm1['serial_time']:.4f} s "
          f"(s = {s_loop:.4f}, interface {tm1['interface_time']:.4f} s), with setup and results s = {s_all:.4f}")
    from cosim import _core
    for n in counts[1:]:
        rt = math.inf
        for _ in range(3):   # the pool's own cost per macro step: 64 units that do nothing
            t0 = time.perf_counter()
            _core.pool_check(np.zeros(n_s), n, 2000)
            rt = min(rt, (time.perf_counter() - t0) / 2000)
        print(f"  threads = {n:2d}: pool round trip (hand-out and barrier) {rt * 1e6:.1f} µs per macro step "
              f"with {n_s} empty units")
    for n in counts[1:]:
        tm = res[n][0].stats["timing"]
        cpu = sum(res[n][0].stats["subsystems"][m]["cpu_time"] for m in s.names)
        quiet = (cpu + tm1["serial_time"]) / (tm["cpu_critical_time"] + tm1["serial_time"])
        print(f"  threads = {n:2d}: {best[n]:.3f} s, speed-up {best[1] / best[n]:5.2f}x (Amdahl bound "
              f"{n / (1 + (n - 1) * s_all):.2f}x); units per thread {tm['thread_units']}, taken from other lists "
              f"{tm['thread_stolen_units']}; cpu_parallelism {tm['cpu_parallelism']:.3f} -> {quiet:.2f}x expected on "
              f"{n} idle cores" + (" (target >= 1.9x)" if n == 2 else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes")
    ap.add_argument("--only", default="1,2,3,4,5,6,7,8,9,10,11,12", help="comma-separated sections to run (13: T18 "
                    "windows, not in the default)")
    ap.add_argument("--equal-accuracy", action="store_true", help="only section 9 (same as --only 9)")
    ap.add_argument("--threads", action="store_true", help="only section 11, thread scaling (same as --only 11)")
    ap.add_argument("--large", action="store_true",
                    help="only section 12, Kraft's Sec. 5.6/5.7 studies (benchmarks/large_chains.py; same as --only 12)")
    ap.add_argument("--t18-t-end", type=float, default=1e-5, help="simulated time of section 5 (thesis 1e-3 s)")
    a = ap.parse_args()
    q = a.quick
    only = ({9} if a.equal_accuracy else {11} if a.threads else {12} if a.large
            else {int(x) for x in a.only.split(",")})
    if 1 in only:
        speedup(t_end=5e-7 if q else 2e-6, repeats=1 if q else 3)
    if 2 in only:
        cost_per_step(steps=5 if q else 20)
    if 3 in only:
        versus_monolithic(t_end=1e-7 if q else 1e-6)
    if 4 in only:
        idle_vs_H(n_bodies=400 if q else 2000, t_end=2e-5 if q else 1e-4, max_steps=100 if q else 400)
    if 5 in only:
        t18(t_end=2e-7 if q else a.t18_t_end)
    if 6 in only and not q:
        t16_full()
    if 7 in only:
        t24(t_end=2e-3, seeds=[1] if q else [1, 2, 3, 4, 5])
    if 8 in only:
        speedup_schemes(t_end=1e-7 if q else 1e-6)
    if 9 in only:
        equal_accuracy(n_bodies=50 if q else 100, n_s=5 if q else 10, h_min=1e-9 if q else 3e-10,
                       repeats=1 if q else 3)
    if 10 in only:
        t21_imMD(n_bodies=50 if q else 1000)
    if 11 in only:
        thread_scaling(t_end=2e-7 if q else 5e-7, repeats=1 if q else 3)
    if 12 in only:
        large_studies(q)
    if 13 in only:
        t18_windows([0.0, 3e-4] if q else [0.0, 2e-5, 1e-4, 3e-4, 6e-4, 9e-4], [1e-6, 1e-9])


def large_studies(quick):
    """Section 12: Kraft's large-model studies (Sec. 5.6 and 5.7: scaling order P of the monolithic solvers, the
    co-simulation's time per part against the time model (4.1)-(4.4), speed-up at equal accuracy), kept in their own
    script; run here in a child process (QUICK=1 with --quick)."""
    print("== 12. Kraft's large-model studies (Sec. 5.6/5.7): benchmarks/large_chains.py", flush=True)
    env = dict(os.environ, QUICK="1" if quick else "0")
    subprocess.run([sys.executable, str(pathlib.Path(__file__).with_name("large_chains.py"))], env=env, check=True)


if __name__ == "__main__":
    main()
