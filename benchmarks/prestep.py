"""Benchmark of genser2020's pre-step coupling (issue 12).

1. Cost of one pre-step communication step in the C core (continuous with exact IJs; discrete with RLS), measured as
   the run time per macro step minus that of the same run with ZOH coupling (linear DMO: exact LTI units;
   nonlinear DMO: 10 explicit Euler steps per macro step), against a NumPy implementation of the same step written from the thesis
   as a user would (matrices that depend only on ΔT precomputed once; per step: Step 2, Step 3 with pinv/lstsq;
   discrete: RLS update, assembly, EDE and extrapolation solves, pinv). Target: >= 30x faster than NumPy.
2. Stability-region areas (§11.4) of ZOH, NEPCE and pre-step on the ck dk = 1e8 family, grid ΔT = 0.5, 1..10 ms,
   log10(ck/dk) = -3..5 in quarter decades, T_end = 0.2 s, Euler δt = 1e-5 s: A_pre/A_ZOH (thesis 8.2, target >= 3),
   A_pre/A_NEPCE (thesis 5.9, target >= 2), and the wall time of the three area computations.

The discrete step with MOESP windows (W = 778, n = 1, r = 2, Table 3.13: 0.29 s learning, 0.004 s switch; EDE on,
no phase thresholds so that every step after learning is model-based) is measured the same way over 3 s (3000 macro
steps: the run stays bounded and model-based there; the identification runs in every step, learning included). Its
NumPy counterpart re-fits each window per step from its samples (Hankel matrices, QR, SVD, least squares), as a
user writing MOESP from the thesis would, and then runs the same Steps 1-3, on the samples of that same run.
(The first version measured a run with no learning phase: it blew up to |y| ~ 1e270 within 60 steps, fell back to
SBC, and the window re-factored in about every other step, which is not the cost of a pre-step step.)
Run: .venv/bin/python benchmarks/prestep.py [--only continuous,rls,moesp,areas]
"""
import argparse
import math
import time

import numpy as np
from scipy.linalg import block_diag, expm

import cosim
from cosim.analysis import stability_region_area
from cosim.models import interface_jacobians, two_mass_oscillator

H = 1e-3
STEPS = 20000


def best(f, repeat=5):
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        t.append(time.perf_counter() - t0)
    return min(t)


def c_step_cost(system, coupling, solver, steps=STEPS):
    kw = dict(t_end=steps * H, H=H, solver=solver, update="simplified", divergence_growth=math.inf,
              divergence_bound=math.inf)
    t_c = best(lambda: cosim.simulate(system, coupling=coupling, **kw))
    t_z = best(lambda: cosim.simulate(system, **kw))
    return (t_c - t_z) / steps, t_z / steps


def numpy_continuous(system):
    """One continuous pre-step step (δ ≡ 0, exact extrapolation, exact φ) in NumPy, per step cost."""
    ij = interface_jacobians(system)
    subs = system.subsystems
    Sy = block_diag(*[ij[s.name].dSdy for s in subs])
    Su = block_diag(*[ij[s.name].dSdu for s in subs])
    Sd = block_diag(*[ij[s.name].dSdud for s in subs])
    L = system.L
    n = L.shape[1]
    M = np.linalg.solve(np.eye(n) - Sd @ L, Sy + Su @ L)
    E2 = expm(M * H)
    per = []
    for i, s in enumerate(subs):
        d = ij[s.name]
        ni, mi = s.ny, s.nu
        Z = np.zeros((ni + 3 * mi, ni + 3 * mi))
        Z[:ni, :ni], Z[:ni, ni:ni + mi], Z[:ni, ni + mi:ni + 2 * mi] = d.dSdy, d.dSdu, d.dSdud
        Z[:ni, ni + 2 * mi:] = d.dSdu
        Z[ni + 2 * mi:, ni + mi:ni + 2 * mi] = np.eye(mi)
        Ex = expm(Z * H)
        phA, phB, A = Ex[:ni, :ni], Ex[:ni, ni:ni + mi], Ex[:ni, ni + mi:ni + 2 * mi]
        yo, uo = system.out_offset[i], system.in_offset[i]
        per.append((slice(yo, yo + ni), slice(uo, uo + mi), phA, phB, A, np.linalg.pinv(A)))
    y = np.array([0.1, 0.0, -1e4])
    r = system.r

    def step(y):
        yhat = E2 @ y
        u0 = L @ y + r
        uh = L @ yhat + r
        out = np.empty_like(u0)
        for ys, us, phA, phB, A, Ap in per:
            rhs = yhat[ys] - phA @ y[ys] - phB @ u0[us]
            tgt = (uh[us] - u0[us]) / H
            out[us] = tgt + Ap @ (rhs - A @ tgt)
        return out

    n_rep = 20000
    t = best(lambda: [step(y) for _ in range(n_rep)], 3)
    return t / n_rep


