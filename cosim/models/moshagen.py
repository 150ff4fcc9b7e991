"""Moshagen's test problems (moshagen.md §4-5): a linear system ẋ = A x split into scalar subsystems.

Each subsystem S_i owns the state x_i, outputs y_i = x_i and receives the other states as inputs, so that
ẋ_i = a_ii x_i + Σ_{j≠i} a_ij u_ij (moshagen eq. 89). The spring-mass oscillator (eq. 92) splits into a spring
(state s = x, output F = c x) and a mass (state v, input F: v̇ = −F/m) (sign fixed as in moshagen.md §8.2).
"""
from __future__ import annotations

import numpy as np

from ..system import LTI, CoupledSystem, connect
from ._units import declare

#: units of the spring-mass split (s [m], v [m/s], F [N]; m [kg], c [N/m]); the other problems are dimensionless
SPRING_MASS_UNITS = {"s": "m", "v": "m/s", "F": "N"}


def linear_split(A, x0, groups=None, names=None) -> CoupledSystem:
    """Split ẋ = A x into subsystems owning the index groups ``groups`` (default: one state each).

    Subsystem k has the states x_{D_k}, outputs y_k = x_{D_k} and one input per foreign state it depends on
    (moshagen eq. 14): ẋ_D = A_DD x_D + A_DI u, u = x_I. The states are named after their global index
    (``x1, x2, ...``, 1-based as in the paper), e.g. ``res["S2.x2"]``."""
    A = np.asarray(A, dtype=float)
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    n = A.shape[0]
    if A.shape != (n, n) or x0.size != n:
        raise ValueError(f"A: expected a square matrix matching x0 (size {x0.size}), got shape {A.shape}")
    groups = [[i] for i in range(n)] if groups is None else [list(g) for g in groups]
    if sorted(i for g in groups for i in g) != list(range(n)):
        raise ValueError("groups: must partition the state indices 0..n-1")
    names = names or [f"S{k + 1}" for k in range(len(groups))]
    owner = {i: k for k, g in enumerate(groups) for i in g}
    subs, conns = [], []
    for k, g in enumerate(groups):
        foreign = [j for j in range(n) if j not in g and np.any(A[np.ix_(g, [j])] != 0)]
        B = A[np.ix_(g, foreign)] if foreign else np.zeros((len(g), 0))
        subs.append(LTI(A[np.ix_(g, g)], B, np.eye(len(g)), None, x0=x0[g], name=names[k],
                        states=[f"x{i + 1}" for i in g]))
        for q, j in enumerate(foreign):
            conns.append(connect(f"{names[owner[j]]}.y[{groups[owner[j]].index(j)}]", f"{names[k]}.u[{q}]"))
    system = CoupledSystem(subs, conns)
    system.params = dict(A=A, x0=x0, groups=groups)
    return system


def unidirectional_2x2(x0=(1.0, 0.0)) -> CoupledSystem:
    """Problem U of moshagen.md §5: A = [[−1, 0], [1, −2]], x0 = (1, 0), x(t) = (e^{−t}, e^{−t} − e^{−2t})."""
    return linear_split([[-1.0, 0.0], [1.0, -2.0]], x0)


def mutual_2x2(a=1.0, b=-1.0, x0=(1.0, 0.0)) -> CoupledSystem:
    """Problem M of moshagen.md §5: A = [[0, a], [b, 0]] (default: the spring-mass oscillator with m = c = 1)."""
    return linear_split([[0.0, a], [b, 0.0]], x0)


def spring_mass(m=1.0, c=1.0, x0=(1.0, 0.0)) -> CoupledSystem:
    """Spring-mass oscillator of moshagen eq. (92), d = 0, split into ``spring`` (state s, output F = c s, input
    v) and ``mass`` (state v, input F, output v): ṡ = v, v̇ = −F/m. Energy E = ½ m v² + ½ c s²."""
    spring = LTI([[0.0]], [[1.0]], [[c]], None, x0=[x0[0]], name="spring", inputs=["v"], outputs=["F"],
                 states=["s"])
    mass = LTI([[0.0]], [[-1.0 / m]], [[1.0]], None, x0=[x0[1]], name="mass", inputs=["F"], outputs=["v"],
               states=["v"])
    system = CoupledSystem(list(declare(SPRING_MASS_UNITS, spring, mass)), [connect("mass.v", "spring.v"), connect("spring.F", "mass.F")])
    system.params = dict(m=m, c=c, x0=np.asarray(x0, float))
    return system
