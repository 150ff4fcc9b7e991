"""Benchmark: reference LAPACK/BLAS (Debian's, what `make test` and the wheels link) against the OpenBLAS of
SciPy's wheels (PyPI ``scipy-openblas32``), in one run on the same machine.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/blas.py [--repeat 5]

Builds the extension twice into a temporary folder (``setup.py build_ext``; ``COSIM_BLAS=scipy-openblas32`` for
the second), then times the LAPACK-heavy public paths with each build in fresh subprocesses, alternating, best of
--repeat: MOESP (QR + SVD), a stability map (matrix exponentials by dgemm, eigenvalues), the implicit scheme (LU
solves of the coupling Jacobian), and a plain explicit run as the control. Prints the times, the ratio
OpenBLAS / reference (< 1: OpenBLAS faster) and whether each result is bit-identical between the two builds.
Needs scipy-openblas32 (`pip install scipy-openblas32`; `make bench` installs it with the [bench] extra).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def workloads():
    """name -> zero-argument callable returning a float array (imports the cosim found on sys.path)."""
    import cosim
    from cosim import analysis, models, sysid

    rng = np.random.default_rng(0)
    A = np.array([[0.9, 0.2, 0, 0], [-0.2, 0.9, 0, 0], [0, 0, 0.5, 0.3], [0, 0, -0.3, 0.6]])
    B, C = rng.standard_normal((4, 2)), rng.standard_normal((2, 4))
    u = rng.standard_normal((20000, 2))
    x, y = np.zeros(4), np.empty((len(u), 2))
    for k in range(len(u)):
        y[k] = C @ x
        x = A @ x + B @ u[k]
    two_mass = models.two_mass_oscillator(ck=2e5, dk=200, coupling="force/displacement")
    ck, dk = np.geomspace(1e3, 1e6, 24), np.geomspace(1e0, 1e4, 24)
    return {
        "moesp N=20000 (dgeqrf, dgesvd)": lambda: sysid.moesp(u, y, order=4, block_rows=8).A.ravel(),
        "stability map 24x24 (dgemm, eig)": lambda: np.asarray(analysis.two_mass_stability_map(
            ck, dk, 1e-3, "force/displacement", "gauss-seidel", cosim.Lagrange(1), threads=1).rho).ravel(),
        "implicit two-mass (dgetrf/dgetrs)": lambda: cosim.simulate(
            two_mass, t_end=0.2, H=1e-4, approximation=cosim.Lagrange(2),
            scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20)).x["S1"].ravel(),
        "explicit two-mass, CVODE (control)": lambda: cosim.simulate(
            two_mass, t_end=0.2, H=1e-4, approximation=cosim.Lagrange(1), scheme="gauss-seidel").x["S1"].ravel(),
    }


def worker(out):
    """Time each workload once after a warm-up call; save times and results to ``out`` (.npz)."""
    times, results = {}, {}
    for name, f in workloads().items():
        results[name] = f()
        t = time.perf_counter()
        f()
        times[name] = time.perf_counter() - t
    np.savez(out, times=json.dumps(times), **{f"r{i}": r for i, r in enumerate(results.values())})


def build(variant, tmp):
    """The cosim package with the extension built for ``variant``, in tmp/variant; returns that folder."""
    pkg = os.path.join(tmp, variant)
    env = dict(os.environ, COSIM_BLAS=variant)
    subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib", pkg, "--build-temp",
                    os.path.join(tmp, variant + "-obj")], cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    so = [f for f in os.listdir(os.path.join(pkg, "cosim")) if f.endswith(".so")]
    shutil.copytree(os.path.join(ROOT, "cosim"), os.path.join(pkg, "cosim"), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    assert so, f"no extension built for {variant}"
    return pkg


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker)
    try:
        import scipy_openblas32  # noqa: F401
    except ImportError:
        print("benchmarks/blas.py: scipy-openblas32 is not installed (pip install scipy-openblas32): skipped")
        return
    variants = ("reference", "scipy-openblas32")
    with tempfile.TemporaryDirectory() as tmp:
        pkgs = {v: build(v, tmp) for v in variants}
        best, results = {v: {} for v in variants}, {}
        env = dict(os.environ, OPENBLAS_NUM_THREADS=os.environ.get("OPENBLAS_NUM_THREADS", "1"))
        for _ in range(args.repeat):
            for v in variants:  # alternating, so that drifts of the machine's load hit both alike
                out = os.path.join(tmp, f"{v}.npz")
                subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", out], cwd=tmp, check=True,
                               env=dict(env, PYTHONPATH=pkgs[v]))
                with np.load(out) as z:
                    for name, t in json.loads(str(z["times"])).items():
                        best[v][name] = min(best[v].get(name, np.inf), t)
                    results[v] = [z[f"r{i}"] for i in range(len(best[v]))]
    print(f"best of {args.repeat}, ms; ratio = OpenBLAS / reference; OPENBLAS_NUM_THREADS={env['OPENBLAS_NUM_THREADS']}")
    print(f"{'workload':38s} {'reference':>10s} {'OpenBLAS':>10s} {'ratio':>6s}  bits")
    for i, name in enumerate(best["reference"]):
        ref, ob = best["reference"][name], best["scipy-openblas32"][name]
        a, b = results["reference"][i], results["scipy-openblas32"][i]
        same = a.shape == b.shape and a.tobytes() == b.tobytes()
        bits = "identical" if same else f"differ (max |diff| {np.nanmax(np.abs(a - b)):.1e})"
        print(f"{name:38s} {1e3 * ref:10.2f} {1e3 * ob:10.2f} {ob / ref:6.2f}  {bits}")


if __name__ == "__main__":
    main()
