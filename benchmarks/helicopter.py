"""Benchmark: 60 s helicopter co-simulation at ΔT = 0.1 s (genser2020 §10.4, issue 13) against the monolithic solve.

    .venv/bin/python benchmarks/helicopter.py [--t-end 60] [--dt 0.1] [--repeat 5]

System: Westland Lynx (App. A) + reconstructed H∞ loop-shaping controller (16 states) + v1-like pilot commands
(a state-less Python subsystem evaluated at the communication points). Subsystems integrated exactly.
Prints wall times (best of --repeat) and ratios:
* ZOH co-simulation vs the monolithic solve with the same pilot (CVODE BDF, rtol 1e-10, the Python pilot evaluated
  at every right-hand side), and vs the exact monolithic solve without pilot (one matrix exponential);
* the RLS pre-step (12 s learning, Table 3.12 settings) vs ZOH: the pre-step's overhead factor, once cosim.PreStep
  exists (issue 12); until then "not available".
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cosim  # noqa: E402
from cosim import models  # noqa: E402

SOLVER = {"S1": cosim.Exact(), "S2": cosim.Exact(), "pilot": cosim.Euler()}


def best(f, repeat):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--t-end", type=float, default=60.0)
    p.add_argument("--dt", type=float, default=0.1)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    system = models.helicopter()
    free = models.helicopter(pilot=None)
    t_zoh = best(lambda: cosim.simulate(system, a.t_end, a.dt, solver=SOLVER), a.repeat)
    t_mono = best(lambda: cosim.simulate_monolithic(system, a.t_end, a.dt), a.repeat)
    t_mono_exact = best(lambda: cosim.simulate_monolithic(free, a.t_end, a.dt), a.repeat)
    n = int(round(a.t_end / a.dt))
    print(f"helicopter, t_end = {a.t_end} s, dT = {a.dt} s ({n} macro steps), best of {a.repeat}")
    print(f"  ZOH co-simulation               {t_zoh * 1e3:9.2f} ms  ({t_zoh / n * 1e6:.1f} us per macro step)")
    print(f"  monolithic, CVODE + pilot       {t_mono * 1e3:9.2f} ms  ratio ZOH/mono = {t_zoh / t_mono:.3f}")
    print(f"  monolithic, exact, no pilot     {t_mono_exact * 1e3:9.2f} ms  ratio ZOH/mono = "
          f"{t_zoh / t_mono_exact:.3f}")
    PreStep = getattr(cosim, "PreStep", None)
    if PreStep is None:
        print("  RLS pre-step                    not available (cosim.PreStep, issue 12)")
        return
    try:
        kw = dict(ij="rls", M=1, N=1, timeLearning=12.0, timeSwitchphase=1.0, thresholdMbc2sbcCoupling=3.54,
                  thresholdMbcNoInputOpt=0.21, useErrDiffEqu=True)
        kw["lambda"] = 0.996
        coupling = PreStep(**kw)
    except TypeError as e:
        print(f"  RLS pre-step                    not available: cosim.PreStep does not take {sorted(kw)}: {e}")
        return
    t_pre = best(lambda: cosim.simulate(system, a.t_end, a.dt, solver=SOLVER, coupling=coupling), a.repeat)
    print(f"  RLS pre-step co-simulation      {t_pre * 1e3:9.2f} ms  overhead vs ZOH = {t_pre / t_zoh:.2f}x, "
          f"vs mono (CVODE) = {t_pre / t_mono:.3f}")


if __name__ == "__main__":
    main()
