"""Kraft's two-mass oscillators M1, M2, M3 (kraft2021 §18.5, Table 5.2) in force/force decomposition.

Mass m1 is tied to the left wall by element 1 (c1, d1, C1, D1), m2 to the right wall by element 3 (c2, ...), and
the masses are coupled by the cut element (c_c, d_c, C_c, D_c) with the law (2.9)
F = c Δx + d Δv + C sgn(Δx)|Δx|^e_x + D sgn(Δv)|Δv|^e_v. The coupling variable is the force λ of the cut element
(kraft2021 eq. 2.5): m1 v̇1 = −F_1(x1, v1) + λ (+ contact A_C exp(B_C x1) on m1 in M3), m2 v̇2 = −F_3(x2, v2) − λ,
λ = F_c(x2 − x1, v2 − v1).

* "M1" (linear, undamped): two LTI subsystems S1, S2 with input ``lam``; λ is formed by the master from the
  outputs (linear coupling), so :class:`cosim.Exact` integrates the subsystems exactly.
* "M2" (nonlinear, e_x = 7) and "M3" (contact on m1): built-in C subsystems S1, S2 plus a stateless unit ``C``
  (the cut element) that outputs λ from (x1, v1, x2, v2); the consistent update gives λ_{N+1} = φ(y_{N+1})
  (eq. 2.26). Integrate them with CVODE at tight tolerances (Table 5.2 settings: rtol 1e-12).

The monitored variables of Kraft's estimators are declared in ``system.monitor``: positions and velocities of the
coupling bodies m1, m2 and the coupling variable λ. t_sim is not given in the thesis (kraft2021.md §22.9); the
models' ``t_end`` attribute (0.1 s) is this package's choice.
"""
from __future__ import annotations

import numpy as np

from .. import _check
from ..system import LTI, BuiltinModel, CoupledSystem, connect
from ._units import declare
from .two_mass import UNITS  # x1, v1, x2, v2 [m, m/s] and λ [N], as in the two-mass oscillator

#: kraft2021 Table 5.2 (d_i = 0 for all elements)
TABLE_5_2 = {
    "M1": dict(m1=2.0, m2=1.0, c1=1.0e5, cc=5.0e3, c2=1.0e3, C1=0.0, Cc=0.0, C2=0.0, D1=0.0, Dc=0.0, D2=0.0,
               ex=3.0, ev=3.0, AC=0.0, BC=0.0, x0=(-2.0, 1.0e2, 0.0, -2.0e2)),
    "M2": dict(m1=5.0, m2=1.0, c1=1.0e3, cc=1.0e2, c2=1.0e4, C1=1.0e4, Cc=1.0e5, C2=1.0e3, D1=1.0e-3, Dc=5.0e-4,
               D2=0.0, ex=7.0, ev=3.0, AC=0.0, BC=0.0, x0=(-1.0, 1.0e2, 0.0, -2.0e2)),
    "M3": dict(m1=5.0e1, m2=1.0, c1=1.0e5, cc=1.0e5, c2=1.0e3, C1=0.0, Cc=1.0e5, C2=0.0, D1=0.0, Dc=1.0e-2,
               D2=0.0, ex=3.0, ev=3.0, AC=-1.0e-2, BC=1.0e7, x0=(-2.0, 1.0e2, 0.0, -2.0e2)),
}

MONITOR = {"pos": ["S1.x1", "S2.x2"], "vel": ["S1.v1", "S2.v2"], "u": ["S1.lam"]}


