"""Two-mass (dual-mass) oscillator in every decomposition (kraft2021 §2, busch2016 §3, genser2020 §3.1).

Mass m1 is tied to the left wall by (c1, d1), mass m2 to the right wall by (c2, d2), and the masses are coupled by
the spring/damper (ck, dk). Monolithic equations (busch2016 eq. 2)::

    m1 ẍ1 = −c1 x1 − d1 ẋ1 + ck (x2 − x1) + dk (ẋ2 − ẋ1)
    m2 ẍ2 = −c2 x2 − d2 ẋ2 − ck (x2 − x1) − dk (ẋ2 − ẋ1)

Decompositions (``coupling=``):

* ``"force/displacement"`` (genser2020 §3.1, kraft2021 eq. 2.7): S1 is force driven (input F, outputs x1, ẋ1);
  S2 is base-point excited (inputs x1, ẋ1) and outputs the coupling force F = ck(x2 − x1) + dk(ẋ2 − ẋ1): S2 has
  feed-through (D2 = [−ck, −dk]). With ``feedthrough=False`` S2 outputs (x2, ẋ2) instead and the master computes
  F from the exchanged states (kraft2021 eq. 2.6).
* ``"displacement/displacement"`` (kraft2021 eq. 2.8): the coupling element is duplicated; each subsystem gets the
  other body's (x, ẋ). No feed-through.
* ``"force/force"`` (kraft2021 eq. 2.5): both subsystems are force driven; the master computes
  λ = ck(x2 − x1) + dk(ẋ2 − ẋ1) from the outputs (x, ẋ) of both. No feed-through.

Options of genser2020 for force/displacement: ``nonlinear=True`` replaces ck, dk by the progressive
characteristics of genser2020 §3.1.1 (eq. 3.6-3.7, Table 3.1 defaults), ``impulse=True`` adds the external force impulses of
§3.1.2 (eq. 3.8) on m1.
"""
from __future__ import annotations

import numpy as np

from .. import _check
from ..system import LTI, BuiltinModel, CoupledSystem, connect
from ._units import declare

COUPLINGS = ("force/displacement", "displacement/displacement", "force/force")

# subsystem names and state names (x [m], v = ẋ [m/s]) in every decomposition
_S1 = dict(name="S1", states=("x1", "v1"))
_S2 = dict(name="S2", states=("x2", "v2"))
#: units of every signal name the decompositions use (positions, velocities, the coupling force F = λ)
UNITS = {"x1": "m", "v1": "m/s", "x2": "m", "v2": "m/s", "F": "N", "lam": "N"}

# genser2020 Table 3.1: progressive coupling characteristics
NONLINEAR_DEFAULTS = dict(c=5e5, ck_max=2.5e5, ck_min=2.5e4, n_c=1.5, d=1e3, dk_max=3e3, dk_min=5e2, n_d=1.5)


