"""Kraft's large-model studies (kraft2021 §16, §18.9-18.10; issue 32 part 3): the scaling order P of the
monolithic solve, the co-simulation's time per part against the time model (eqs. 4.1-4.4), and the speed-up
T_monolith / T_cosim at equal accuracy.

    QUICK=1 .venv/bin/python benchmarks/large_chains.py     # reduced sizes (< 1 min)
    .venv/bin/python benchmarks/large_chains.py             # the sizes of the README table (< ~10 min)
    .venv/bin/python benchmarks/large_chains.py --only 1,3

1. Scaling order P of the monolithic CVODE-BDF (rtol 1e-6, atol 1e-9: Kraft's IDA tolerances) on the Table 5.8
   chain (Sec. 5.7) with the dense and the band linear solver (the build has no KLU; for a chain the band solver
   is what KLU is to Kraft: O(n_K) per Newton solve), t = 5e-3 s of t_sim = 1 s. P of the time and of the time per
   solver step (the step count grows with n_K: more random forces and initial conditions, more events per second).
   Thesis: P = 3 dense, P = 1.2 sparse.
2. Sec. 5.6 chain (preset "table5.7", Table 5.7 lost in the source; values chosen, see its docstring), monolithic
   band CVODE without and with contacts on 0.3 % of the bodies, t = 1e-4 s: P and the mean step h̄ (thesis: P ≈ 1
   without, ≈ 1.3 with contacts; h̄ = 1.34e-6 s at n_K = 1e6).
3. Co-simulation time per part against the time model and the speed-up at equal accuracy, Table 5.8 chain,
   n_s = 10: implicit imMD (fd interface Jacobian, rtol 1e-3; the thesis' more efficient scheme for this model)
   with dense and band CVODE units. Parts from ``timing=True``: T^solv (slowest unit's solver time), T^idle (eq. 4.5),
   interface, save (the "sws dump"); the estimate (4.4) (1 + n̄_cor) T_monolith / n_s^P with the P of part 1 and
   F_solv = T^solv / estimate − 1. Equal accuracy: error at t_end (max over all positions and velocities relative to
   the largest) against a band reference at rtol 1e-11; the monolithic solve with the loosest rtol in 1e-3 … 1e-9
   that is at least as accurate as the co-simulation. Speed-up with (a) threads = 1 (wall), (b) threads = 2
   (wall, this 2-core machine), (c) one core per unit: T^solv + T^idle + interface + save, the run's time on
   n_s cores without communication (Kraft's setting, one MPI rank per subsystem).
4. The same for the Sec. 5.6 chain with Kraft's ex2H (explicit Jacobi, κ = 2, H = 1e-6 s fixed) and band units,
   n_s = 10 and 100, t = 5e-5 s.
Timings depend on the machine's load (2 cores shared here): best of ``REPEATS``, contenders side by side.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import cosim  # noqa: E402
from cosim.models import chain_states, oscillator_chain  # noqa: E402
from cosim.timing import cosim_time_estimate, scaling_order  # noqa: E402

QUICK = os.environ.get("QUICK", "") not in ("", "0")
REPEATS = 1 if QUICK else 2
TOL = dict(rtol=1e-6, atol=1e-9)      # Kraft's subsystem and monolithic IDA tolerances (atol^pos = 1e-3 rtol)
# a chain's Jacobian has half-bandwidth 3 (x_i, v_i interleaved; body i feels i − 1 and i + 1), also monolithic; given,
# because finding it from the right-hand side costs 2 evaluations per state (O(n²), ~5 s CPU at n_K = 1e4)
BANDWIDTH = {"dense": {}, "band": dict(bandwidth=(3, 3))}


def best_of(fn, repeats=REPEATS):
    """(result, best wall time, best process CPU time) of ``repeats`` calls of fn(). On this shared machine the
    CPU time of a single-threaded solve is its time on a core of its own."""
    wall, cpu, out = math.inf, math.inf, None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t0), min(cpu, time.process_time() - c0)
    return out, wall, cpu


def monolithic(system, t_end, linear_solver, rtol=TOL["rtol"], atol=TOL["atol"], repeats=REPEATS):
    return best_of(lambda: cosim.simulate_monolithic(system, t_end=t_end, H=t_end / 5, solver=cosim.CVODE(
        rtol=rtol, atol=atol, linear_solver=linear_solver, max_steps=10**7, **BANDWIDTH[linear_solver])), repeats)


def error_to(system, ref):
    """Error at t_end: max |z − z_ref| over all positions (velocities) relative to max |x_ref| (|v_ref|)."""
    xr, vr = chain_states(system, ref.X[-1:])

    def err(res):
        x, v = chain_states(system, res.X[-1:])
        return max(np.max(np.abs(x - xr)) / np.max(np.abs(xr)), np.max(np.abs(v - vr)) / np.max(np.abs(vr)))
    return err


def scaling_row(label, ns, times, steps):
    P, _ = scaling_order(ns, times)
    Ps, _ = scaling_order(ns, np.asarray(times) / np.asarray(steps))
    print(f"  {label}: P = {P:.2f} (time), {Ps:.2f} (time per solver step)")
    return P


def part1():
    """Scaling order P of the monolithic solve, Table 5.8 chain, dense vs band."""
    t_end = 5e-3
    sizes = {"dense": [25, 50, 100, 200] if QUICK else [50, 100, 200, 400],
             "band": [100, 1000, 10_000] if QUICK else [100, 1000, 10_000, 100_000]}
    print(f"== 1. monolithic CVODE-BDF scaling order, Table 5.8 chain (Sec. 5.7), rtol 1e-6, atol 1e-9, "
          f"t = {t_end:g} s of t_sim = 1 s")
    P = {}
    for ls, ns in sizes.items():
        times, steps = [], []
        for n in ns:
            s = oscillator_chain(preset="table5.8", n_bodies=n)
            r, w, t = monolithic(s, t_end, ls, repeats=1 if n >= 10_000 or (ls == "dense" and n >= 200) else REPEATS)
            k = r.stats["subsystems"]["monolithic"]["steps"]
            times.append(t), steps.append(k)
            print(f"  {ls:5s} n_K = {n:6d}: CPU {t:8.3f} s (wall {w:8.3f} s), {k:5d} steps, {t / k * 1e6:9.1f} us "
                  "per step")
        P[ls] = scaling_row(f"{ls} fit over n_K = {ns[0]} … {ns[-1]}", ns, times, steps)
    print(f"  (P fitted to the CPU times) thesis (Fig. 5.77): P = 3 dense, P = 1.2 sparse (KLU)")
    return P


def part2():
    """Sec. 5.6 chain: monolithic band CVODE without and with contacts."""
    t_end = 1e-4
    ns = [1000, 10_000] if QUICK else [1000, 10_000, 100_000]
    print(f"== 2. Sec. 5.6 chain (preset table5.7), monolithic band CVODE, rtol 1e-6, atol 1e-9, t = {t_end:g} s")
    for contacts in (False, True):
        times, steps = [], []
        for n in ns:
            s = oscillator_chain(preset="table5.7", n_bodies=n, contacts=contacts)
            r, w, t = monolithic(s, t_end, "band", repeats=1 if n >= 100_000 else REPEATS)
            k = r.stats["subsystems"]["monolithic"]["steps"]
            times.append(t), steps.append(k)
            nc = len(s.params["forces"]["contact"])
            print(f"  {'contacts' if contacts else 'no contacts':11s} n_K = {n:6d} ({nc:3d} contacts): CPU {t:7.3f} s "
                  f"(wall {w:7.3f} s), {k:4d} steps, mean step {t_end / k:.2e} s")
        scaling_row(f"{'with' if contacts else 'without'} contacts", ns, times, steps)
    print("  thesis (Fig. 5.73): P ≈ 1 without, P ≈ 1.3 with contacts (more solver steps per contact); h̄ = 1.34e-6 s")


def parts_of(res):
    """T^solv, T^idle, interface and save time of a timed run, and its time on one core per unit. Jacobi runs
    give T^solv and T^idle also from the units' thread CPU clocks, which a shared machine's preemption does not
    distort: those are used where present."""
    tm = res.stats["timing"]
    save = max(st.get("save_time", 0.0) for st in res.stats["subsystems"].values())
    cpu = "cpu_solver_time" in tm
    parts = dict(solver=tm["cpu_solver_time" if cpu else "solver_time"],
                 idle=tm["cpu_idle_time" if cpu else "idle_time"], interface=tm["interface_time"], save=save)
    return parts, sum(parts.values()), "CPU" if cpu else "wall"


class MonolithicSweep:
    """The monolithic solve with linear solver ``ls`` at rtol 1e-3 … 1e-9 (atol = 1e-3 rtol, Kraft's relation),
    each run once when first needed: (rtol, {clock: time}, error)."""

    RTOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9)

    def __init__(self, system, t_end, ls, err):
        self.system, self.t_end, self.ls, self.err, self.runs = system, t_end, ls, err, {}

    def at(self, rtol):
        if rtol not in self.runs:
            r, w, c = monolithic(self.system, self.t_end, self.ls, rtol=rtol, atol=rtol * 1e-3)
            self.runs[rtol] = (rtol, dict(wall=w, CPU=c), self.err(r))
        return self.runs[rtol]

    def as_accurate_as(self, error):
        """The loosest run with an error <= ``error``, or None."""
        return next((run for run in map(self.at, self.RTOLS) if run[2] <= error), None)


def equal_accuracy(system, t_end, variants, P, ls_list=("dense", "band")):
    """Part 3/4: for each linear solver and co-simulation variant (label, simulate kwargs, implicit?), the
    co-simulation's parts, eq. (4.2)/(4.4), and the speed-up over the monolithic solve at equal accuracy."""
    n_s = system.params["n_subsystems"]
    ref = monolithic(system, t_end, "band", rtol=1e-11, atol=1e-13, repeats=1)[0]
    err = error_to(system, ref)
    rows = []
    for ls in ls_list:
        sweep = MonolithicSweep(system, t_end, ls, err)
        _, t_same, e_same = sweep.at(1e-6)
        solver = cosim.CVODE(linear_solver=ls, max_steps=10**7, **BANDWIDTH[ls], **TOL)
        for label, kw, implicit in variants:
            run = {th: best_of(lambda th=th: cosim.simulate(system, t_end=t_end, solver=solver, threads=th,
                                                             timing=True, divergence_growth=math.inf,
                                                             output_interval=t_end / 5, **kw)) for th in (1, 2)}
            (res, t1, _), (_, t2, _) = run[1], run[2]
            e_c = err(res)
            parts, ideal, clock = parts_of(res)
            # stats["iterations"] counts the corrector iterations only (the predictor integration is the 1 of 4.4)
            n_cor = res.stats["iterations"] / res.stats["macro_steps"] if implicit else 0.0
            est = cosim_time_estimate(t_same[clock], n_s, P[ls], corrector_iterations=n_cor)
            eq = sweep.as_accurate_as(e_c)
            print(f"  {label}, {ls} units (n_s = {n_s}): co-sim error {e_c:.1e}, {res.stats['macro_steps']} macro "
                  f"steps" + (f", n̄_cor = {n_cor:.2f}" if implicit else "") + f"; wall {t1:.3f} s (threads 1), "
                  f"{t2:.3f} s (threads 2)")
            print(f"    parts ({clock} clocks): T^solv {parts['solver']:.3f} s, T^idle {parts['idle']:.3f} s, interface "
                  f"{parts['interface']:.3f} s, save {parts['save']:.3f} s -> {ideal:.3f} s on {n_s} cores")
            print(f"    eq. (4.{4 if implicit else 2}): T_monolith {t_same[clock]:.3f} s ({clock}; rtol 1e-6, error "
                  f"{e_same:.1e}), "
                  f"P = {P[ls]:.2f} -> {est:.4f} s; T^solv / estimate = {parts['solver'] / est:.1f}")
            if eq is None:
                print("    the monolithic solve is never as accurate down to rtol 1e-9: no equal-accuracy speed-up")
            else:
                w, c = eq[1]["wall"], eq[1][clock]
                print(f"    equal accuracy: monolithic rtol {eq[0]:.0e} (error {eq[2]:.1e}) wall {w:.3f} s, {clock} "
                      f"{c:.3f} s -> speed-up {w / t1:.2f}x (wall, threads 1), {w / t2:.2f}x (wall, threads 2), "
                      f"{c / ideal:.2f}x ({clock}, {n_s} cores)")
            rows.append(dict(label=label, ls=ls, n_s=n_s, err=e_c, t1=t1, t2=t2, ideal=ideal, est=est,
                             t_eq=eq and eq[1]))
    return rows


def part3(P):
    n = 100 if QUICK else 400
    t_end = 5e-3
    print(f"== 3. Table 5.8 chain n_K = {n}, n_s = 10, imMD (implicit, fd, rtol 1e-3), t = {t_end:g} s: time per "
          "part, eq. (4.4), speed-up at equal accuracy")
    s = oscillator_chain(preset="table5.8", n_bodies=n)
    rtol = 1e-3
    kw = dict(H=1e-9, approximation=cosim.Lagrange(k=0), last_step="shorten",
              step_control=cosim.StepControl(estimator="imMD", rtol=rtol,
                                             atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol}),
              scheme=cosim.Implicit(jacobian="fd", tol=rtol, max_iter=10, convergence="y"))
    return equal_accuracy(s, t_end, [("imMD", kw, True)], P)