def kraft_two_mass(model: str = "M1", **overrides) -> CoupledSystem:
    """Kraft's two-mass oscillator ``"M1"``, ``"M2"`` or ``"M3"`` (kraft2021 §18.5 Table 5.2; FF decomposition).

    ``overrides`` replace Table 5.2 entries (m1, m2, c1, cc, c2, C1, Cc, C2, D1, Dc, D2, ex, ev, AC, BC, x0) —
    e.g. for the undamped asymmetric variants of §18.8. Returns a :class:`cosim.CoupledSystem` with ``params``,
    ``monitor`` (coupling bodies and λ) and ``t_end`` (0.1 s). References: ``cosim.simulate_monolithic(sys, ...)``
    (exact for M1, CVODE for M2/M3).
    """
    if not isinstance(model, str) or model not in TABLE_5_2:
        raise ValueError(f"model: must be one of {list(TABLE_5_2)}, got {model!r}")
    p = dict(TABLE_5_2[model])
    unknown = [k for k in overrides if k not in p]
    if unknown:
        raise ValueError(f"overrides: unknown parameters {unknown}; known: {list(p)}")
    for k, v in overrides.items():
        if k == "x0":
            v = np.asarray(v, dtype=float).reshape(-1)
            if v.size != 4 or not np.all(np.isfinite(v)):
                raise ValueError(f"x0: expected 4 finite values (x1, v1, x2, v2), got {v}")
            p[k] = tuple(v)
        else:
            p[k] = _check.real(v, k)
    for k in ("m1", "m2"):
        if not p[k] > 0:
            raise ValueError(f"{k}: mass must be positive, got {p[k]!r}")
    x0 = np.asarray(p["x0"], dtype=float)
    linear = all(p[k] == 0.0 for k in ("C1", "Cc", "C2", "D1", "Dc", "D2", "AC"))
    S1 = dict(name="S1", states=("x1", "v1"), inputs=["lam"], outputs=["x1", "v1"])
    S2 = dict(name="S2", states=("x2", "v2"), inputs=["lam"], outputs=["x2", "v2"])
    if linear:
        m1, m2 = p["m1"], p["m2"]
        s1 = LTI([[0.0, 1.0], [-p["c1"] / m1, 0.0]], [[0.0], [1.0 / m1]], np.eye(2), np.zeros((2, 1)), x0=x0[:2],
                 **S1)
        s2 = LTI([[0.0, 1.0], [-p["c2"] / m2, 0.0]], [[0.0], [-1.0 / m2]], np.eye(2), np.zeros((2, 1)), x0=x0[2:],
                 **S2)
        conns = []
        for dst in ("S1.lam", "S2.lam"):
            conns += [connect("S2.x2", dst, p["cc"]), connect("S1.x1", dst, -p["cc"])]
        system = CoupledSystem(list(declare(UNITS, s1, s2)), conns)
    else:
        s1 = BuiltinModel("kraft_mass", [p["m1"], p["c1"], 0.0, p["C1"], p["D1"], p["ex"], p["ev"], 1.0, p["AC"],
                                         p["BC"]], nx=2, nu=1, ny=2, x0=x0[:2], feedthrough=False, **S1)
        s2 = BuiltinModel("kraft_mass", [p["m2"], p["c2"], 0.0, p["C2"], p["D2"], p["ex"], p["ev"], -1.0, 0.0, 0.0],
                          nx=2, nu=1, ny=2, x0=x0[2:], feedthrough=False, **S2)
        el = BuiltinModel("kraft_element", [p["cc"], 0.0, p["Cc"], p["Dc"], p["ex"], p["ev"]], nx=0, nu=4, ny=1,
                          x0=np.zeros(0), name="C", feedthrough=True, inputs=["x1", "v1", "x2", "v2"],
                          outputs=["lam"])
        conns = [connect("C.lam", "S1.lam"), connect("C.lam", "S2.lam"), connect("S1.x1", "C.x1"),
                 connect("S1.v1", "C.v1"), connect("S2.x2", "C.x2"), connect("S2.v2", "C.v2")]
        system = CoupledSystem(list(declare(UNITS, s1, s2, el)), conns)
    system.params = dict(p, model=model, linear=linear)
    system.monitor = {g: list(v) for g, v in MONITOR.items()}
    system.t_end = 0.1
    return system


