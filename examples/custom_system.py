"""Your own coupled system: LTI, Python and C subsystems
=====================================================

Build your own coupled system: an LTI subsystem, a nonlinear Python subsystem and a C-function-pointer subsystem.

A pendulum-like nonlinear oscillator (Python callables, the slow path) is driven by a linear low-pass filter (LTI),
and a third subsystem written against the C calling convention (here through ctypes; a compiled library or a numba
cfunc works the same way) integrates the filter output.

Run: .venv/bin/python examples/custom_system.py
"""
import ctypes

import numpy as np

import cosim

# S1: first-order low-pass filter x' = (u - x)/tau, y = x (LTI, exact integration possible)
tau = 0.05
s1 = cosim.LTI([[-1 / tau]], [[1 / tau]], [[1.0]], x0=[0.0], name="filter", inputs=["angle"], outputs=["smooth"])


# S2: nonlinear oscillator q'' = -sin(q) - 0.1 q' + 0.5 u, y = q (Python callables)
def rhs(t, x, u):
    return np.array([x[1], -np.sin(x[0]) - 0.1 * x[1] + 0.5 * u[0]])


def output(t, x, u):
    return x[:1]


s2 = cosim.ODE(rhs, output, nx=2, nu=1, ny=1, x0=[1.0, 0.0], name="pendulum", feedthrough=False,
               inputs=["torque"], outputs=["angle"])

# S3: integrator z' = u through C function pointers (signature of cosim.CModel)
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                      ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)


@CB
def integ_rhs(t, x, u, xdot, user):
    xdot[0] = u[0]
    return 0


@CB
def integ_out(t, x, u, y, user):
    y[0] = x[0]
    return 0


s3 = cosim.CModel(integ_rhs, integ_out, nx=1, nu=1, ny=1, x0=[0.0], name="integral", feedthrough=False)

system = cosim.CoupledSystem(
    [s1, s2, s3],
    [cosim.connect("pendulum.angle", "filter.angle"),
     cosim.connect("filter.smooth", "pendulum.torque", gain=-1.0),   # feedback: torque = -smooth angle
     cosim.connect("filter.smooth", "integral.u[0]")])

for H in (0.02, 0.01, 0.005):
    res = cosim.simulate(system, 10.0, H, scheme="gauss-seidel", approximation=cosim.Lagrange(2), startup="kraft",
                         solver={"filter": cosim.Exact(), "pendulum": cosim.CVODE(rtol=1e-11, atol=1e-13),
                                 "integral": cosim.RK4(substeps=4)})
    ref = cosim.simulate_monolithic(system, 10.0, t_eval=res.t, solver=cosim.CVODE(rtol=1e-12, atol=1e-14))
    print(f"H = {H:<6} max_rel error = {res.error_to(ref)['max_rel']:.3e}  (global order k+1 = 3: the ratio approaches 8 as H shrinks)")
