"""CVODE keeps its history where the input stays continuous (issue 31 part 4): the restart modes and warm starts
side by side in the same run, interleaved, best of N wall clocks. Modes: "auto" (the default: re-initialise at every
macro point where the input may jump), "auto+warm" (warm_start=True: a restart begins with the step CVODE had
there), "continuous" (keep the history where the jump is below the tolerance), "continuous+warm", "never" (keep it
across every jump, the thesis' IDA).

    .venv/bin/python benchmarks/cvode_history.py            # about 20 minutes on a loaded machine
    .venv/bin/python benchmarks/cvode_history.py --quick    # about 2 minutes

1. T25 with the thesis' Lagrange κ = 1 (Sec. 4.5 homogeneous chain scaled to n_K = 400 (--quick) / 2000, n_s = 10,
   fixed H, CVODE band rtol = 1e-6, atol = 1e-9, threads = 1): micro steps per macro step H/h_mic, idle fraction
   (eq. 4.5 with thread-CPU clocks, and with the work counted in right-hand sides: deterministic), right-hand
   sides, restarts, wall time; the peak of both idle fractions over H for each mode.
2. Step control on the Table 5.4 chain (n_K = 1000, n_s = 10), Lagrange κ = 0, t = 2e-6 s, exCV and exMD at
   rtol = 1e-4 and 1e-6: macro steps, rejected steps, right-hand sides, restarts, error of all states at t_end
   against a tight monolithic reference, wall time, and the ratios auto / continuous.
Timings depend on the machine's load: both modes run interleaved, best of N.
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
from cosim.models import oscillator_chain  # noqa: E402

MODES = {"auto": dict(restart="auto"), "auto+warm": dict(restart="auto", warm_start=True),
         "continuous": dict(restart="continuous"), "continuous+warm": dict(restart="continuous", warm_start=True),
         "never": dict(restart="never")}


def cvode(mode, rtol=1e-6, atol=1e-9):
    return cosim.CVODE(rtol=rtol, atol=atol, linear_solver="band", **MODES[mode])


def counts(r):
    st = r.stats["subsystems"]
    return sum(v["rhs_calls"] for v in st.values()), sum(v["restarts"] for v in st.values())


def best_of(n, fn, modes):
    """Run fn n times for each mode, interleaved; the last result and the best wall time per mode."""
    out = {m: [None, math.inf] for m in modes}
    for _ in range(n):
        for m in modes:
            t0 = time.perf_counter()
            r = fn(m)
            out[m] = [r, min(out[m][1], time.perf_counter() - t0)]
    return out


def t25(n_bodies, t_end, max_steps, repeats, modes):
    print(f"== 1. T25 with Lagrange κ = 1: Sec. 4.5 chain, n_K = {n_bodies}, n_s = 10, CVODE band rtol = 1e-6, "
          f"at most {max_steps} macro steps per H, threads = 1, best of {repeats}")
    s = oscillator_chain(preset="table4.2", n_bodies=n_bodies)
    peak = {m: (0.0, None, None) for m in modes}
    peak_rhs = {m: (0.0, None, None) for m in modes}
    for H in (1e-6, 5e-7, 2e-7, 1e-7, 5e-8, 2e-8, 1e-8):
        T = min(t_end, max_steps * H)
        res = best_of(repeats, lambda m: cosim.simulate(s, T, H, approximation=cosim.Lagrange(k=1), timing=True,
                                                        solver=cvode(m), output_interval=T / 10,
                                                        divergence_growth=math.inf), modes)
        row = {}
        for m in modes:
            r, t = res[m]
            st = r.stats["subsystems"]
            ratio = float(np.mean([H / st[f"S{L}"]["mean_micro_step"] for L in range(1, 11)]))
            tm = r.stats["timing"]
            cpu = tm.get("cpu_idle_fraction", float("nan"))
            ridle = tm.get("rhs_idle_fraction", float("nan"))
            rhs, rst = counts(r)
            row[m] = (t, rhs)
            if cpu > peak[m][0]:
                peak[m] = (cpu, H, ratio)
            if ridle > peak_rhs[m][0]:
                peak_rhs[m] = (ridle, H, ratio)
            print(f"  H = {H:.0e} {m:15s}: H/h_mic = {ratio:5.1f}, idle fraction {cpu:.3f} (CPU) {ridle:.3f} "
                  f"(right-hand sides), {rhs:8d} right-hand sides, {rst:5d} restarts, {t:6.2f} s", flush=True)
        ratios(f"H = {H:.0e}", row)
    for m in modes:
        (cpu, H, ratio), (ri, Hr, ratio_r) = peak[m], peak_rhs[m]
        print(f"  {m}: CPU idle fraction peaks at {cpu:.3f} (H = {H:.0e}, H/h_mic = {ratio:.1f}), in right-hand "
              f"sides at {ri:.3f} (H = {Hr:.0e}, H/h_mic = {ratio_r:.1f})")


def ratios(label, row):
    """Right-hand sides and wall time of "auto" over each other mode."""
    if "auto" not in row:
        return
    ta, na = row["auto"]
    print(f"  {label} auto / mode: " + ", ".join(f"{m} right-hand sides {na / n:.2f}x wall {ta / t:.2f}x"
                                                for m, (t, n) in row.items() if m != "auto"))


def step_control(t_end, repeats, modes):
    print(f"== 2. step control, Table 5.4 chain (n_K = 1000, n_s = 10), Lagrange κ = 0, t = {t_end:.0e} s, "
          f"best of {repeats}")
    s = oscillator_chain(preset="table5.4", n_subsystems=10)
    ref = cosim.simulate_monolithic(s, t_end, solver=cosim.CVODE(rtol=1e-11, atol=1e-14, linear_solver="band"))
    scale = np.abs(ref.X[-1]).max()
    for est in ("exCV", "exMD"):
        for rtol in (1e-4, 1e-6):
            sc = cosim.StepControl(estimator=est, rtol=rtol, atol={"pos": 1e-3 * rtol, "vel": rtol, "u": 1e4 * rtol})
            res = best_of(repeats, lambda m: cosim.simulate(
                s, t_end, 1e-10, approximation=cosim.Lagrange(k=0), step_control=sc, last_step="shorten",
                solver=cvode(m, rtol=min(1e-6, rtol)), divergence_growth=math.inf), modes)
            row = {}
            for m in modes:
                r, t = res[m]
                rhs, rst = counts(r)
                err = np.max(np.abs(r.X[-1] - ref.X[-1])) / scale
                row[m] = (t, rhs)
                print(f"  {est} rtol = {rtol:.0e} {m:15s}: {r.stats['macro_steps']:5d} macro steps "
                      f"({r.stats['rejected_steps']} rejected), {rhs:7d} right-hand sides, {rst:5d} restarts, "
                      f"error {err:.2e}, {t:6.2f} s", flush=True)
            ratios(f"{est} rtol = {rtol:.0e}", row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="reduced sizes (seconds)")
    ap.add_argument("--repeats", type=int, default=None, help="best of N (default 3, 1 with --quick)")
    ap.add_argument("--modes", default=",".join(MODES), help=f"comma-separated subset of {', '.join(MODES)}")
    ap.add_argument("--part", choices=("all", "t25", "step-control"), default="all")
    a = ap.parse_args()
    n = a.repeats or (1 if a.quick else 3)
    modes = a.modes.split(",")
    if not set(modes) <= set(MODES):
        ap.error(f"--modes: unknown {sorted(set(modes) - set(MODES))}")
    if a.part in ("all", "t25"):
        t25(n_bodies=400 if a.quick else 2000, t_end=2e-5 if a.quick else 1e-4,
            max_steps=100 if a.quick else 400, repeats=n, modes=modes)
    if a.part in ("all", "step-control"):
        step_control(t_end=5e-7 if a.quick else 2e-6, repeats=n, modes=modes)


if __name__ == "__main__":
    main()