#: kraft2021 §18.8 Table 5.6 (linear, c1 = c_c = c2, d_i = 0 except the coupling damping d_c; force on m2)
TABLE_5_6 = dict(m1=1.0e-6, m2=1.0, c=1.0e6, dc=0.0, x0=(5.0e-2, 0.0, 0.0, 0.0), FH=1.0e5, OmegaH=5.0e1, phiH=0.0)


def kraft_asymmetric(m1: float = 1.0e-6, dc: float = 0.0, *, m2: float = 1.0, c: float = 1.0e6, FH: float = 1.0e5,
                     OmegaH: float = 5.0e1, phiH: float = 0.0, x0=(5.0e-2, 0.0, 0.0, 0.0)) -> CoupledSystem:
    """Kraft's asymmetric two-mass oscillator (kraft2021 §18.8, Table 5.6; FF decomposition): masses m1 (default
    1e-6 kg, mass ratio m_r = m2/m1 = 1e6) and m2, springs c1 = c_c = c2 = c, coupling damping d_c (default 0:
    undamped), the harmonic force ΔF_H sin(Ω_H t + φ_H) on m2 (φ_H unspecified in the thesis: 0), x0 = (x1, v1, x2,
    v2) = (5e-2, 0, 0, 0). t_sim = 1 s in the thesis (``t_end``). Units: built-in C subsystems S1, S2 and the cut
    element C (λ = c Δx + d_c Δv), as for M2/M3; ``monitor`` as for :func:`kraft_two_mass`."""
    vals = {}
    for k, v in dict(m1=m1, dc=dc, m2=m2, c=c, FH=FH, OmegaH=OmegaH, phiH=phiH).items():
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"{k}: expected a real number, got {v!r}")
        if not np.isfinite(v):
            raise ValueError(f"{k}: must be finite, got {v!r}")
        vals[k] = float(v)
    for k in ("m1", "m2", "c"):
        if not vals[k] > 0:
            raise ValueError(f"{k}: must be positive, got {vals[k]!r}")
    if vals["dc"] < 0:
        raise ValueError(f"dc: must be >= 0, got {vals['dc']!r}")
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    if x0.size != 4 or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0: expected 4 finite values (x1, v1, x2, v2), got {x0}")
    S1 = dict(name="S1", states=("x1", "v1"), inputs=["lam"], outputs=["x1", "v1"])
    S2 = dict(name="S2", states=("x2", "v2"), inputs=["lam"], outputs=["x2", "v2"])
    s1 = BuiltinModel("kraft_mass", [vals["m1"], vals["c"], 0.0, 0.0, 0.0, 3.0, 3.0, 1.0, 0.0, 0.0], nx=2, nu=1, ny=2,
                      x0=x0[:2], feedthrough=False, **S1)
    s2 = BuiltinModel("kraft_mass", [vals["m2"], vals["c"], 0.0, 0.0, 0.0, 3.0, 3.0, -1.0, 0.0, 0.0, vals["FH"],
                                     vals["OmegaH"], vals["phiH"]], nx=2, nu=1, ny=2, x0=x0[2:], feedthrough=False, **S2)
    el = BuiltinModel("kraft_element", [vals["c"], vals["dc"], 0.0, 0.0, 3.0, 3.0], nx=0, nu=4, ny=1, x0=np.zeros(0),
                      name="C", feedthrough=True, inputs=["x1", "v1", "x2", "v2"], outputs=["lam"])
    conns = [connect("C.lam", "S1.lam"), connect("C.lam", "S2.lam"), connect("S1.x1", "C.x1"),
             connect("S1.v1", "C.v1"), connect("S2.x2", "C.x2"), connect("S2.v2", "C.v2")]
    system = CoupledSystem(list(declare(UNITS, s1, s2, el)), conns)
    system.params = dict(vals, x0=tuple(x0), model="asymmetric")
    system.monitor = {g: list(v) for g, v in MONITOR.items()}
    system.t_end = 1.0
    return system
