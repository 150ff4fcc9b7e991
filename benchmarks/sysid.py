"""Benchmark of cosim.sysid (issue 4).

1. MOESP and PO-MOESP (C, LAPACK) against nfoursid (N4SID / PO-MOESP in NumPy) on the same data: wall time and
   accuracy of the identified eigenvalues (max distance to the true ones after matching; median over the noise
   realizations). Target: >= 10x faster at equal or better accuracy. The last column is err PO-MOESP / err nfoursid
   (<= 1: cosim at least as accurate).
2. RLS cost per update for a MISO model with 10 parameters (n_a = 1, n_b = 3, 3 inputs) against a plain NumPy
   implementation of the same update. Target: <= 1 us per update.

3. ``MOESPWindow.push`` + ``fit`` per sample at W = 500 (the per-step cost of online MOESP inside the pre-step):
   recursive factor (up/down-date, ``refactor_every=0``), the default (one QR re-factorization every W pushes) and
   a full QR every fit (``refactor_every=1``, the cost before the recursive window: 92 us measured). Also ``--window``
   runs only this part.

4. With ``--paired N R``: per-realization ratio err PO-MOESP / err nfoursid at N samples, 40 dB, over R noise
   realizations of the same system (the same data for both), to tell a real accuracy difference from noise.

Run:  .venv/bin/python benchmarks/sysid.py [realizations, default 7]   (timings are best of several repeats; never part of the tests)
      .venv/bin/python benchmarks/sysid.py --paired 20000 16
"""
import sys
import time

import numpy as np
import pandas as pd
from nfoursid.nfoursid import NFourSID

from cosim import _core, sysid


