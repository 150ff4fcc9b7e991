"""Benchmark: 60 s helicopter co-simulation at ΔT = 0.1 s (genser2020 §10.4, issue 13) against the monolithic solve.

    .venv/bin/python benchmarks/helicopter.py [--t-end 60] [--dt 0.1] [--repeat 5]

System: Westland Lynx (App. A) + reconstructed H∞ loop-shaping controller (16 states) + v1-like pilot commands
(a state-less Python subsystem evaluated at the communication points, with the one unused input the pre-step needs:
``models.helicopter(pilot_input=True)``). Subsystems integrated exactly. Prints wall times (best of --repeat):
* ZOH co-simulation vs the monolithic solve with the same pilot (CVODE BDF, rtol 1e-10, the Python pilot evaluated
  at every right-hand side), and vs the exact monolithic solve without pilot (one matrix exponential);
* the RLS pre-step (12 s learning, Table 3.12 settings, as examples/helicopter_study.py) vs ZOH: the pre-step's
  overhead factor, and vs the monolithic solves;
* where a ZOH macro step's time goes at ΔT = 0.01 s: with and without the Python pilot, and the pilot call alone.
"""
import argparse
import math
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


def rls_prestep():
    """The study's RLS pre-step: n_a = n_b = 1, λ = 0.996, P0 = 1e4, th_SBC 3.54, th_mod 0.21, useErrDiffEqu,
    timeLearning 12 s, timeSwitchphase 1 s."""
    return cosim.PreStep("discrete", cosim.sysid.RLS(1, 1, lam=0.996, P0=1e4), timeLearning=12.0,
                         timeSwitchphase=1.0, thresholdMbc2sbcCoupling=3.54, thresholdMbcNoInputOpt=0.21,
                         useErrDiffEqu=True)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--t-end", type=float, default=60.0)
    p.add_argument("--dt", type=float, default=0.1)
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args(argv)
    system = models.helicopter(pilot_input=True)
    free = models.helicopter(pilot=None)
    sim = dict(solver=SOLVER, divergence_growth=math.inf)
    t_zoh = best(lambda: cosim.simulate(system, a.t_end, a.dt, **sim), a.repeat)
    t_mono = best(lambda: cosim.simulate_monolithic(system, a.t_end, a.dt), a.repeat)
    t_mono_exact = best(lambda: cosim.simulate_monolithic(free, a.t_end, a.dt), a.repeat)
    t_pre = best(lambda: cosim.simulate(system, a.t_end, a.dt, coupling=rls_prestep(), **sim), a.repeat)
    n = int(round(a.t_end / a.dt))
    print(f"helicopter, t_end = {a.t_end} s, dT = {a.dt} s ({n} macro steps), best of {a.repeat}")
    print(f"  ZOH co-simulation               {t_zoh * 1e3:9.2f} ms  ({t_zoh / n * 1e6:.1f} us per macro step)")
    print(f"  monolithic, CVODE + pilot       {t_mono * 1e3:9.2f} ms  ratio ZOH/mono = {t_zoh / t_mono:.3f}")
    print(f"  monolithic, exact, no pilot     {t_mono_exact * 1e3:9.2f} ms  ratio ZOH/mono = "
          f"{t_zoh / t_mono_exact:.3f}")
    print(f"  RLS pre-step co-simulation      {t_pre * 1e3:9.2f} ms  ({t_pre / n * 1e6:.1f} us per macro step)  "
          f"overhead vs ZOH = {t_pre / t_zoh:.2f}x, vs mono (CVODE) = {t_pre / t_mono:.3f}, "
          f"vs mono (exact) = {t_pre / t_mono_exact:.3f}")
    # where the time of a ZOH macro step goes at dT = 0.01 s (the 24-state loop)
    h = 0.01
    m = int(round(a.t_end / h))
    t_z = best(lambda: cosim.simulate(system, a.t_end, h, **sim), max(1, a.repeat // 2))
    t_f = best(lambda: cosim.simulate(free, a.t_end, h, solver={"S1": cosim.Exact(), "S2": cosim.Exact()}),
               max(1, a.repeat // 2))
    t_2 = best(lambda: cosim.simulate(free, 2.0, h, solver={"S1": cosim.Exact(), "S2": cosim.Exact()}), a.repeat)
    t_p = best(lambda: [models.pilot_v1(0.01 * k) for k in range(1000)], a.repeat) / 1000
    print(f"  dT = {h} s, ZOH per macro step: {t_z / m * 1e6:.1f} us with the Python pilot, {t_f / m * 1e6:.1f} us "
          f"without (S1 + S2 only; first 2 s alone: {t_2 / 200 * 1e6:.1f} us), pilot_v1(t) call {t_p * 1e6:.1f} us")


if __name__ == "__main__":
    main()