def numpy_steps(Sy, Sum, Sup, L, r, y, u, mem, sizes):
    """Steps 1-3 of the discrete pre-step in NumPy from the assembled IJs Sy, Su^-, Su^+ (n x n, n x m, n x m): the
    error equation (2.57) for δ (mem holds δ and ε^{k-1}), the model-based extrapolation (2.63) and the per-subsystem
    input optimisation with the pseudo-inverse of Su^+_i (sizes: (ny_i, nu_i) per subsystem)."""
    m = L.shape[0]
    Mc = np.eye(L.shape[1]) - Sup @ L
    A = Sy + Sum @ L
    ek = L @ y + r - u
    mem["delta"] = np.linalg.solve(Mc, A @ mem["delta"] + Sum @ mem["e_prev"] + Sup @ ek)
    mem["e_prev"] = ek
    yhat = np.linalg.solve(Mc, A @ (y + mem["delta"]) + (Sum + Sup) @ r)
    uh = L @ yhat + r
    out = np.empty(m)
    yo = uo = 0
    for ni, mi in sizes:
        Ai = Sup[yo:yo + ni, uo:uo + mi]
        rhs = yhat[yo:yo + ni] - Sy[yo:yo + ni, yo:yo + ni] @ y[yo:yo + ni] - Sum[yo:yo + ni, uo:uo + mi] @ u[uo:uo + mi]
        out[uo:uo + mi] = uh[uo:uo + mi] + np.linalg.pinv(Ai) @ (rhs - Ai @ uh[uo:uo + mi])
        yo += ni; uo += mi
    return out


def numpy_discrete(system):
    """One discrete pre-step step with RLS (n_a = n_b = 1) in NumPy, per step cost, fed with the outputs and inputs
    of a ZOH run of the same system (so that the numbers stay those of a real run)."""
    subs = system.subsystems
    L, r = system.L, system.r
    n, m = L.shape[1], L.shape[0]
    ref = cosim.simulate(system, t_end=1.0, H=H, solver=cosim.Euler(h=1e-5), update="simplified")
    Yr, Ur = ref.Y, ref.U
    lam = 0.996
    state = []
    for s in subs:
        npar = 1 + s.nu
        state.append(dict(p=np.zeros((s.ny, npar)), P=np.stack([1e4 * np.eye(npar)] * s.ny), ny=s.ny, nu=s.nu))
    mem = dict(delta=np.zeros(n), e_prev=np.zeros(m))

    def step(k):
        y_prev, y, u = Yr[k - 1], Yr[k], Ur[k]
        Sy = np.zeros((n, n)); Sum = np.zeros((n, m)); Sup = np.zeros((n, m))
        yo = uo = 0
        for st in state:
            ni, mi = st["ny"], st["nu"]
            for a in range(ni):
                phi = np.concatenate([[y_prev[yo + a]], u[uo:uo + mi]])
                P = st["P"][a]
                g = P @ phi / (lam + phi @ P @ phi)
                st["p"][a] += g * (y[yo + a] - phi @ st["p"][a])
                st["P"][a] = (P - np.outer(g, phi @ P)) / lam
            Sy[yo:yo + ni, yo:yo + ni] = np.diag(st["p"][:, 0])
            Sup[yo:yo + ni, uo:uo + mi] = st["p"][:, 1:]
            yo += ni; uo += mi
        return numpy_steps(Sy, Sum, Sup, L, r, y, u, mem, [(st["ny"], st["nu"]) for st in state])

    K = Yr.shape[0]
    t0 = time.perf_counter()
    for k in range(1, K):
        step(k)
    return (time.perf_counter() - t0) / (K - 1)