REALIZATIONS = int(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else 7


def best_time(fn, repeat=5):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def random_system(rng, n, nu, ny):
    while True:
        A = rng.standard_normal((n, n))
        A *= rng.uniform(0.6, 0.95) / np.max(np.abs(np.linalg.eigvals(A)))
        ev = np.linalg.eigvals(A)
        if np.min(np.abs(ev)) > 0.3 and min(abs(ev[i] - ev[j]) for i in range(n) for j in range(i + 1, n)) > 0.1:
            return A, rng.standard_normal((n, nu)), rng.standard_normal((ny, n)), rng.standard_normal((ny, nu))


def simulate(A, B, C, D, u):
    x = np.zeros(A.shape[0])
    y = np.zeros((len(u), C.shape[0]))
    for k in range(len(u)):
        y[k] = C @ x + D @ u[k]
        x = A @ x + B @ u[k]
    return y


def eig_error(e_true, e_est):
    rest, worst = list(e_est), 0.0
    for e in e_true:
        i = int(np.argmin([abs(e - f) for f in rest]))
        worst = max(worst, abs(e - rest.pop(i)))
    return worst


def bench_moesp():
    print("MOESP and PO-MOESP (cosim, C/LAPACK) vs nfoursid (NumPy), random stable system n = 4, n_u = 2, n_y = 2, "
          f"r = 8 block rows for all;\n40 dB rows: eigenvalue error is the median over {REALIZATIONS} noise realizations, "
          "times the best over them")
    print(f"{'N':>7} {'SNR':>5} | {'moesp ms':>9} {'po ms':>7} {'n4sid ms':>9} | {'x moesp':>8} {'x po':>7} | "
          f"{'err moesp':>9} {'err po':>9} {'err n4sid':>9} | {'po/n4sid':>8}")
    rng = np.random.default_rng(0)
    A, B, C, D = random_system(rng, 4, 2, 2)
    ev = np.linalg.eigvals(A)
    r = 8
    for N in (1000, 5000, 20000):
        u = rng.standard_normal((N, 2))
        y0 = simulate(A, B, C, D, u)
        for snr in (None, 40):
            reals = 1 if snr is None else REALIZATIONS
            errs = {"moesp": [], "po-moesp": [], "n4sid": []}
            times = {"moesp": [], "po-moesp": [], "n4sid": []}
            for _ in range(reals):
                y = y0 if snr is None else y0 + rng.standard_normal(y0.shape) * y0.std(0) * 10 ** (-snr / 20)
                df = pd.DataFrame(np.hstack([u, y]), columns=["u0", "u1", "y0", "y1"])

                def run_n4sid():
                    m = NFourSID(df, output_columns=["y0", "y1"], input_columns=["u0", "u1"], num_block_rows=r)
                    m.subspace_identification()
                    ss, _ = m.system_identification(rank=4)
                    return ss

                for meth in ("moesp", "po-moesp"):
                    t, res = best_time(lambda: sysid.moesp(u, y, order=4, block_rows=r, method=meth))
                    times[meth].append(t)
                    errs[meth].append(eig_error(ev, res.eigenvalues()))
                t, rn = best_time(run_n4sid, repeat=3 if N <= 5000 else 1)
                times["n4sid"].append(t)
                errs["n4sid"].append(eig_error(ev, np.linalg.eigvals(rn.a)))
            t = {k: min(v) for k, v in times.items()}
            e = {k: np.median(v) for k, v in errs.items()}
            print(f"{N:>7} {'inf' if snr is None else snr:>5} | {t['moesp'] * 1e3:>9.3f} {t['po-moesp'] * 1e3:>7.3f} "
                  f"{t['n4sid'] * 1e3:>9.1f} | {t['n4sid'] / t['moesp']:>7.0f}x {t['n4sid'] / t['po-moesp']:>6.0f}x | "
                  f"{e['moesp']:>9.2e} {e['po-moesp']:>9.2e} {e['n4sid']:>9.2e} | "
                  f"{e['po-moesp'] / max(e['n4sid'], 1e-300):>8.3f}")


def numpy_rls_update(p, P, phi, y, lam):
    Pphi = P @ phi
    g = Pphi / (lam + phi @ Pphi)
    p += g * (y - phi @ p)
    P -= np.outer(g, Pphi)
    P /= lam
    return p, P


def bench_rls():
    nu, na, nb, N = 3, 1, 3, 200_000
    npar = na + nu * nb
    print(f"\nRLS, MISO with {npar} parameters (n_a = {na}, n_b = {nb}, {nu} inputs), lambda = 0.99, N = {N}")
    rng = np.random.default_rng(1)
    u = rng.standard_normal((N, nu))
    y = np.zeros((N, 1))
    b = rng.standard_normal((nu, nb))
    for k in range(nb, N):
        y[k] = 0.8 * y[k - 1] + sum(b[j] @ u[k - nb + 1:k + 1, j][::-1] for j in range(nu))

    def run_batch():
        r = sysid.RLS(1, nu, na, nb, lam=0.99, P0=1e4)
        r.update_many(u, y)
        return r

    t_batch, r = best_time(run_batch)
    ncall = 20_000

    def run_calls():
        r2 = sysid.RLS(1, nu, na, nb, lam=0.99, P0=1e4)
        upd = r2.update
        for k in range(ncall):
            upd(u[k], y[k])
        return r2

    t_call, _ = best_time(run_calls, repeat=3)
    nnp = 20_000

    def run_numpy():
        p, P = np.zeros(npar), 1e4 * np.eye(npar)
        for k in range(nb, nnp):
            phi = np.concatenate([y[k - 1], u[k - nb + 1:k + 1][::-1].T.ravel()])
            p, P = numpy_rls_update(p, P, phi, y[k, 0], 0.99)
        return p

    t_np, _ = best_time(run_numpy, repeat=3)
    per_c = t_batch / N * 1e6
    per_call = t_call / ncall * 1e6
    per_np = t_np / (nnp - nb) * 1e6
    a, bb = r.parameters
    print(f"  cosim C loop (RLS.update_many):      {per_c:8.3f} us/update   (parameter error "
          f"{max(abs(a[0, 0] - 0.8), np.abs(bb[0] - b).max()):.1e})")
    print(f"  cosim per Python call (RLS.update):  {per_call:8.3f} us/update")
    print(f"  plain NumPy update loop:             {per_np:8.3f} us/update")
    print(f"  ratio NumPy / cosim C loop: {per_np / per_c:.0f}x;  NumPy / cosim per call: {per_np / per_call:.1f}x")


def paired(N, realizations, snr=40, r=8):
    """Per-realization accuracy ratio PO-MOESP / nfoursid on identical noisy data."""
    rng = np.random.default_rng(0)
    A, B, C, D = random_system(rng, 4, 2, 2)
    ev = np.linalg.eigvals(A)
    u = rng.standard_normal((N, 2))
    y0 = simulate(A, B, C, D, u)
    ratios = []
    for _ in range(realizations):
        y = y0 + rng.standard_normal(y0.shape) * y0.std(0) * 10 ** (-snr / 20)
        df = pd.DataFrame(np.hstack([u, y]), columns=["u0", "u1", "y0", "y1"])
        m = NFourSID(df, output_columns=["y0", "y1"], input_columns=["u0", "u1"], num_block_rows=r)
        m.subspace_identification()
        ss, _ = m.system_identification(rank=4)
        en = eig_error(ev, np.linalg.eigvals(ss.a))
        ep = eig_error(ev, sysid.moesp(u, y, order=4, block_rows=r, method="po-moesp").eigenvalues())
        ratios.append(ep / en)
    ratios = np.array(ratios)
    print(f"N = {N}, {snr} dB, {realizations} realizations: err PO-MOESP / err nfoursid median {np.median(ratios):.3f}, "
          f"geometric mean {np.exp(np.mean(np.log(ratios))):.3f}, range {ratios.min():.2f}..{ratios.max():.2f}, "
          f"PO-MOESP at least as accurate in {int(np.sum(ratios <= 1))} of {realizations}")


def bench_window(W=500, steps=3000):
    print(f"MOESPWindow push + fit per sample, W = {W}, sliding (window full), best of 3 runs of {steps} samples")
    print(f"{'n_u':>3} {'n_y':>3} {'r':>3} {'order':>5} | {'recursive us':>12} {'default us':>10} {'QR each us':>10} | "
          f"{'x (QR/rec)':>10} | {'max rel diff rec vs QR':>22}")
    rng = np.random.default_rng(1)
    for nu, ny, r, n in ((1, 1, 2, 1), (1, 1, 10, 2), (2, 1, 2, 1), (2, 2, 4, 3)):
        A, B, C, D = random_system(rng, max(n, 2), nu, ny)
        N = W + 2 * r + steps
        u = rng.standard_normal((N, nu))
        y = simulate(A, B, C, D, u) + 1e-3 * rng.standard_normal((N, ny))
        out = {}
        for name, every in (("rec", 0), ("default", W), ("qr", 1)):
            def run():
                w = sysid.MOESPWindow(nu, ny, window=W, order=n, block_rows=r, refactor_every=every)
                w.push(u[:W + 2 * r], y[:W + 2 * r])
                w.fit()
                t0 = time.perf_counter()
                for k in range(W + 2 * r, N):   # the core calls (the Python wrapper adds its argument checks and
                    _core.sysid_moesp_window_push(w._cap, u[k:k + 1], y[k:k + 1])   # result object: ~10-30 us)
                    _core.sysid_moesp_window_fit(w._cap, n, w.threshold)
                return (time.perf_counter() - t0) / steps, w.fit()
            t, res = min((run() for _ in range(3)), key=lambda x: x[0])
            out[name] = (t, res)
        m_rec = np.concatenate([out["rec"][1].D.ravel(), (out["rec"][1].C @ out["rec"][1].B).ravel()])
        m_qr = np.concatenate([out["qr"][1].D.ravel(), (out["qr"][1].C @ out["qr"][1].B).ravel()])
        diff = np.max(np.abs(m_rec - m_qr)) / np.max(np.abs(m_qr))
        print(f"{nu:3d} {ny:3d} {r:3d} {n:5d} | {out['rec'][0] * 1e6:12.2f} {out['default'][0] * 1e6:10.2f} "
              f"{out['qr'][0] * 1e6:10.2f} | {out['qr'][0] / out['rec'][0]:10.1f} | {diff:22.1e}")
    print("(core calls _core.sysid_moesp_window_push / _fit; about 1 us of each figure is the call overhead)")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--window":
        bench_window()
    elif len(sys.argv) > 1 and sys.argv[1] == "--paired":
        paired(int(sys.argv[2]), int(sys.argv[3]))
    else:
        bench_moesp()
        bench_rls()
        bench_window()
