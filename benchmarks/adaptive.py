"""Adaptive macro steps (kraft2021 §8-§11) against the best fixed-H run at equal global error, on Kraft's two-mass
models M1 (exact units), M2 and M3 (CVODE rtol 1e-10).

For every model: the adaptive run (exMD, order control up to κ_max = 5, Γ = 6, [0.5, 1.5], dead zone) gives a global
error E = NRMSE (kraft2021 eq. 5.1/5.2) of the coupling-body states against the monolithic reference; then fixed-H runs
(uniform grid with Kraft's start-up ramp, Listing 5.1) with κ = 1..4 and H = t_end/n, n growing by 1.25x, find the
fewest macro steps that reach E. Printed: macro steps, rejections, unit integrations and wall times of both, and the
ratio of macro steps. Targets (issue 9): >= 5x fewer macro steps on M3, >= 2.5x on M1; M2 reported.

    .venv/bin/python benchmarks/adaptive.py [--quick]
"""
import sys
import time

import numpy as np

import cosim
from cosim import control

QUICK = "--quick" in sys.argv
T_END = 0.1
N_MAX = 20000 if QUICK else 400000


def err(res, solver):
    ref = cosim.simulate_monolithic(res.system, t_end=res.t[-1], t_eval=res.t, solver=solver)
    return control.nrmse(res.X[:, :4], ref.X[:, :4])


def integrations(res):
    n_units = sum(1 for s in res.system.subsystems if s.nx > 0)
    return (res.stats["macro_steps"] + res.stats["rejected_steps"]) * n_units + res.stats.get("comparative_integrations", 0)


def best_fixed(system, solver, E):
    best = None
    for k in (1, 2, 3, 4):
        n = 16
        while n <= N_MAX and (best is None or n < best[0]):
            H = T_END / n
            t0 = time.perf_counter()
            try:
                res = cosim.simulate(system, T_END, H, approximation=cosim.Lagrange(k=k), startup="kraft", solver=solver,
                                     divergence_growth=float("inf"))
                e = err(res, solver)
            except cosim.CosimError:
                e = np.inf
            wall = time.perf_counter() - t0
            if e <= E:
                best = (res.stats["macro_steps"], k, H, e, wall, integrations(res))
                break
            n = int(np.ceil(n * 1.25))
    return best


def main():
    print(f"{'model':5} {'rtol':>7} {'E (NRMSE)':>10} {'adaptive steps':>14} {'rej':>4} {'integr.':>8} {'wall s':>7} | "
          f"{'fixed steps':>11} {'κ':>2} {'H':>9} {'integr.':>8} {'wall s':>7} | {'ratio':>6}")
    for name, rtol in (("M1", 1e-6), ("M2", 1e-5), ("M3", 1e-5)):
        system = cosim.models.kraft_two_mass(name)
        solver = cosim.Exact() if name == "M1" else cosim.CVODE(rtol=1e-10, atol=1e-12)
        t0 = time.perf_counter()
        res = cosim.simulate(system, T_END, 1e-6, solver=solver, divergence_growth=float("inf"),
                             step_control=cosim.StepControl("exMD", rtol))
        wall = time.perf_counter() - t0
        E = err(res, solver)
        b = best_fixed(system, solver, E)
        steps = res.stats["macro_steps"]
        line = (f"{name:5} {rtol:7.0e} {E:10.3e} {steps:14d} {res.stats['rejected_steps']:4d} {integrations(res):8d} "
                f"{wall:7.3f} | ")
        if b is None:
            line += f"{'> ' + str(N_MAX):>11} {'':>2} {'':>9} {'':>8} {'':>7} | {'> %.1f' % (N_MAX / steps):>6}"
        else:
            line += f"{b[0]:11d} {b[1]:2d} {b[2]:9.2e} {b[5]:8d} {b[4]:7.3f} | {b[0] / steps:6.1f}"
        print(line, flush=True)
    print("step doubling (Richardson) baseline: not implemented (see benchmarks/README.md)")


if __name__ == "__main__":
    main()