def numpy_moesp_fit(u, y, n, r):
    """Plain MOESP (spec 6.1) of aligned samples u (N, nu), y (N, ny) in NumPy: (PhiA, PhiB, C, D)."""
    N, nu = u.shape
    ny = y.shape[1]
    W = N - r + 1
    Hu = np.hstack([u[i:i + W] for i in range(r)])          # W x r nu: row j = [u_j .. u_{j+r-1}]
    Hy = np.hstack([y[i:i + W] for i in range(r)])
    R = np.linalg.qr(np.hstack([Hu, Hy]), mode="r")
    L = R.T
    p = r * nu
    L11, L21, L22 = L[:p, :p], L[p:, :p], L[p:, p:]
    Us, sv, _ = np.linalg.svd(L22)
    G = Us[:, :n] * np.sqrt(sv[:n])
    C = G[:ny]
    A = np.linalg.lstsq(G[:-ny], G[ny:], rcond=None)[0]
    Un = Us[:, n:].T
    M = np.linalg.lstsq(L11.T, (Un @ L21).T, rcond=None)[0].T
    K, Rh = [], []
    for i in range(r):
        Li = Un[:, i * ny:(i + 1) * ny]
        Ni = sum(Un[:, j * ny:(j + 1) * ny] @ G[(j - i - 1) * ny:(j - i) * ny] for j in range(i + 1, r)) \
            if i < r - 1 else np.zeros((Un.shape[0], n))
        K.append(np.hstack([Li, Ni]))
        Rh.append(M[:, i * nu:(i + 1) * nu])
    X = np.linalg.lstsq(np.vstack(K), np.vstack(Rh), rcond=None)[0]
    return A, X[ny:], C, X[:ny]


def numpy_discrete_moesp(system, Yr, Ur, W=778, n=1, r=2, repeat=3):
    """One discrete pre-step step with MOESP windows in NumPy (re-fit per step), fed with a run's samples Yr, Ur."""
    subs = system.subsystems
    L, rr = system.L, system.r
    nt, m = L.shape[1], L.shape[0]
    mem = dict(delta=np.zeros(nt), e_prev=np.zeros(m))

    def step(k):
        y, u = Yr[k], Ur[k]
        Sy = np.zeros((nt, nt)); Sum = np.zeros((nt, m)); Sup = np.zeros((nt, m))
        yo = uo = 0
        for s in subs:
            ni, mi = s.ny, s.nu
            k0 = max(1, k + 1 - (W + r - 1))
            A, B, C, D = numpy_moesp_fit(Ur[k0:k + 1, uo:uo + mi], Yr[k0:k + 1, yo:yo + ni], n, r)
            Cp = np.linalg.pinv(C)
            Syi = C @ A @ Cp
            Sy[yo:yo + ni, yo:yo + ni] = Syi
            Sum[yo:yo + ni, uo:uo + mi] = C @ B - Syi @ D
            Sup[yo:yo + ni, uo:uo + mi] = D
            yo += ni; uo += mi
        return numpy_steps(Sy, Sum, Sup, L, rr, y, u, mem, [(s.ny, s.nu) for s in subs])

    K = Yr.shape[0]
    ks = range(W, K)                     # full windows (the cost of a sliding step)
    return best(lambda: [step(k) for k in ks], repeat) / len(ks)   # best of N passes, as the C side


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="continuous,rls,moesp,areas",
                    help="comma-separated parts to run: continuous, rls, moesp, areas (default: all)")
    args = ap.parse_args()
    parts = {x.strip() for x in args.only.split(",") if x.strip()}
    bad = parts - {"continuous", "rls", "moesp", "areas"}
    if bad:
        ap.error(f"--only: unknown part(s) {sorted(bad)}")
    system = two_mass_oscillator(ck=2e5, dk=200)
    nl = two_mass_oscillator(nonlinear=True, external_force=True)
    print("== one pre-step communication step (dual-mass oscillator, 2 units, 3 outputs, 3 inputs)")
    if "continuous" in parts:
        c_cont, zoh_step = c_step_cost(system, cosim.PreStep(), cosim.Exact())
        np_cont = numpy_continuous(system)
        print(f"ZOH run, per macro step (units + master):          {zoh_step * 1e6:8.3f} us")
        print(f"continuous exact, C (extra over ZOH):              {c_cont * 1e6:8.3f} us")
        print(f"continuous exact, NumPy:                           {np_cont * 1e6:8.3f} us   ratio {np_cont / c_cont:7.1f}x")
    if "rls" in parts:
        discrete_rls(nl)
    if "moesp" in parts:
        discrete_moesp(nl)
    if "areas" in parts:
        areas()


