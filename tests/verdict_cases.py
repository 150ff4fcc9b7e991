"""The verdict table of issue 30 (part 2): runs across cosim.models and the papers' cases with their known truth
(stable or not), from the monolithic solution (the co-simulation's error over the last 20 % of the run against the
amplitude of the solution) and, for LTI systems, rho(Omega). Used by tests/test_verdict.py and tests/test_fuzz.py."""
import numpy as np

import cosim
from cosim import models

ISSUE = dict(ck=2e5, dk=200.0)   # genser2020's two-mass case: rho crosses 1 near H = 2 ms (Jacobi, ZOH)


def as_ode(system):
    """The same system with every LTI subsystem as a Python ODE (not LTI: the verdict's amplitude rule)."""
    subs = []
    for s in system.subsystems:
        A, B, C, D = s.A, s.B, s.C, s.D
        subs.append(cosim.ODE(lambda t, x, u, A=A, B=B: A @ x + B @ u, lambda t, x, u, C=C, D=D: C @ x + D @ u,
                              nx=s.nx, nu=s.nu, ny=s.ny, x0=s.x0, name=s.name, feedthrough=bool(np.any(D)),
                              inputs=s.inputs, outputs=s.outputs, states=s.states))
    return cosim.CoupledSystem(subs, system.connections)


def _chain():
    return models.oscillator_chain(preset="table5.3", n_bodies=40, n_subsystems=8, seed=2)


# name: (build, simulate keyword arguments, truth: stable?, rule the verdict uses, compare with monolithic)
CASES = {
    "two_mass nominal, Jacobi ZOH, H=1ms": (models.two_mass_oscillator, dict(t_end=0.1, H=1e-3, solver=cosim.Exact()),
                                            True, "spectral radius", True),
    "genser two_mass H=1ms (rho 0.995)": (lambda: models.two_mass_oscillator(**ISSUE),
                                          dict(t_end=1.0, H=1e-3, solver=cosim.Exact()), True, "spectral radius", True),
    "genser two_mass H=4ms (rho 1.035)": (lambda: models.two_mass_oscillator(**ISSUE),
                                          dict(t_end=1.0, H=4e-3, solver=cosim.Exact()), False, "spectral radius",
                                          True),
    "genser two_mass H=5ms (rho 1.07)": (lambda: models.two_mass_oscillator(**ISSUE),
                                         dict(t_end=1.0, H=5e-3, solver=cosim.Exact()), False, "spectral radius", True),
    "genser two_mass as ODEs H=1ms": (lambda: as_ode(models.two_mass_oscillator(**ISSUE)),
                                      dict(t_end=1.0, H=1e-3, solver=cosim.RK4(substeps=20)), True, "amplitude", True),
    "genser two_mass as ODEs H=5ms": (lambda: as_ode(models.two_mass_oscillator(**ISSUE)),
                                      dict(t_end=1.0, H=5e-3, solver=cosim.RK4(substeps=20)), False, "amplitude",
                                      True),
    "precice oscillator, Gauss-Seidel H=0.05 (rho 1)": (models.precice_oscillator,
                                                        dict(t_end=5.0, H=0.05, scheme="gauss-seidel",
                                                             solver=cosim.Exact()), True, "spectral radius", True),
    "precice oscillator, Jacobi H=0.05 (rho 1.09)": (models.precice_oscillator,
                                                     dict(t_end=5.0, H=0.05, solver=cosim.Exact()), False,
                                                     "spectral radius", True),
    "precice oscillator as ODEs, Gauss-Seidel H=0.05": (lambda: as_ode(models.precice_oscillator()),
                                                        dict(t_end=5.0, H=0.05, scheme="gauss-seidel",
                                                             solver=cosim.RK4(substeps=50)), True, "amplitude", True),
    "precice oscillator as ODEs, Jacobi H=0.05": (lambda: as_ode(models.precice_oscillator()),
                                                  dict(t_end=5.0, H=0.05, solver=cosim.RK4(substeps=50)), False,
                                                  "amplitude", True),
    "moshagen spring-mass, Gauss-Seidel H=0.1": (models.spring_mass,
                                                 dict(t_end=20.0, H=0.1, scheme="gauss-seidel", solver=cosim.Exact()),
                                                 True, "spectral radius", True),
    "moshagen spring-mass, Jacobi H=0.5 (rho 1.12)": (models.spring_mass,
                                                      dict(t_end=20.0, H=0.5, solver=cosim.Exact()), False,
                                                      "spectral radius", True),
    "kraft chain forced from rest (Table 5.3, 40 bodies)": (_chain, dict(t_end=4e-4, H=2e-6,
                                                                         solver=cosim.CVODE(rtol=1e-6, atol=1e-9)),
                                                            True, "amplitude", True),
    # a wave from an impulse at one end, under imMD step control: ahead of its front the far bodies' velocities grow
    # from 1e-41 to 5e-10 m/s, by 1.2-18 per window, with 2 macro points in the last window (before the roughness
    # was read over at least three points, that was "grew geometrically")
    "kraft steel rod struck from rest, imMD (Table A.3, 20 bodies)": (
        lambda: models.oscillator_chain(preset="tableA.3", n_bodies=20, damping_ratio=1e-3),
        dict(t_end=1e-5, H=1e-9, approximation=cosim.Lagrange(0), last_step="shorten",
             step_control=cosim.StepControl(estimator="imMD", rtol=1e-5, atol={"pos": 1e-8, "vel": 1e-5, "u": 0.1}),
             scheme=cosim.Implicit(jacobian="fd", tol=1e-5, max_iter=10, convergence="y", tau=0.33)),
        True, "amplitude", True),
}

# The issue's own case (about 10 s): Table 5.3, within 1.7e-4 of the monolithic solution, used to raise
# "K10.lam grew by a factor 3.28e3".
TABLE53 = (lambda: models.oscillator_chain(preset="table5.3", seed=1),
           dict(t_end=2e-3, H=1e-6, approximation=cosim.Lagrange(2), solver=cosim.CVODE(linear_solver="band")))


def truth_from_monolithic(system, res):
    """Unstable iff the co-simulation's error over the last 20 % of the run exceeds the amplitude of the monolithic
    solution (the coupling error outgrew the solution)."""
    ref = cosim.simulate_monolithic(system, res.t[-1], t_eval=res.t)
    k = int(0.8 * len(res.t))
    err = np.max(np.abs(res.X[k:] - ref.X[k:]))
    return not err > np.max(np.abs(ref.X))
