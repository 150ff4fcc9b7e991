"""Quarter truck (OSP parameters): error against wall time for fixed H and ECCO (ZOH and Lagrange(1)), drop test on
a flat road and the sine road. Prints, per setting, the macro steps, the wall time and the max error of the chassis
and wheel velocities against the monolithic (exact) solution, and the ECCO/fixed error ratio at the same number of
macro steps.

Not measured here (reported as such): Kraft's exCV controller (issue 9, not on this branch), NEPCE + ECCO (issue 12,
not on this branch) and libcosim's ECCO (`pip install libcosimpy` result is printed at the end).

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
        print(f"{'approximation':<12} {'rtol':>7} {'steps':>7} {'ECCO wall':>10} {'ECCO err':>10} "
              f"{'fixed wall':>10} {'fixed err':>10} {'err ratio':>9}")
        for approx in (cosim.ZOH(), cosim.Lagrange(1)):
            for rtol in rtols:
                ctl = cosim.ECCO(BOND, rtol=rtol, atol=rtol, H_min=1e-5, H_max=1e-2)
                res, tw = timed(lambda: cosim.simulate(truck, T, 1e-4, solver=cosim.Exact(), x0=x0,
                                                       approximation=approx, step_control=ctl))
                n = res.stats["macro_steps"]
                fixed, tf = timed(lambda: cosim.simulate(truck, T, T / n, solver=cosim.Exact(), x0=x0,
                                                         approximation=approx, last_step="shorten"))
                ee, ef = error(truck, res, x0), error(truck, fixed, x0)
                print(f"{type(approx).__name__:<12} {rtol:>7.0e} {n:>7d} {tw * 1e3:>8.1f}ms {ee:>10.3e} "
                      f"{tf * 1e3:>8.1f}ms {ef:>10.3e} {ee / ef:>9.2f}")
    print("\nKraft exCV controller: not on this branch (issue 9); NEPCE + ECCO: not on this branch (issue 12).")
    try:
        import libcosimpy  # noqa: F401
        print("libcosimpy: pip-installs (0.0.6, has ecco_algorithm), but it runs FMUs only and the quarter-truck FMUs "
              "of libcosim's test data are not available here: no wall-time comparison.")
    except ImportError:
        print("libcosimpy: not installed (`pip install libcosimpy` did not succeed here): no comparison.")


if __name__ == "__main__":
    main("--quick" in sys.argv)
