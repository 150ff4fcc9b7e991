"""Adaptive macro steps (kraft2021 §8-§11) against the best fixed-H run and against step doubling at equal global
error, on Kraft's two-mass models M1 (exact units), M2 and M3 (CVODE rtol 1e-10).

Error measure E (the same for every run of a model): NRMSE (kraft2021 eq. 5.1/5.2) of the coupling-body states
(x1, v1, x2, v2) against the monolithic reference; on M2/M3 on a COMMON uniform output grid of 1001 points (dense
output: each unit re-integrated from its macro point with the input function it used), on M1 at each run's own macro
(and step-doubling mid) points, because cosim's dense output with Exact() units rescales polynomial inputs wrongly
(csrc/integrators/exact.c ignores the input's own H on a partial step; reported, not fixed here). Not at the runs'
own macro points on M3: the
contact reverses v1 within ~2e-8 s, and a macro point that falls inside a contact compares the co-simulation with
the reference across a ~1e-9 s shift of the contact time (errors of tens of m/s in v1 at that one point), so an
adaptive run, which puts many points there, would be charged for its own refinement. E_max (max over the grid of
|error|/std of the reference, per variable) is printed too.

For every model:
* adaptive (exMD, and exCV on M3) at the rtol given: macro steps, rejections, unit integrations (incl. the
  comparative runs of exMD), wall time, E;
* adaptive runs use approximation=Lagrange(k=2) with order control up to κ_max = 5 (the issue's example);
* the best fixed-H run reaching that E, reported twice: with the SAME κ = 2 as the adaptive run's approximation (the
  issue's target "same κ") and, stricter, the best over κ = 1..5; each over the uniform grid (degree reduced while the
  history is short) and Kraft's start-up ramp (Listing 5.1); H = t_end/n, n doubled from 16 until E is reached, then
  bisected to 3 %; fewest macro steps;
* step doubling (Richardson, as PyFMI and OMSimulator do it): from T_N one full step H and two half steps H/2 (each
  a Jacobi co-simulation step of both units with the Lagrange extrapolation of degree κ of λ through the accepted
  points, incl. the midpoints); error estimate |x_half − x_full|/(2^p − 1) per group (p = κ+3 positions, κ+2
  velocities; kraft's weights (3.22)), accept if ≤ 1 and continue from the half-step solution, else roll back;
  r = clip(0.9 ε^(−1/(κ+2)), 0.2, 2) (≤ 0.9 after a failure). Built from cosim's own pieces (cosim.Stepper with
  save/restore); 3 unit integrations per unit and attempt. κ = 0..2, rtol from 1e-3 down by √10 until E is
  reached; fewest integrations (search capped at 10x (--quick) or 30x the adaptive run's integrations). Its wall time is a Python loop (not comparable with the C runs); the target is on
  integrations.

Targets (issue 9): >= 5x fewer macro steps than the best fixed run on M3, >= 2.5x on M1, M2 reported; fewer unit
integrations than step doubling at equal error.

    .venv/bin/python benchmarks/adaptive.py [--quick]
"""
import sys
import time

import numpy as np

import cosim
from cosim import control

QUICK = "--quick" in sys.argv
T_END = 0.1
N_MAX = 20000 if QUICK else 100000
T_OUT = np.linspace(0.0, T_END, 1001)
STATES = ["S1.x1", "S1.v1", "S2.x2", "S2.v2"]


class Measure:
    """E (NRMSE) and E_max of a run's coupling-body states: on the common grid T_OUT (dense=True) or at the run's own
    macro points (M1: cosim's dense output with Exact() units is wrong for κ >= 1, see benchmarks/README.md)."""

    def __init__(self, system, solver, dense):
        self.system, self.solver, self.dense = system, solver, dense
        ref = cosim.simulate_monolithic(system, t_end=T_END, t_eval=T_OUT, solver=solver)
        self.scale = np.column_stack([ref[n] for n in STATES]).std(axis=0)

    def __call__(self, t, X):
        X = np.asarray(X, dtype=float)
        if X.shape != (len(t), 4) or not np.all(np.isfinite(X)):
            return np.inf, np.inf
        ref = cosim.simulate_monolithic(self.system, t_end=t[-1], t_eval=t, solver=self.solver)
        R = np.column_stack([ref[n] for n in STATES])
        return control.nrmse(X, R), float(np.max(np.abs(X - R) / self.scale))

    def kw(self):
        return dict(t_eval=T_OUT) if self.dense else {}


