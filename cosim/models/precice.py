"""preCICE's partitioned two-mass oscillator (the waveform-iteration benchmark of preCICE's tutorials and of the
quasi-Newton waveform iteration study): two masses between three springs,

    m1 ü1 = −k1 u1 − k12 (u1 − u2),     m2 ü2 = −k2 u2 − k12 (u2 − u1),

cut at the middle spring: ``S1`` (mass left) receives the displacement u2 and sends u1, ``S2`` (mass right)
receives u1 and sends u2 (each mass evaluates the coupling spring with the other's displacement). Defaults
m1 = m2 = 1, k1 = k2 = 4π², k12 = 16π², u(0) = (1, 0), u̇(0) = 0: eigenfrequencies 2π and 6π, and the analytic
solution u1,2(t) = ½ cos(2πt) ± ½ cos(6πt).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _check
from ..system import LTI, CoupledSystem, connect
from ._units import declare

#: units of the signals (displacements u, velocities v; the benchmark's parameters are SI numbers)
UNITS = {"u1": "m", "v1": "m/s", "u2": "m", "v2": "m/s"}


def precice_oscillator(m1=1.0, m2=1.0, k1=4 * math.pi ** 2, k2=4 * math.pi ** 2, k12=16 * math.pi ** 2,
                       u0=(1.0, 0.0), v0=(0.0, 0.0)) -> CoupledSystem:
    """The two-mass benchmark as a :class:`cosim.CoupledSystem` (subsystems ``S1``, ``S2``; states ``u1, v1`` and
    ``u2, v2``; S1 input ``u2`` / output ``u1``, S2 input ``u1`` / output ``u2``).

    ``system.solution(t)`` returns the analytic states (len(t) x 4: u1, v1, u2, v2) from the modal decomposition;
    ``system.params`` holds the parameters."""
    m1, m2, k1, k2, k12 = (_check.real(v, n, positive=True)
                           for n, v in (("m1", m1), ("m2", m2), ("k1", k1), ("k2", k2), ("k12", k12)))
    u0 = np.asarray(u0, dtype=float).reshape(-1)
    v0 = np.asarray(v0, dtype=float).reshape(-1)
    if u0.size != 2 or not np.all(np.isfinite(u0)):
        raise ValueError(f"u0: expected 2 finite initial displacements, got {u0}")
    if v0.size != 2 or not np.all(np.isfinite(v0)):
        raise ValueError(f"v0: expected 2 finite initial velocities, got {v0}")
    s1 = LTI([[0.0, 1.0], [-(k1 + k12) / m1, 0.0]], [[0.0], [k12 / m1]], [[1.0, 0.0]], [[0.0]], name="S1",
             x0=[u0[0], v0[0]], states=("u1", "v1"), inputs=["u2"], outputs=["u1"])
    s2 = LTI([[0.0, 1.0], [-(k2 + k12) / m2, 0.0]], [[0.0], [k12 / m2]], [[1.0, 0.0]], [[0.0]], name="S2",
             x0=[u0[1], v0[1]], states=("u2", "v2"), inputs=["u1"], outputs=["u2"])
    system = CoupledSystem(list(declare(UNITS, s1, s2)), [connect("S1.u1", "S2.u1"), connect("S2.u2", "S1.u2")])
    system.params = dict(m1=m1, m2=m2, k1=k1, k2=k2, k12=k12, u0=u0.copy(), v0=v0.copy())
    # modal solution: M ü + K u = 0, with q = M^{1/2} u: q̈ + Ω q = 0, Ω = M^{-1/2} K M^{-1/2} symmetric
    K = np.array([[k1 + k12, -k12], [-k12, k2 + k12]])
    ms = np.sqrt([m1, m2])
    w2, V = np.linalg.eigh(K / np.outer(ms, ms))
    w = np.sqrt(w2)
    q0, qd0 = V.T @ (ms * u0), V.T @ (ms * v0)

    def solution(t):
        """Analytic states (u1, v1, u2, v2) at the times t."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        c, s = np.cos(np.outer(t, w)), np.sin(np.outer(t, w))
        q = c * q0 + s * (qd0 / w)
        qd = -s * (q0 * w) + c * qd0
        u = (q @ V.T) / ms
        v = (qd @ V.T) / ms
        return np.column_stack([u[:, 0], v[:, 0], u[:, 1], v[:, 1]])

    system.solution = solution
    return system
