"""The workloads of benchmarks/engine.py in one process for one source tree, best-of-N thread CPU times as JSON (the
issue 24 side-by-side comparison against 66e7b5a; see benchmarks/README.md). Usage: engine_side_by_side.py TREE"""
import json, os, sys, time
repo = sys.argv[1]
sys.path.insert(0, repo)
os.chdir("/tmp")
import numpy as np
import cosim
from cosim import models
assert cosim.__file__.startswith(repo)
sys.path.insert(0, os.path.join(repo, "benchmarks"))
import engine as E   # the tree's own benchmark helpers (ring, ring_ft)

def best(f, n):
    b = float("inf")
    for _ in range(n):
        t0 = time.thread_time(); f(); b = min(b, time.thread_time() - t0)
    return b

out = {}
s2 = E.ring(2)
z, eu = cosim.ZOH(), cosim.Euler()
short = lambda: cosim.simulate(s2, 100 * 1e-4, 1e-4, approximation=z, solver=eu)
for _ in range(200): short()
out["short 100 steps, 2 units [us]"] = 1e6 * min(best(lambda: [short() for _ in range(100)], 1) / 100 for _ in range(15))
n, H = 100_000, 1e-4
out["two_units 1e5 steps [ms]"] = 1e3 * best(lambda: cosim.simulate(s2, n * H, H, approximation=z, solver=eu), 7)
out["two_units no recording [ms]"] = 1e3 * best(lambda: cosim.simulate(s2, n * H, H, approximation=z, solver=eu,
                                                                          output_interval=n * H), 7)
for k in (2, 10, 100):
    s = E.ring(k); steps = 2_000_000 // k
    out[f"overhead N={k} [ns/step/unit]"] = 1e9 * best(lambda: cosim.simulate(s, steps * 1e-4, 1e-4, approximation=z,
                                                                                 solver=eu), 3) / (steps * k)
for k in (10, 100, 1000):
    s = E.ring_ft(k); steps = 200_000 // k
    out[f"scale N={k} [ns/step/unit]"] = 1e9 * best(lambda: cosim.simulate(s, steps * 1e-3, 1e-3,
                                                     approximation=cosim.Lagrange(1), solver=cosim.Exact()), 3) / (steps * k)
tm = models.two_mass_oscillator(ck=1e5, dk=1e3)
out["two-mass RK4x10 Lagrange1 0.2 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
    tm, 0.2, 1e-4, scheme="jacobi", approximation=cosim.Lagrange(1), solver=cosim.RK4(substeps=10)), 5)
out["two-mass CVODE EXTRIPOL-C1 auto 0.5 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
    tm, 0.5, 1e-4, scheme="jacobi", approximation=cosim.ExtrapolatedInterpolation(2, 1),
    solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart="auto")), 3)
out["two-mass GS CVODE Lagrange3 1 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
    tm, 1.0, 1e-4, scheme="gauss-seidel", approximation=cosim.Lagrange(3),
    solver=cosim.CVODE(rtol=1e-8, atol=1e-10), startup="kraft"), 3)
out["monolithic CVODE adams 1 s [ms]"] = 1e3 * best(lambda: cosim.simulate_monolithic(
    tm, 1.0, 1e-4, solver=cosim.CVODE(rtol=1e-7, atol=1e-9, method="adams")), 3)
print(json.dumps(out))