def part4(P):
    n = 2000 if QUICK else 10_000
    t_end = 2e-5 if QUICK else 5e-5
    print(f"== 4. Sec. 5.6 chain (table5.7) n_K = {n}, explicit Jacobi, H = 1e-6 s, κ = 2, band units, t = {t_end:g} s: "
          "ex2H (Lagrange: CVODE restarts at every macro point) and EXTRIPOL-C1 (CVODE keeps its history)")
    variants = [("ex2H", dict(H=1e-6, approximation=cosim.Lagrange(k=2)), False),
                ("exH EXTRIPOL-C1", dict(H=1e-6, approximation=cosim.ExtrapolatedInterpolation(k=2, continuity=1)),
                 False)]
    rows = []
    for n_s in (10, 100):
        for contacts in (False, True):
            s = oscillator_chain(preset="table5.7", n_bodies=n, n_subsystems=n_s, contacts=contacts)
            print(f"  -- n_s = {n_s}, {'with' if contacts else 'without'} contacts")
            rows += equal_accuracy(s, t_end, variants, P, ls_list=("band",))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="1,2,3,4", help="comma-separated parts (default all)")
    only = {int(p) for p in ap.parse_args().only.split(",")}
    t0 = time.perf_counter()
    P = part1() if 1 in only else {"dense": 3.0, "band": 1.0}
    if 2 in only:
        part2()
    if 3 in only:
        part3(P)
    if 4 in only:
        part4(P)
    print(f"total {time.perf_counter() - t0:.1f} s; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
