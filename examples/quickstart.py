"""Quick start: ZOH, Lagrange and EXTRIPOL under Jacobi and Gauss-Seidel
=====================================================================

Quick start: co-simulate the two-mass oscillator and compare with the monolithic solution.

Run: .venv/bin/python examples/quickstart.py
"""
import cosim
from cosim import models

system = models.two_mass_oscillator(ck=2e5, dk=200, coupling="force/displacement")  # genser2020 §3.1 accuracy/stability case study (Figs. 3.62-3.66)
ref = cosim.simulate_monolithic(system, t_end=0.2)                                    # exact (matrix exponential)

for scheme in ("jacobi", "gauss-seidel"):
    for approx in (cosim.ZOH(), cosim.Lagrange(k=1), cosim.ExtrapolatedInterpolation(k=1, continuity=1)):
        try:
            res = cosim.simulate(system, t_end=0.2, H=1e-3, scheme=scheme, approximation=approx,
                                 solver=cosim.CVODE(rtol=1e-10, atol=1e-12))
            err = res.error_to(ref)
            print(f"{scheme:13s} {approx!r:45s} max_rel = {err['max_rel']:.3e}  nrmse = {err['nrmse']:.3e}  "
                  f"rhs calls = {sum(s['rhs_calls'] for s in res.stats['subsystems'].values())}")
        except cosim.DivergenceError as e:
            print(f"{scheme:13s} {approx!r:45s} diverged at t = {e.result.t[-1]:.4f}")
