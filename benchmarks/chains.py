"""Oscillator chains (kraft2021 §16, §18; issue 11): parallel units, cost per macro step, co-simulation against the
monolithic band-CVODE solve, idle time against H.

    .venv/bin/python benchmarks/chains.py            # the sizes of the issue (a few minutes)
    .venv/bin/python benchmarks/chains.py --quick    # reduced (seconds)

1. speed-up of threads=2 over threads=1: the Table 5.4 chain (n_K = 1000) in 10 and 100 units with CVODE units
   (band linear solver, bandwidth 3), explicit Jacobi, Lagrange κ = 1, H = 1e-8 s; target >= 1.7x on 2 cores; the
   idle fraction (eq. 4.5) of each run.
2. cost per macro step against the number of units (10, 100, 1000; 10 bodies per unit): linear means a constant
   cost per unit and macro step.
3. co-simulation (fixed H) against monolithic CVODE with the band solver (and the dense solver, the reference a user
   would otherwise have) at equal accuracy: error of all states at t_end against a tight monolithic reference.
4. T25 (qualitative): idle fraction against H on the homogeneous Sec. 4.5 chain (scaled down): it peaks at
   intermediate H and is smallest when h_mic = H.
Timings depend on the machine's load: the lead re-runs them on a quiet machine.
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


def idle_vs_H(n_bodies, t_end):
    print(f"== 4. T25: idle fraction against H (Sec. 4.5 homogeneous chain, n_K = {n_bodies}, n_s = 10, κ = 1)")
    s = oscillator_chain(preset="table4.2", n_bodies=n_bodies)
    for H in (1e-6, 5e-7, 2e-7, 1e-7):
        try:
            r, t = run(s, t_end=t_end, H=H, approximation=cosim.Lagrange(k=1), timing=True,
                       solver=cosim.CVODE(rtol=1e-6, atol=1e-9, **BAND), output_interval=t_end / 10)
        except cosim.CosimError as e:
            print(f"  H = {H:.0e}: failed ({str(e)[:60]})")
            continue
        st = r.stats["subsystems"]
        ratio = np.mean([H / st[f"S{L}"]["mean_micro_step"] for L in range(1, 11)])
        print(f"  H = {H:.0e}: {t:7.2f} s, H/h_mic = {ratio:5.1f} micro steps per macro step, idle fraction "
              f"{r.stats['timing']['idle_fraction']:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes")
    a = ap.parse_args()
    q = a.quick
    speedup(t_end=5e-7 if q else 2e-6, repeats=1 if q else 3)
    cost_per_step(steps=5 if q else 20)
    versus_monolithic(t_end=1e-7 if q else 1e-6)
    idle_vs_H(n_bodies=400 if q else 2000, t_end=2e-5 if q else 1e-4)
    print("== T18 (exMD/imMD macro-step counts on the Table 5.4 chain) needs the step-size controller and the implicit "
          "scheme (other issues): not run here.")


if __name__ == "__main__":
    main()