def states(res):
    return res.t, np.column_stack([res[n] for n in STATES])


def integrations(res):
    n_units = sum(1 for s in res.system.subsystems if s.nx > 0)
    return (res.stats["macro_steps"] + res.stats["rejected_steps"]) * n_units + res.stats.get("comparative_integrations", 0)


def fixed_run(system, solver, measure, k, n, startup):
    t0 = time.perf_counter()
    try:
        res = cosim.simulate(system, T_END, T_END / n, approximation=cosim.Lagrange(k=k), startup=startup,
                             solver=solver, divergence_growth=float("inf"), **measure.kw())
        e = measure(*states(res))[0]
    except cosim.CosimError:
        return None
    return dict(steps=res.stats["macro_steps"], k=k, H=T_END / n, E=e, wall=time.perf_counter() - t0,
                integ=integrations(res), startup=startup or "uniform")


def fewest_steps(system, solver, measure, E, k, startup, n_cap):
    """Fewest uniform steps n (H = t_end/n, κ = k, given start-up) reaching E: n doubled from 16 until E is reached,
    then bisected to 3 %; None if no n <= n_cap reaches E."""
    lo, n, hit = None, min(16, n_cap), None
    while n >= 1:
        r = fixed_run(system, solver, measure, k, n, startup)
        if r is not None and r["E"] <= E:
            hit = r
            break
        if n >= n_cap:
            break
        lo, n = n, min(2 * n, n_cap)
    if hit is None:
        return None
    lo, hi = lo or 0, n                 # n: H = t_end/n (Kraft's ramp adds its start-up steps to the count)
    while hi - lo > max(1, 0.03 * hi):
        mid = (lo + hi) // 2
        r = fixed_run(system, solver, measure, k, mid, startup)
        if r is not None and r["E"] <= E:
            hi = mid
            if r["steps"] < hit["steps"]:
                hit = r
        else:
            lo = mid
    return hit


def best_fixed(system, solver, measure, E, kappa):
    """The best fixed-H run reaching E: (same κ as the adaptive run's approximation, best over κ = 1..5); each the
    fewest macro steps over the uniform grid and Kraft's start-up ramp (Listing 5.1)."""
    same = None
    for startup in (None, "kraft"):
        r = fewest_steps(system, solver, measure, E, kappa, startup, N_MAX)
        if r is not None and (same is None or r["steps"] < same["steps"]):
            same = r
    best = same
    for k in (1, 2, 3, 4, 5):
        if k == kappa:
            continue
        for startup in (None, "kraft"):
            cap = N_MAX if best is None else best["steps"] - 1        # only runs that beat the best so far matter
            r = fewest_steps(system, solver, measure, E, k, startup, cap)
            if r is not None and (best is None or r["steps"] < best["steps"]):
                best = r
    return same, best


# ------------------------------------------------------------------------------------------ step doubling
def _coupling_law(p):
    """λ(x1, v1, x2, v2) of the cut element (kraft2021 eq. 2.9, d = 0)."""
    def spow(v, e):
        return np.sign(v) * np.abs(v) ** e

    def lam(x1, v1, x2, v2):
        dx, dv = x2 - x1, v2 - v1
        return p["cc"] * dx + p["Cc"] * spow(dx, p["ex"]) + p["Dc"] * spow(dv, p["ev"])
    return lam


def _poly(Th, Lh, T, h):
    """Monomial coefficients in s = (t − T)/h of the Lagrange polynomial through (Th, Lh), shape (deg+1, 1)."""
    s = (np.asarray(Th) - T) / h
    c = np.polyfit(s, np.asarray(Lh), len(s) - 1) if len(s) > 1 else np.asarray(Lh, dtype=float)
    return c[::-1].reshape(-1, 1)


