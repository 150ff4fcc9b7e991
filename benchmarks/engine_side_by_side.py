"""benchmarks/engine.py's workloads, this tree against an older commit, side by side in the same run (issue 24: the
engine not slower than before the API refactor; the commit before it is 66e7b5a).

Driver (default): builds the base commit's extension once into a temporary folder (``git archive`` + ``setup.py
build_ext --inplace``, kept for the next run), then runs one worker process per tree, alternating base and this tree
for ``--rounds`` rounds, and prints a table of the best time per workload over the rounds and the ratio now/base.
Times are thread CPU times (``time.thread_time``), which leave out waits for the CPU on a loaded machine.

    python benchmarks/engine_side_by_side.py [--base 66e7b5a] [--rounds 4] [--quick]

Worker: ``engine_side_by_side.py --worker TREE [--quick]`` runs the workloads with TREE's cosim and its own
benchmarks/engine.py helpers (``ring``, ``ring_ft``) and prints best-of-N times as JSON.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent.parent


def best(f, n):
    b = float("inf")
    for _ in range(n):
        t0 = time.thread_time()
        f()
        b = min(b, time.thread_time() - t0)
    return b


def workloads(repo, quick):
    """{workload: best thread CPU time} of the tree ``repo`` (imported from there)."""
    sys.path.insert(0, repo)
    os.chdir("/tmp")
    import cosim
    from cosim import models
    assert cosim.__file__.startswith(repo), cosim.__file__
    sys.path.insert(0, os.path.join(repo, "benchmarks"))
    import engine as E   # the tree's own benchmark helpers (ring, ring_ft)

    q = 10 if quick else 1           # quick: a tenth of the steps, fewer repeats
    rep = (lambda n: max(2, n // 2)) if quick else (lambda n: n)
    out = {}
    s2 = E.ring(2)
    z, eu = cosim.ZOH(), cosim.Euler()
    short = lambda: cosim.simulate(s2, 100 * 1e-4, 1e-4, approximation=z, solver=eu)
    for _ in range(200 // q):
        short()
    out["short 100 steps, 2 units [us]"] = 1e6 * min(best(lambda: [short() for _ in range(100)], 1) / 100
                                                      for _ in range(rep(15)))
    n, H = 100_000 // q, 1e-4
    out["two_units 1e5 steps [ms]"] = 1e3 * best(lambda: cosim.simulate(s2, n * H, H, approximation=z, solver=eu),
                                                 rep(7))
    out["two_units no recording [ms]"] = 1e3 * best(lambda: cosim.simulate(s2, n * H, H, approximation=z, solver=eu,
                                                                          output_interval=n * H), rep(7))
    for k in (2, 10, 100):
        s = E.ring(k)
        steps = 2_000_000 // k // q
        out[f"overhead N={k} [ns/step/unit]"] = 1e9 * best(lambda: cosim.simulate(
            s, steps * 1e-4, 1e-4, approximation=z, solver=eu), rep(3)) / (steps * k)
    for k in (10, 100, 1000):
        s = E.ring_ft(k)
        steps = max(10, 200_000 // k // q)
        out[f"scale N={k} [ns/step/unit]"] = 1e9 * best(lambda: cosim.simulate(
            s, steps * 1e-3, 1e-3, approximation=cosim.Lagrange(1), solver=cosim.Exact()), rep(3)) / (steps * k)
    tm = models.two_mass_oscillator(ck=1e5, dk=1e3)
    out["two-mass RK4x10 Lagrange1 0.2 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
        tm, 0.2 / q, 1e-4, scheme="jacobi", approximation=cosim.Lagrange(1), solver=cosim.RK4(substeps=10)), rep(5))
    out["two-mass CVODE EXTRIPOL-C1 auto 0.5 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
        tm, 0.5 / q, 1e-4, scheme="jacobi", approximation=cosim.ExtrapolatedInterpolation(2, 1),
        solver=cosim.CVODE(rtol=1e-8, atol=1e-10, restart="auto")), rep(3))
    out["two-mass GS CVODE Lagrange3 1 s [ms]"] = 1e3 * best(lambda: cosim.simulate(
        tm, 1.0 / q, 1e-4, scheme="gauss-seidel", approximation=cosim.Lagrange(3),
        solver=cosim.CVODE(rtol=1e-8, atol=1e-10), startup="kraft"), rep(3))
    out["monolithic CVODE adams 1 s [ms]"] = 1e3 * best(lambda: cosim.simulate_monolithic(
        tm, 1.0 / q, 1e-4, solver=cosim.CVODE(rtol=1e-7, atol=1e-9, method="adams")), rep(3))
    return out


def base_tree(commit):
    """The base commit's source with its extension built, in a temporary folder kept across runs."""
    sha = subprocess.run(["git", "-C", str(HERE), "rev-parse", "--short", commit], check=True, capture_output=True,
                         text=True).stdout.strip()
    tree = pathlib.Path(os.environ.get("TMPDIR", "/tmp")) / f"cosim_engine_base_{sha}"
    if not list(tree.glob("cosim/_core*.so")):
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(HERE), "archive", sha], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        print(f"building {sha} in {tree} ...", file=sys.stderr)
        subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tree, check=True,
                       stdout=subprocess.DEVNULL)
    return sha, str(tree)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="66e7b5a", help="the commit to compare with (default: before the API refactor)")
    ap.add_argument("--rounds", type=int, default=4, help="worker processes per tree, alternating (default 4)")
    ap.add_argument("--quick", action="store_true", help="a tenth of the steps and fewer repeats")
    ap.add_argument("--worker", metavar="TREE", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        print(json.dumps(workloads(os.path.abspath(a.worker), a.quick)))
        return
    sha, base = base_tree(a.base)
    trees = {f"base {sha}": base, "now": str(HERE)}
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    runs = {name: [] for name in trees}
    for r in range(a.rounds):
        for name, tree in trees.items():   # alternating: both trees see the same load, round by round
            cmd = [sys.executable, __file__, "--worker", tree] + (["--quick"] if a.quick else [])
            res = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
            runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    bestof = {name: {k: min(run[k] for run in rs) for k in rs[0]} for name, rs in runs.items()}
    b, n = bestof[f"base {sha}"], bestof["now"]
    w = max(len(k) for k in b)
    print(f"best of {a.rounds} processes per tree, thread CPU time{' (quick)' if a.quick else ''}; "
          f"ratio = now / base {sha} (< 1: faster now)")
    print(f"{'workload':<{w}}  {'base ' + sha:>12}  {'now':>10}  {'ratio':>6}")
    for k in b:
        print(f"{k:<{w}}  {b[k]:>12.3f}  {n[k]:>10.3f}  {n[k] / b[k]:>6.3f}")
    ratios = [n[k] / b[k] for k in b]
    geo = 1.0
    for x in ratios:
        geo *= x
    print(f"{'geometric mean of the ratios':<{w}}  {'':>12}  {'':>10}  {geo ** (1 / len(ratios)):>6.3f}")


if __name__ == "__main__":
    main()
