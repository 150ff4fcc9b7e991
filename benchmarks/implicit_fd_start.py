"""Why the implicit scheme with a fixed H fails at step 0 on the Table 5.8 chain (kraft2021 §18.10): not the fd
Jacobian, but a start far outside Newton's fast region.

1. The state at t = 0 at the cuts: the random initial velocities (±100 m/s) put relative velocities Δv of up to
   about 200 m/s across the cubic dampers (D = 1e4 Ns³/m³): forces λ up to about 5e10 N and a tangent damping
   d + 3 D Δv² of about 1e9 Ns/m, whose time constant (m/2)/(d + 3 D Δv²) ≈ 5e-9 s is far below the H tried.
   Over one macro step the damper alone takes Δv from Δv_0 to 1/sqrt(1/Δv_0² + 4 D H/m): λ at the window end is a
   strongly nonlinear function of the input end values, and the predictor (the inputs at t = 0) is far from it.
2. ||δu||_WRMS (eq. 2.32, tol = atol = 1e-6) per corrector iteration of step 0: the C corrector (fd, kraft's Δλ
   rule of §6.3: Δ = max(|u^j − u^{j−1}|, Δ_min)), Newton written here with Steppers with the same forward
   differences and Δλ rule (it matches the C corrector: the C corrector is this Newton, Jacobian assembly, signs and
   ordering included), and Newton with an accurate Jacobian (central differences, CVODE rtol 1e-12).

Command: .venv/bin/python benchmarks/implicit_fd_start.py (about 10 s).
"""
import re

import numpy as np

import cosim
from cosim.models import oscillator_chain
from cosim.stepper import Stepper

TOL = 1e-6
N_ITER = 8


def cut_state(system):
    p = system.params
    x0, v0, m = p["x0"], p["v0"], p["m"]
    e = np.array(p["cut_elements"]) - 1                     # 0-based element index: between bodies e-1 and e
    dx, dv = x0[e] - x0[e - 1], v0[e] - v0[e - 1]
    lam = p["c"][e] * dx + p["d"][e] * dv + p["C"][e] * dx ** 3 + p["D"][e] * dv ** 3
    d_tan = p["d"][e] + 3 * p["D"][e] * dv ** 2
    return dx, dv, lam, d_tan, 0.5 * m[e] / d_tan, p["D"][e], m[e]


def c_norms(system, H, n):
    """||δ||_WRMS of the C corrector's iterations 1..n at step 0 (the failure messages of max_iter = 1..n)."""
    out = []
    for mi in range(1, n + 1):
        try:
            r = cosim.simulate(system, H, H, solver=cosim.CVODE(), approximation=cosim.Lagrange(0),
                               scheme=cosim.Implicit(jacobian="fd", tol=TOL, max_iter=mi))
            return out + [f"converged after {r.stats['iterations']}"]
        except cosim.ConvergenceError as e:
            if int(re.search(r"after (\d+) iterations", str(e)).group(1)) < mi:
                return out + ["fails (R > 0.9)"]
            out.append(f"{float(re.search(r'WRMS = ([^,]+)', str(e)).group(1)):.3g}")
    return out


def newton_norms(system, H, solver, central, kraft_delta, n):
    """Newton on g(u) = u − L y(u) − r at step 0 (κ = 0: the input is its end value over the step)."""
    units = system.subsystems
    L, r = system.L, system.r
    uoff, yoff = np.cumsum([0] + [u.nu for u in units]), np.cumsum([0] + [u.ny for u in units])
    steppers = [Stepper(u, solver=solver) for u in units]
    snaps = [p.save() for p in steppers]

    def out(i, ui):
        steppers[i].restore(snaps[i])
        if units[i].nx:
            steppers[i].do_step(0.0, H, ui)
        return steppers[i].output(ui)

    u = np.zeros(uoff[-1])
    for _ in range(2):
        u = L @ np.concatenate([p.output(u[a:b]) for p, a, b in zip(steppers, uoff, uoff[1:])]) + r
    W = 1.0 / (TOL + TOL * np.abs(u))
    du, norms = np.zeros_like(u), []
    for _ in range(n):
        y = np.concatenate([out(i, u[a:b]) for i, (a, b) in enumerate(zip(uoff, uoff[1:]))])
        G = np.zeros((y.size, u.size))
        for i, (a, b) in enumerate(zip(uoff, uoff[1:])):
            for k in range(a, b):
                d = (1e-7 if central else 1e-6) * (1 + abs(u[k]))
                if kraft_delta:
                    d = max(d, abs(du[k]))
                up, um = u[a:b].copy(), u[a:b].copy()
                up[k - a] += d
                um[k - a] -= d
                lo = out(i, um) if central else y[yoff[i]:yoff[i + 1]]
                G[yoff[i]:yoff[i + 1], k] = (out(i, up) - lo) / ((2 if central else 1) * d)
        du = np.linalg.solve(np.eye(u.size) - L @ G, -(u - L @ y - r))
        u = u + du
        norms.append(np.sqrt(np.mean((du * W) ** 2)))
    return np.array(norms)


def main():
    s = oscillator_chain(preset="table5.8", n_bodies=20)
    dx, dv, lam, d_tan, tc, D, m = cut_state(s)
    print("== 1. Table 5.8 chain (n_K = 20, n_s = 10, seed 1) at t = 0, the 9 cut elements")
    print(f"  |Δx| up to {np.max(np.abs(dx)):.2f} m, |Δv| up to {np.max(np.abs(dv)):.0f} m/s, |λ| up to "
          f"{np.max(np.abs(lam)):.2e} N; tangent damping d + 3DΔv² up to {np.max(d_tan):.2e} Ns/m, "
          f"time constant (m/2)/(d + 3DΔv²) down to {np.min(tc):.1e} s")
    k = int(np.argmax(np.abs(dv)))
    for H in (1e-4, 1e-6, 1e-7, 1e-9):
        print(f"  H = {H:g}: the cubic damper alone takes |Δv| = {abs(dv[k]):.0f} to "
              f"{1 / np.sqrt(1 / dv[k] ** 2 + 4 * D[k] * H / m[k]):.1f} m/s")
    print(f"== 2. ||δu||_WRMS per corrector iteration at step 0 (tol = atol = {TOL:g}, max_iter 10)")
    for H in (1e-4, 1e-6, 1e-7, 1e-8, 1e-9):
        c = c_norms(s, H, 10)
        same = newton_norms(s, H, cosim.CVODE(), False, True, N_ITER)
        acc = newton_norms(s, H, cosim.CVODE(rtol=1e-12, atol=1e-14), True, False, N_ITER)
        f = lambda a: " ".join(f"{v:.3g}" for v in a)
        print(f"  H = {H:g}\n    C fd corrector       {' '.join(c)}\n    Newton, kraft's Δλ   {f(same)}\n"
              f"    Newton, accurate J   {f(acc)}   (R^2 = {acc[1] / acc[0]:.2f})")


if __name__ == "__main__":
    main()
