"""Long runs through every C path, for `make valgrind` (not collected by pytest: no test_ prefix)."""
import math

import numpy as np

import cosim
from cosim.simulate import _simulate
from cosim import models

s = models.two_mass_oscillator(ck=1e5, dk=1e3)
for solver in (cosim.Exact(), cosim.RK4(substeps=2), cosim.Euler(), cosim.CVODE(rtol=1e-6, atol=1e-8)):
    for scheme in ("jacobi", "gauss-seidel"):
        for approx in (cosim.ZOH(), cosim.Lagrange(2), cosim.ExtrapolatedInterpolation(1, 1), cosim.Hermite(1)):
            cosim.simulate(s, 0.02, 1e-4, scheme=scheme, approximation=approx, solver=solver)
cosim.simulate_monolithic(s, 0.02, 1e-3, solver=cosim.CVODE())
cosim.simulate_monolithic(s, 0.02, 1e-3)
nl = models.two_mass_oscillator(nonlinear=True, impulse=True)
cosim.simulate(nl, 0.02, 1e-4, solver=cosim.CVODE())
try:
    cosim.simulate(models.two_mass_oscillator(ck=2e5, dk=200), 5.0, 5e-3, approximation=cosim.Lagrange(1),
                   solver=cosim.Exact())
except cosim.DivergenceError:
    pass
py = cosim.ODE(lambda t, x, u: -x + u, lambda t, x, u: x, nx=1, nu=1, ny=1, x0=[1.0], name="P")
try:
    cosim.simulate(cosim.CoupledSystem([py], [cosim.connect("P.y[0]", "P.u[0]", 0.5)]), 0.1, 0.01,
                   solver=cosim.CVODE())
except cosim.SolverError:
    pass
st = cosim.Stepper(s["S2"], cosim.CVODE())
snap = st.save()
st.do_step(0.0, 1e-3, np.zeros((2, 2)))
st.restore(snap)
# analysis (threaded map, local error) and identification paths
from cosim import analysis, sysid  # noqa: E402
m = analysis.two_mass_stability_map(np.logspace(4, 6, 4), np.logspace(1, 3, 3), np.logspace(-5, -3, 3),
                                    coupling="force/displacement", scheme="gauss-seidel",
                                    approximation=cosim.Lagrange(1), threads=2)
analysis.local_error(s, np.logspace(-5, -4, 3), "jacobi", cosim.Lagrange(1))
loop = cosim.CoupledSystem([cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], name="A"),
                            cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], name="B")],
                           [cosim.connect("A.y[0]", "B.u[0]"), cosim.connect("B.y[0]", "A.u[0]")])
analysis.stability_map(lambda g: loop, {"g": [1.0, 2.0]}, [0.1, 0.2])  # singular loop: the per-system Y table fails
from cosim import _core  # noqa: E402
A = np.random.default_rng(1).normal(size=(7, 7))
for method in ("auto", "small", "lapack"):
    _core.eigvals(A, method)
_core.eigvals(np.diag([5e307, 1.0]) + np.eye(2, k=1) * 5e307)  # overflow in the kernel: LAPACK fallback
_core.poly_propagator(A[:3, :3], A[:3, :2], 1e-2, 3)
rng = np.random.default_rng(0)
u = rng.normal(size=(400, 1))
x = np.zeros(2)
y = np.zeros((400, 1))
for k in range(400):
    y[k] = x[0]
    x = np.array([[0.9, 0.1], [-0.1, 0.8]]) @ x + np.array([0.0, 1.0]) * u[k, 0]
sysid.moesp(u, y, order=2, block_rows=4)
rls = sysid.RLS(n_y=1, n_u=1, n_a=2, n_b=2, lam=0.99)
rls.update_many(u, y)
# the master's transaction paths: rollback, dense output, hooks that stop or raise, KLU (also singular)
_simulate(s, 0.01, 1e-3, solver=cosim.CVODE(), approximation=cosim.ExtrapolatedInterpolation(2, 1),
          reject_steps=[1, 4])
cosim.simulate(s, 0.01, 1e-3, solver=cosim.Exact(), scheme="gauss-seidel", output_interval=2.5e-4)
cosim.simulate(s, 0.01, 1e-3, step_finished=lambda t, r: t < 0.005)
try:
    cosim.simulate(s, 0.01, 1e-3, step_finished=lambda t, r: 1 / 0)
except cosim.SolverError:
    pass
