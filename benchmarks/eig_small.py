"""Benchmark: eigenvalues of small dense matrices, the plain-C kernel (csrc/linalg/eig_small.c) against the LAPACK
path it replaced (dgebal + dgehd2 + dlahqr) and against numpy.linalg.eigvals.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/eig_small.py [--calls 20000] [--repeat 7]

All three are called from Python, one matrix per call, so every figure includes the call overhead (argument
parsing, array conversion, result allocation: about `overhead` below, the time for a 1 x 1 matrix). The C-level
ratio subtracts that overhead from both C paths; it estimates the speed-up inside the stability maps, where the
kernel is called from C (benchmarks/stability.py measures that directly).

Matrices: "random" = standard normal entries; "shift" = the shape of the stability problems, a dense top block row
over identity blocks that shift the history, with units mixed by a diagonal similarity (entries 1e-9..1e9).
Best of --repeat runs of --calls calls over a pool of 64 matrices.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cosim import _core  # noqa: E402


def random_pool(rng, n, k=64):
    return [rng.normal(size=(n, n)) for _ in range(k)]


def shift_pool(rng, n, k=64):
    p = 2 if n % 2 == 0 else 1
    out = []
    for _ in range(k):
        M = np.zeros((n, n))
        M[:p] = rng.normal(size=(p, n)) * 0.5
        M[p:, :-p] = np.eye(n - p)
        d = 10.0 ** rng.uniform(-4.5, 4.5, n)
        out.append(M * d[:, None] / d[None, :])
    return out


def per_call(fns, pool, calls, repeat):
    """Best time per call in microseconds for each function; the functions take turns in every repeat, so that a
    noisy moment does not favour one of them."""
    k = len(pool)
    best = {name: np.inf for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t = time.perf_counter()
            for i in range(calls):
                fn(pool[i % k])
            best[name] = min(best[name], (time.perf_counter() - t) / calls)
    return {name: b * 1e6 for name, b in best.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    paths = {
        "kernel": lambda A: _core.eigvals(A, "small"),
        "LAPACK": lambda A: _core.eigvals(A, "lapack"),
        "numpy": np.linalg.eigvals,
    }
    one = [np.ones((1, 1))]
    overhead = per_call({"kernel": paths["kernel"]}, one, args.calls, args.repeat)["kernel"]
    print(f"call overhead of _core.eigvals (1 x 1 matrix): {overhead:.2f} us")
    print(f"{'matrices':8s} {'n':>3s} {'kernel us':>10s} {'LAPACK us':>10s} {'numpy us':>10s} "
          f"{'LAPACK/kernel':>14s} {'numpy/kernel':>13s} {'C-level LAPACK/kernel':>22s}")
    for name, make in (("random", random_pool), ("shift", shift_pool)):
        for n in (4, 5, 6, 8, 10):
            pool = make(rng, n)
            for A in pool:  # the kernel and NumPy agree (sanity check, not a test)
                a, b = np.sort_complex(_core.eigvals(A, "small")), np.sort_complex(np.linalg.eigvals(A))
                assert np.max(np.abs(a - b)) <= 1e-6 * max(1.0, np.max(np.abs(b))), (name, n)
            t = per_call(paths, pool, args.calls, args.repeat)
            c_ratio = (t["LAPACK"] - overhead) / (t["kernel"] - overhead)
            print(f"{name:8s} {n:3d} {t['kernel']:10.2f} {t['LAPACK']:10.2f} {t['numpy']:10.2f} "
                  f"{t['LAPACK'] / t['kernel']:13.2f}x {t['numpy'] / t['kernel']:12.2f}x {c_ratio:21.2f}x")


if __name__ == "__main__":
    main()
