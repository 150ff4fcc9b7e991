"""Interface Jacobians of the implicit scheme on nonlinear units (issue 31 part 3; kraft2021 App. A): fd, sap,
sap2 and exact (the forward sensitivity equations) side by side.

1. kraft's M2 (cosim.models.kraft_two_mass("M2"): cubic and 7th-power elements, a stateless nonlinear cut element),
   κ = 2, H = 4e-4 s, t_end = 0.02 s, tol 1e-11, RK4 (h = 1e-5 s) and CVODE (rtol 1e-10) units.
2. genser's nonlinear two-mass oscillator (two_mass_oscillator(nonlinear=True): feed-through unit with 2 inputs),
   κ = 1, H = 1e-4 s, t_end = 0.01 s, tol 1e-10, the same two integrators.
Per Jacobian: mean corrector iterations per macro step, wall time (best of 5, side by side in one run) and the
largest state difference to the fd run relative to max|x|.

Usage: .venv/bin/python benchmarks/jacobians.py
"""
import time
import warnings

import numpy as np

import cosim

JACOBIANS = ("fd", "sap", "sap2", "exact")


def case(title, sys, t_end, H, kappa, tol):
    print(title)
    print(f"{'units':14s} {'jacobian':8s} {'it/step':>8s} {'wall [s]':>9s} {'|x - x_fd|/max|x|':>18s}")
    for uname, solver in (("RK4 h=1e-5", cosim.RK4(h=1e-5)), ("CVODE 1e-10", cosim.CVODE(rtol=1e-10, atol=1e-12))):
        res, wall = {}, {j: np.inf for j in JACOBIANS}
        for _ in range(5):
            for j in JACOBIANS:
                t0 = time.perf_counter()
                try:
                    res[j] = cosim.simulate(sys, t_end, H, solver=solver, approximation=cosim.Lagrange(kappa),
                                            scheme=cosim.Implicit(jacobian=j, tol=tol, max_iter=30))
                except cosim.SolverError as e:
                    res[j] = e
                wall[j] = min(wall[j], time.perf_counter() - t0)
        for j in JACOBIANS:
            r = res[j]
            if isinstance(r, Exception):
                print(f"{uname:14s} {j:8s} failed: {str(r)[:60]}")
                continue
            it = r.stats["iterations"] / r.stats["macro_steps"]
            dx = np.max(np.abs(r.X - res["fd"].X)) / np.max(np.abs(res["fd"].X))
            print(f"{uname:14s} {j:8s} {it:8.3f} {wall[j]:9.4f} {dx:18.1e}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    case("1. kraft M2, kappa = 2, H = 4e-4 s, t_end = 0.02 s, tol 1e-11", cosim.models.kraft_two_mass("M2"), 0.02,
         4e-4, 2, 1e-11)
    case("2. genser nonlinear two-mass, kappa = 1, H = 1e-4 s, t_end = 0.01 s, tol 1e-10",
         cosim.models.two_mass_oscillator(nonlinear=True), 0.01, 1e-4, 1, 1e-10)