def two_mass_oscillator(ck=1e5, dk=1e3, coupling="force/displacement", *, m1=10.0, m2=10.0, c1=1e6, c2=1e7,
                        d1=1.0, d2=2.0, x0=(0.1, 0.0, 0.0, 0.0), feedthrough=True, nonlinear=False,
                        nonlinear_params=None, impulse=False, impulse_amplitude=5e5, impulse_period=0.05,
                        impulse_width=1e-5, external_force=None) -> CoupledSystem:
    """Build the two-mass oscillator as a :class:`cosim.CoupledSystem` with subsystems ``S1`` (mass m1) and ``S2``.

    Signal names: states ``S1.x1, S1.v1`` (x1 [m], ẋ1 [m/s]) and ``S2.x2, S2.v2``; the inputs and outputs are named
    after what they carry (force/displacement: ``S1.F`` input, ``S2.F`` output [N]; ``S1``'s outputs ``x1, v1``).
    The subsystems declare these units (:data:`UNITS`), so ``res.units`` and ``res.plot`` know them.

    Defaults are genser2020 §3.1 (m1 = m2 = 10 kg, c1 = 1e6 N/m, c2 = 1e7 N/m, d1 = 1, d2 = 2 Ns/m, nominal
    ck = 1e5 N/m, dk = 1e3 Ns/m, x0 = (x1, ẋ1, x2, ẋ2) = (0.1, 0, 0, 0)). The returned object has ``params``.

    ``external_force=True`` is the thesis name of ``impulse=True`` (genser2020 §10.3, eq. 3.8: F_ex = 5e5 sin(10 t)
    during one Euler step of 1e-5 s every 50 ms). Subsystems with known exact continuous interface Jacobians
    (genser eq. 2.12-2.14) carry them: :func:`interface_jacobians` returns them per subsystem (the LTI halves and the
    impulse-driven S1, which is linear in its state and input; the nonlinear S2 has none).
    """
    if external_force is not None:
        if not isinstance(external_force, (bool, np.bool_)):
            raise TypeError(f"external_force: expected True or False, got {external_force!r}")
        impulse = bool(impulse) or bool(external_force)
    if coupling not in COUPLINGS:
        raise ValueError(f"coupling: must be one of {COUPLINGS}, got {coupling!r}")
    m1, m2 = _check.real(m1, "m1", positive=True), _check.real(m2, "m2", positive=True)
    c1, c2, d1, d2 = (_check.real(v, n, nonneg=True) for n, v in (("c1", c1), ("c2", c2), ("d1", d1), ("d2", d2)))
    ck, dk = _check.real(ck, "ck", nonneg=True), _check.real(dk, "dk", nonneg=True)
    x0 = np.asarray(x0, dtype=float).reshape(-1)
    if x0.size != 4 or not np.all(np.isfinite(x0)):
        raise ValueError(f"x0: expected 4 finite values (x1, v1, x2, v2), got {x0}")
    if (nonlinear or impulse) and coupling != "force/displacement":
        raise ValueError("nonlinear/impulse: only available for coupling='force/displacement' (genser2020 §3.1.1-3.1.2)")
    if (nonlinear or impulse) and not feedthrough:
        raise ValueError("nonlinear/impulse: need feedthrough=True (S2 outputs the coupling force)")
    params = dict(m1=m1, m2=m2, c1=c1, c2=c2, d1=d1, d2=d2, ck=ck, dk=dk, x0=x0.copy(), coupling=coupling)

    A1 = np.array([[0.0, 1.0], [-c1 / m1, -d1 / m1]])
    A2 = np.array([[0.0, 1.0], [-c2 / m2, -d2 / m2]])
    I2 = np.eye(2)
    if coupling == "force/displacement":
        if impulse:
            ip = [_check.real(impulse_amplitude, "impulse_amplitude", nonneg=True),
                  _check.real(impulse_period, "impulse_period", positive=True),
                  _check.real(impulse_width, "impulse_width", positive=True)]
            s1 = BuiltinModel("dmo_force_impulse", [m1, c1, d1] + ip, nx=2, nu=1, ny=2, x0=x0[:2], **_S1,
                              feedthrough=False, inputs=["F"], outputs=["x1", "v1"])
            # linear in (x, F): its exact IJs are those of (A1, B1, I, 0); F_ex is an exogenous excitation
            s1.linearization = (A1, np.array([[0.0], [1.0 / m1]]), I2, np.zeros((2, 1)))
            params.update(impulse_amplitude=ip[0], impulse_period=ip[1], impulse_width=ip[2])
        else:
            s1 = LTI(A1, [[0.0], [1.0 / m1]], I2, np.zeros((2, 1)), x0=x0[:2], **_S1, inputs=["F"],
                     outputs=["x1", "v1"])
        A2c = np.array([[0.0, 1.0], [-(c2 + ck) / m2, -(d2 + dk) / m2]])
        B2c = np.array([[0.0, 0.0], [ck / m2, dk / m2]])
        if feedthrough:
            if nonlinear:
                nl = dict(NONLINEAR_DEFAULTS, **(nonlinear_params or {}))
                unknown = set(nl) - set(NONLINEAR_DEFAULTS)
                if unknown:
                    raise ValueError(f"nonlinear_params: unknown names {sorted(unknown)}")
                p = [m2, c2, d2] + [_check.real(nl[k], k, positive=True) for k in NONLINEAR_DEFAULTS]
                s2 = BuiltinModel("dmo_base_nonlinear", p, nx=2, nu=2, ny=1, x0=x0[2:], **_S2,
                                  feedthrough=True, inputs=["x1", "v1"], outputs=["F"])
                params["nonlinear_params"] = nl
            else:
                s2 = LTI(A2c, B2c, [[ck, dk]], [[-ck, -dk]], x0=x0[2:], **_S2, inputs=["x1", "v1"],
                         outputs=["F"])
            conns = [connect("S2.F", "S1.F"), connect("S1.x1", "S2.x1"), connect("S1.v1", "S2.v1")]
        else:
            s2 = LTI(A2c, B2c, I2, np.zeros((2, 2)), x0=x0[2:], **_S2, inputs=["x1", "v1"], outputs=["x2", "v2"])
            conns = [connect("S1.x1", "S2.x1"), connect("S1.v1", "S2.v1"),
                     connect("S2.x2", "S1.F", ck), connect("S1.x1", "S1.F", -ck),
                     connect("S2.v2", "S1.F", dk), connect("S1.v1", "S1.F", -dk)]
    elif coupling == "displacement/displacement":
        s1 = LTI([[0.0, 1.0], [-(c1 + ck) / m1, -(d1 + dk) / m1]], [[0.0, 0.0], [ck / m1, dk / m1]], I2,
                 np.zeros((2, 2)), x0=x0[:2], **_S1, inputs=["x2", "v2"], outputs=["x1", "v1"])
        s2 = LTI([[0.0, 1.0], [-(c2 + ck) / m2, -(d2 + dk) / m2]], [[0.0, 0.0], [ck / m2, dk / m2]], I2,
                 np.zeros((2, 2)), x0=x0[2:], **_S2, inputs=["x1", "v1"], outputs=["x2", "v2"])
        conns = [connect("S2.x2", "S1.x2"), connect("S2.v2", "S1.v2"), connect("S1.x1", "S2.x1"),
                 connect("S1.v1", "S2.v1")]
    else:  # force/force: λ = ck (x2 − x1) + dk (v2 − v1) acts as +λ on m1 and −λ on m2
        s1 = LTI(A1, [[0.0], [1.0 / m1]], I2, np.zeros((2, 1)), x0=x0[:2], **_S1, inputs=["lam"],
                 outputs=["x1", "v1"])
        s2 = LTI(A2, [[0.0], [-1.0 / m2]], I2, np.zeros((2, 1)), x0=x0[2:], **_S2, inputs=["lam"],
                 outputs=["x2", "v2"])
        conns = []
        for dst in ("S1.lam", "S2.lam"):
            conns += [connect("S2.x2", dst, ck), connect("S1.x1", dst, -ck), connect("S2.v2", dst, dk),
                      connect("S1.v1", dst, -dk)]
    system = CoupledSystem(list(declare(UNITS, s1, s2)), conns)
    system.params = params
    return system