def discrete_rls(nl):
    rls = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.996, P0=1e4), timeLearning=0.0,
                        timeSwitchphase=0.0, thresholdMbc2sbcCoupling=math.inf, thresholdMbcNoInputOpt=math.inf)
    c_disc, zoh_nl = c_step_cost(nl, rls, cosim.Euler(h=H / 10))
    np_disc = numpy_discrete(nl)
    print(f"ZOH run (nonlinear, 10 Euler steps), per step:     {zoh_nl * 1e6:8.3f} us")
    print(f"discrete RLS, C (extra over ZOH):                  {c_disc * 1e6:8.3f} us")
    print(f"discrete RLS, NumPy:                               {np_disc * 1e6:8.3f} us   ratio {np_disc / c_disc:7.1f}x")


MOESP_STEPS = 3000


def discrete_moesp(nl):
    mo = cosim.PreStep(variant="discrete", jacobians=cosim.sysid.MOESPWindow(1, 1, window=778, order=1),
                       timeLearning=0.29, timeSwitchphase=0.004, thresholdMbc2sbcCoupling=math.inf,
                       thresholdMbcNoInputOpt=math.inf, useErrDiffEqu=True)
    run = cosim.simulate(nl, coupling=mo, t_end=MOESP_STEPS * H, H=H, solver=cosim.Euler(h=H / 10),
                         update="simplified")
    phases, counts = np.unique(run.coupling_log["phase"], return_counts=True)
    print(f"MOESP run: max |y| = {np.abs(run.Y).max():.3g}, phases "
          + ", ".join(f"{p} {c}" for p, c in zip(phases, counts)))
    c_mo, _ = c_step_cost(nl, mo, cosim.Euler(h=H / 10), MOESP_STEPS)
    np_mo = numpy_discrete_moesp(nl, run.Y, run.U)
    print(f"discrete MOESP window (W 778, n 1), C (extra):      {c_mo * 1e6:8.3f} us")
    print(f"discrete MOESP window, NumPy (re-fit per step):    {np_mo * 1e6:8.3f} us   ratio {np_mo / c_mo:7.1f}x")


def areas():
    print("== stability-region areas (ck dk = 1e8, ΔT 0.5..10 ms, log10(ck/dk) -3..5 step 0.25, T_end 0.2 s)")
    t0 = time.perf_counter()
    reg = {name: stability_region_area(coupling=c, label=name)
           for name, c in (("ZOH", None), ("NEPCE", cosim.NEPCE()), ("pre-step", cosim.PreStep()))}
    wall = time.perf_counter() - t0
    for name, r in reg.items():
        print(f"A_{name:9s} = {r.area:7.3f} ms*l_x   ({r.wall_time:.2f} s, {r.stable.size} runs)")
    print(f"A_pre/A_ZOH   = {reg['pre-step'].area / reg['ZOH'].area:6.2f}   (thesis 8.2, target >= 3)")
    print(f"A_pre/A_NEPCE = {reg['pre-step'].area / reg['NEPCE'].area:6.2f}   (thesis 5.9, target >= 2)")
    print(f"wall time of the three area computations: {wall:.2f} s")


if __name__ == "__main__":
    main()
