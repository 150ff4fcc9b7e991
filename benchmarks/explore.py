"""Benchmark: how long one change of a control of ``cosim.explore`` takes, against a naive full redraw.

    .venv/bin/python benchmarks/explore.py [--repeat 15]

Case (issue 27): the two-mass oscillator (ck = 2e5 N/m, dk = 200 Ns/m, force/displacement), t_end = 0.5 s, signals
x1 and F, ρ map over (ck: 31 values 1e4..1e7, H: 31 values), 500 output points, Exact integration.

Changes measured (each ``--repeat`` times; best and median of the panel's own ``update_times``, which cover the
co-simulation, the figure and the PNG):

* ``H``: the macro-step slider moves to another value (map and reference cached: one co-simulation, the moving
  artists redrawn);
* ``scheme (cached map)``: Jacobi <-> Gauss-Seidel after both maps were computed once (the map's colours redrawn);
* ``scheme (new map)``: the same with the map cache emptied before each change (the ρ map is computed: 961 points);
* ``parameter step``: the ck slider moves by one position (x1.26) up and down, with the references cached or
  the cache emptied before each change (one monolithic run more); the signal panels' limits are kept while they
  fit the reference (then only the curves are redrawn);
* ``parameter jump``: ck jumps by a factor of 8 back and forth (new limits: the signal panels are redrawn).

Besides the wall times the CPU time of the process per change is printed (all threads; on a loaded machine it is
closer to what the change costs on a quiet one).

The naive full redraw is what a callback without caches does on every change: a new panel for the new setting
(monolithic reference, ρ map, co-simulation, a new figure laid out and drawn, PNG): ``cosim.explore(...)``.
Target: one change < 0.2 s.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import cosim  # noqa: E402
from cosim import models  # noqa: E402

T_END = 0.5
CK = np.geomspace(1e4, 1e7, 31)
WALK = list(range(1, 9)) + list(range(7, 0, -1))  # slider positions of the parameter steps (relative to 10)


def build(ck):
    return models.two_mass_oscillator(ck, 200.0)


def panel(**kw):
    return cosim.explore(build(2e5), T_END, signals=["S1.x1", "S2.F"], ylabels={"S1.x1": "x1 [m]", "S2.F": "F [N]"},
                         parameter=("ck", CK, build), **kw)


def changes(p, kind, n):
    """Apply ``n`` changes of one kind; return their update times and the CPU times of this process [s]."""
    c = p.controls
    H = [v for _, v in c["H"].options]
    ck = [v for _, v in c["ck"].options]
    c["H"].value = H[8]
    c["scheme"].value = "gauss-seidel"
    c["scheme"].value = "jacobi"  # both maps cached
    del p.update_times[:]
    cpu = []
    for i in range(n):
        t0 = time.process_time()
        if kind == "H":
            c["H"].value = H[4 + (i * 7) % 20]
        elif kind.startswith("scheme"):
            if kind == "scheme (new map)":
                p._maps.clear()
            c["scheme"].value = "gauss-seidel" if c["scheme"].value == "jacobi" else "jacobi"
        elif kind.startswith("parameter"):
            if "new reference" in kind:
                p._references.clear()
            if "jump" in kind:
                c["ck"].value = ck[8 if i % 2 else 17]  # a factor of 8 in ck: new limits of the signal panels
            else:
                c["ck"].value = ck[10 + WALK[i % len(WALK)]]  # one slider step up or down
        cpu.append(time.process_time() - t0)
    return list(p.update_times), cpu


def naive(p, n):
    """A new panel per change, with the setting the H changes of ``changes`` visit."""
    H = [v for _, v in p.controls["H"].options]
    times, cpu = [], []
    for i in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        panel(H=H[4 + (i * 7) % 20])
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=15)
    args = ap.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    p = panel()
    naive_t, naive_cpu = naive(p, max(3, args.repeat // 3))
    nb, nm = min(naive_t), statistics.median(naive_t)
    print(f"{'change':32s} {'best [ms]':>10s} {'median [ms]':>12s} {'CPU median [ms]':>16s} "
          f"{'naive median / median':>22s}")
    worst = 0.0
    for kind in ("H", "scheme (cached map)", "scheme (new map)", "parameter step (cached reference)",
                 "parameter step (new reference)", "parameter jump (new reference)"):
        t, cpu = changes(p, kind, args.repeat)
        med = statistics.median(t)
        worst = max(worst, med)
        print(f"{kind:32s} {1e3 * min(t):10.1f} {1e3 * med:12.1f} {1e3 * statistics.median(cpu):16.1f} "
              f"{nm / med:21.1f}x")
    print(f"{'naive full redraw (new panel)':32s} {1e3 * nb:10.1f} {1e3 * nm:12.1f} "
          f"{1e3 * statistics.median(naive_cpu):16.1f}")
    print(f"slowest median change: {1e3 * worst:.1f} ms (target < 200 ms: {'met' if worst < 0.2 else 'NOT met'})")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