def step_doubling(system, solver, kappa, rtol, dense, H_init=1e-6):
    """Richardson step doubling with rollback; returns (states on T_OUT, accepted steps, rejected, integrations,
    wall seconds)."""
    t0 = time.perf_counter()
    p = system.params
    lam = _coupling_law(p)
    sub = {s.name: s for s in system.subsystems}
    st = [cosim.Stepper(sub["S1"], solver), cosim.Stepper(sub["S2"], solver)]
    atol = np.array([1e-3 * rtol, rtol, 1e-3 * rtol, rtol])       # pos, vel, pos, vel (kraft2021 §9)
    pos = np.array([True, False, True, False])

    def xs():
        return np.concatenate([s.x for s in st])

    def L(x):
        return lam(x[0], x[1], x[2], x[3])

    x = xs()
    hist = [(0.0, L(x))]
    T, H = 0.0, H_init
    acc = rej = integ = 0
    out = np.empty((T_OUT.size, 4))
    out[0] = x
    tt, xx = [0.0], [x]
    kout = 1
    n_fail = 0
    while T < T_END * (1 - 1e-14):
        H = min(H, T_END - T)
        if T + H > T_END * (1 - 1e-12):
            H = T_END - T
        snap = [s.save() for s in st]
        Th = [t for t, _ in hist[-(kappa + 1):]]
        Lh = [v for _, v in hist[-(kappa + 1):]]
        cf = _poly(Th, Lh, T, H)
        for s in st:
            s.do_step(T, H, cf)
        xf = xs()
        for s, sn in zip(st, snap):
            s.restore(sn)
        c1 = _poly(Th, Lh, T, H / 2)
        for s in st:
            s.do_step(T, H / 2, c1)
        xm = xs()
        lm = L(xm)
        Th2, Lh2 = (Th + [T + H / 2])[-(kappa + 1):], (Lh + [lm])[-(kappa + 1):]
        c2 = _poly(Th2, Lh2, T + H / 2, H / 2)
        mid = [s.save() for s in st]
        for s in st:
            s.do_step(T + H / 2, H / 2, c2)
        xh = xs()
        integ += 3 * len(st)
        if not np.all(np.isfinite(xh)):
            raise cosim.DivergenceError("step doubling diverged")
        w = 1.0 / (atol + rtol * np.abs(xh))
        d = np.abs(xh - xf) * w
        eps = max(np.sqrt(np.mean((d[pos] / (2.0 ** (kappa + 3) - 1)) ** 2)),
                  np.sqrt(np.mean((d[~pos] / (2.0 ** (kappa + 2) - 1)) ** 2)))
        r = 0.9 * eps ** (-1.0 / (kappa + 2)) if eps > 0 else 2.0
        if eps <= 1.0 and not dense:
            tt += [T + H / 2, T + H]
            xx += [xm, xh]
        if eps <= 1.0 and dense:
            # dense output on the common grid: re-integrate from T (or the midpoint) with the input used there
            end = [s.save() for s in st]
            while kout < T_OUT.size and T_OUT[kout] < T + H - 1e-9 * H:
                t = T_OUT[kout]
                start, c, Ts = (snap, c1, T) if t <= T + H / 2 else (mid, c2, T + H / 2)
                for s, sn in zip(st, start):
                    s.restore(sn)
                    if t > Ts:
                        s.do_step(Ts, t - Ts, _rescale(c, (t - Ts) / (H / 2)))
                out[kout] = xs()
                kout += 1
            for s, sn in zip(st, end):
                s.restore(sn)
            if kout < T_OUT.size and T_OUT[kout] <= T + H + 1e-9 * H:
                out[kout] = xh
                kout += 1
        if eps <= 1.0:
            hist += [(T + H / 2, lm), (T + H, L(xh))]
            hist = hist[-(kappa + 2):]
            T += H
            acc += 1
            n_fail = 0
            H *= min(2.0, max(0.2, r))
        else:
            for s, sn in zip(st, snap):
                s.restore(sn)
            rej += 1
            n_fail += 1
            H *= min(0.9, max(0.2, r)) if n_fail == 1 else 0.25
            if H < 1e-14:
                raise cosim.SolverError("step doubling: step size underflow")
    t, X = (T_OUT, out) if dense else (np.array(tt), np.array(xx))
    return t, X, acc, rej, integ, time.perf_counter() - t0


