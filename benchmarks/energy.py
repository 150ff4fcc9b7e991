"""Quarter truck (OSP parameters): error against wall time for fixed H, ECCO (ZOH and Lagrange(1)), NEPCE + ECCO
and Kraft's exCV controller (cosim.StepControl), drop test on a flat road and the sine road. Prints, per setting,
the macro steps, the wall time and the max error of the chassis and wheel velocities against the monolithic (exact)
solution, and the error ratio against fixed H at the same number of macro steps (with the same coupling).

libcosim's ECCO (libcosimpy) is not compared: see the message printed at the end.

Usage: .venv/bin/python benchmarks/energy.py [--quick]
"""
import subprocess
import sys
import time

import numpy as np

import cosim
from cosim import models

BOND = [("chassis.v", "chassis.F", "wheel.F", "wheel.v")]
T = 4.0


def timed(fn, repeat=3):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return out, best


def error(system, res, x0):
    ref = cosim.simulate_monolithic(system, T, t_eval=res.t, x0=x0)
    return max(np.max(np.abs(res[s] - ref[s])) for s in ("chassis.vc", "wheel.vw"))


def main(quick=False):
    rtols = (1e-2, 1e-3) if quick else (1e-2, 1e-3, 1e-4)
    cases = [("drop test (flat road, 10 cm deflection)", models.quarter_truck(road_amplitude=0.0),
              {"chassis": [0.1, 0.0]}),
             ("sine road (5 cm, 2 Hz)", models.quarter_truck(), None)]
    print(f"quarter truck, T = {T}, Exact units, Jacobi; error = max |v - v_mono| (chassis, wheel)")
    for title, truck, x0 in cases:
        print(f"\n== {title}")
        print(f"{'method':<15} {'rtol':>7} {'steps':>7} {'wall':>10} {'error':>10} "
              f"{'fixed wall':>10} {'fixed err':>10} {'err ratio':>9}")
        settings = []
        for rtol in rtols:
            ctl = cosim.ECCO(BOND, rtol=rtol, atol=rtol, H_min=1e-5, H_max=1e-2)
            settings += [("ECCO ZOH", rtol, dict(approximation=cosim.ZOH(), step_control=ctl)),
                         ("ECCO Lagrange1", rtol, dict(approximation=cosim.Lagrange(1), step_control=ctl)),
                         ("NEPCE+ECCO", rtol, dict(coupling=cosim.NEPCE(filter=1e-3), step_control=ctl))]
        for rtol in rtols:
            for k_max in (0, 2):
                ctl = cosim.StepControl(estimator="exCV", rtol=rtol, atol=rtol, k_max=k_max, H_min=1e-6, H_max=1e-2)
                settings.append((f"exCV k<={k_max}", rtol, dict(approximation=cosim.Lagrange(k_max),
                                                                 step_control=ctl)))
        for name, rtol, kw in settings:
            try:
                res, tw = timed(lambda: cosim.simulate(truck, T, 1e-4, solver=cosim.Exact(), x0=x0, **kw))
            except cosim.SolverError as e:
                print(f"{name:<15} {rtol:>7.0e} failed: {str(e)[:80]}")
                continue
            n = res.stats["macro_steps"]
            fixed_kw = {k: v for k, v in kw.items() if k != "step_control"}
            fixed, tf = timed(lambda: cosim.simulate(truck, T, T / n, solver=cosim.Exact(), x0=x0,
                                                     last_step="shorten", divergence_growth=np.inf, **fixed_kw))
            ee, ef = error(truck, res, x0), error(truck, fixed, x0)
            print(f"{name:<15} {rtol:>7.0e} {n:>7d} {tw * 1e3:>8.1f}ms {ee:>10.3e} "
                  f"{tf * 1e3:>8.1f}ms {ef:>10.3e} {ee / ef:>9.2f}")
        print("fixed H (ZOH):")
        for H in (1e-3, 2.5e-4, 6.25e-5):
            fixed, tf = timed(lambda: cosim.simulate(truck, T, H, solver=cosim.Exact(), x0=x0))
            print(f"{'  H = %.3g' % H:<15} {'':>7} {round(T / H):>7d} {'':>10} {'':>10} {tf * 1e3:>8.1f}ms "
                  f"{error(truck, fixed, x0):>10.3e}")
    try:
        import libcosimpy  # noqa: F401
        print("libcosimpy: installed, but not compared: it runs FMUs only; building the quarter-truck halves as FMI 2 "
              "CS FMUs and configuring libcosim's ECCO through libcosimpy was not done (benchmarks/README.md).")
    except ImportError:
        print("libcosimpy: not installed (`pip install libcosimpy` did not succeed here): no comparison.")


if __name__ == "__main__":
    main("--quick" in sys.argv)