ring = cosim.CoupledSystem([cosim.LTI([[-1.0]], [[1.0]], [[1.0]], [[0.3]], x0=[1.0], name=f"R{i}") for i in range(50)],
                           [cosim.connect(f"R{(i - 1) % 50}.y[0]", f"R{i}.u[0]", 0.5) for i in range(50)])
cosim.simulate(ring, 0.01, 1e-3, solver=cosim.RK4(), approximation=cosim.Lagrange(1))
cosim.simulate_monolithic(ring, 0.01, 1e-3, solver=cosim.CVODE())
try:
    cosim.simulate(loop, 0.1, 0.01, solver=cosim.Exact())
except cosim.SolverError:
    pass
# wave 2: adaptive steps (exMD, exCV), implicit and waveform relaxation, threads and timing, pre-step, NEPCE, balance
# correction, ECCO, chains with the band solver, a failing adaptive run
m1 = models.kraft_two_mass("M1")
for est in ("exMD", "exCV", "exLE"):
    cosim.simulate(m1, 0.01, 1e-4, approximation=cosim.Lagrange(k=1), solver=cosim.Exact(),
                   step_control=cosim.StepControl(estimator=est, rtol=1e-5))
try:
    cosim.simulate(m1, 0.01, 1e-4, approximation=cosim.Lagrange(k=1), solver=cosim.Exact(),
                   step_control=cosim.StepControl(estimator="exCV", rtol=1e-14, H_min=1e-5))
except cosim.SolverError:
    pass
po = models.precice_oscillator()
cosim.simulate(po, 0.1, 0.02, approximation=cosim.Lagrange(k=1), solver=cosim.RK4(h=0.005),
               scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20))
cosim.simulate(po, 0.1, 0.02, approximation=cosim.Lagrange(k=1), solver=cosim.RK4(h=0.005), scheme=cosim.
               WaveformRelaxation(omega=1.0, acceleration="iqn-ils", tol=1e-10, max_iter=50, waveform="substeps"))
try:
    cosim.simulate(po, 0.1, 0.05, approximation=cosim.Lagrange(k=1), solver=cosim.RK4(h=0.005),
                   scheme=cosim.Implicit(jacobian="fd", tol=1e-14, max_iter=1))
except cosim.SolverError:
    pass
chain = models.oscillator_chain(preset="table5.3", n_bodies=40, n_subsystems=8, seed=2)
cosim.simulate(chain, 2e-5, 2e-6, solver=cosim.CVODE(rtol=1e-6, atol=1e-9), threads=2, timing=True,
               divergence_growth=math.inf)
cosim.simulate_monolithic(chain, 2e-5, 2e-6, solver=cosim.CVODE(linear_solver="band"))
dmo = models.two_mass_oscillator()
for cpl in (cosim.PreStep(), cosim.NEPCE(), cosim.FOH()):
    cosim.simulate(dmo, 0.02, 1e-3, solver=cosim.Euler(h=1e-5), coupling=cpl)
cosim.simulate(models.two_mass_oscillator(ck=2e5, dk=200), 0.02, 1e-3, solver=cosim.Euler(h=1e-5),
               coupling=cosim.PreStep(variant="discrete"))
cosim.simulate(dmo, 0.02, 1e-3, solver=cosim.Euler(h=1e-5), coupling=cosim.PreStep(
    variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.99), timeLearning=0.005))
cosim.simulate(models.two_mass_oscillator(ck=2e5, dk=200), 0.02, 1e-3, solver=cosim.Euler(h=1e-5),
               coupling=cosim.PreStep(variant="discrete", intermediate_correction=True))
cosim.simulate(dmo, 0.02, 1e-3, solver=cosim.Euler(h=1e-5), coupling=cosim.PreStep(
    variant="discrete", jacobians=cosim.sysid.RLS(1, 1, lam=0.99), timeLearning=0.005, intermediate_correction=True))
sm = models.spring_mass()
cosim.simulate(sm, 1.0, 0.05, approximation=cosim.Hermite(1), solver=cosim.Exact(),
               coupling=cosim.BalanceCorrection(kernel="smooth", spread=2))
truck = models.quarter_truck()
cosim.simulate(truck, 0.05, 1e-4, solver=cosim.Exact(), step_control=cosim.ECCO(
    power_bonds=[("chassis.v", "chassis.F", "wheel.F", "wheel.v")], rtol=1e-4, atol=1e-4, H_min=1e-5, H_max=1e-2))
print("leakcheck done")