def interface_jacobians(system) -> dict:
    """Exact continuous IJs (genser eq. 2.12-2.14: dS/dy = C A C^+, dS/du = C B − C A C^+ D, dS/du' = D) of every
    subsystem of ``system`` that knows them: {name: cosim.sysid.ContinuousIJ}. Subsystems without known IJs (the
    nonlinear S2) are left out."""
    from .. import sysid
    from ..system import CoupledSystem
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"system: expected a cosim.CoupledSystem, got {type(system).__name__}")
    out = {}
    for s in system.subsystems:
        lin = (s.A, s.B, s.C, s.D) if isinstance(s, LTI) else getattr(s, "linearization", None)
        if lin is not None:
            out[s.name] = sysid.ij_continuous(*lin)
    return out


def monolithic_matrix(m1=10.0, m2=10.0, c1=1e6, c2=1e7, d1=1.0, d2=2.0, ck=1e5, dk=1e3):
    """System matrix of the undecomposed linear oscillator, state (x1, ẋ1, x2, ẋ2) (busch2016 eq. 2)."""
    return np.array([[0, 1, 0, 0],
                     [-(c1 + ck) / m1, -(d1 + dk) / m1, ck / m1, dk / m1],
                     [0, 0, 0, 1],
                     [ck / m2, dk / m2, -(c2 + ck) / m2, -(d2 + dk) / m2]], dtype=float)