def _rescale(c, q):
    """Coefficients of u(T + s·qh) from those of u(T + s·h): c_m q^m."""
    return c * (q ** np.arange(c.shape[0]))[:, None]


def best_doubling(system, solver, measure, E, cap):
    best = None
    for kappa in (2, 1, 0):
        rtol = 1e-3
        while rtol >= 1e-11:
            try:
                t, X, acc, rej, integ, wall = step_doubling(system, solver, kappa, rtol, measure.dense)
                e = measure(t, X)[0]
            except cosim.CosimError:
                e, integ = np.inf, None
            if integ is not None and e > E and integ > (best["integ"] if best else cap):
                break                                   # dearer than the best (or than cap), still not accurate
            if e <= E:
                if best is None or integ < best["integ"]:
                    best = dict(steps=acc, rej=rej, integ=integ, wall=wall, E=e, k=kappa, rtol=rtol)
                break
            rtol /= np.sqrt(10.0)
    return best


CASES = (("M1", "exMD", 1e-6), ("M2", "exMD", 1e-5), ("M3", "exMD", 1e-5), ("M3", "exCV", 1e-5))
KAPPA = 2          # the adaptive run's approximation Lagrange(k=2) (the example): the same-κ fixed baseline
SD_CAP = 10 if QUICK else 30


def _fixed_line(label, b, steps):
    if b is None:
        return f"   {label}: no run with n <= {N_MAX} reaches E  -> ratio > {N_MAX / steps:.1f}"
    return (f"   {label} ({b['startup']}, κ = {b['k']}, H = {b['H']:.3e}): {b['steps']} steps, E = {b['E']:.3e}, "
            f"{b['integ']} integrations, {b['wall']:.3f} s  -> macro-step ratio {b['steps'] / steps:.2f}")


def main():
    print("E = NRMSE of (x1, v1, x2, v2) (M2/M3 on a common grid of 1001 points, M1 at the runs' own points); "
          "E_max = max |error|/std")
    for name, est, rtol in CASES:
        system = cosim.models.kraft_two_mass(name)
        solver = cosim.Exact() if name == "M1" else cosim.CVODE(rtol=1e-10, atol=1e-12)
        measure = Measure(system, solver, dense=name != "M1")
        t0 = time.perf_counter()
        res = cosim.simulate(system, T_END, 1e-6, solver=solver, divergence_growth=float("inf"), **measure.kw(),
                             approximation=cosim.Lagrange(k=KAPPA),
                             step_control=cosim.StepControl(est, rtol, order_control="ida", k_max=5))
        wall = time.perf_counter() - t0
        E, Emax = measure(*states(res))
        steps = res.stats["macro_steps"]
        ia = integrations(res)
        print(f"{name} {est} rtol {rtol:.0e} (Lagrange(k={KAPPA}), order 'ida' up to κ_max = 5): E = {E:.3e} "
              f"(E_max {Emax:.2e}), {steps} macro steps ({res.stats['rejected_steps']} rejected), {ia} unit "
              f"integrations, {wall:.3f} s, κ used {np.bincount(res.k, minlength=6).tolist()}", flush=True)
        same, best = best_fixed(system, solver, measure, E, KAPPA)
        print(_fixed_line(f"fixed H, same κ = {KAPPA} [issue's target]", same, steps), flush=True)
        print(_fixed_line("fixed H, best over κ = 1..5 [stricter]", best, steps), flush=True)
        d = best_doubling(system, solver, measure, E, SD_CAP * ia)
        if d is None:
            print(f"   step doubling: no κ = 0..2 reaches E within {SD_CAP * ia} integrations ({SD_CAP}x adaptive)")
        else:
            print(f"   step doubling (κ = {d['k']}, rtol {d['rtol']:.1e}): {d['steps']} steps ({d['rej']} rejected), "
                  f"E = {d['E']:.3e}, {d['integ']} integrations, {d['wall']:.3f} s (Python loop)  -> integration "
                  f"ratio {d['integ'] / ia:.2f}", flush=True)


if __name__ == "__main__":
    main()
