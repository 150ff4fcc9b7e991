"""Westland Lynx helicopter (S1) with a reconstructed H∞ loop-shaping controller (S2) (genser2020 §10.4, App. A, C).

S1 is the linearised level-2 rationalised Lynx model about hover (Padfield; Skogestad & Postlethwaite), genser2020
eq. (4.1)-(4.2)::

    ẋ1 = A1 x1 + B1 u1,   y1 = C1 x1   (D1 = 0)
    x1 = (θ pitch, φ roll, p roll rate, q pitch rate, ξ yaw rate, v_x, v_y, v_z)       states  theta, phi, p, q, xi, vx, vy, vz
    u1 = (main rotor collective, longitudinal cyclic, lateral cyclic, tail rotor)      inputs  collective, long_cyclic,
                                                                                               lat_cyclic, tail_rotor
    y1 = (Ḣ heave velocity [ft/s], θ, φ, ψ̇ heading rate, p, q)                         outputs Hdot, theta, phi, psidot, p, q

The numbers are those of genser2020.md Appendix A (7 significant digits); max Re λ(A1) = 0.2342: open-loop unstable.

S2, the controller, is a *reconstruction*: the thesis's 20-state S/KS H∞ controller is not published (genser2020.md
§0.3, App. C records an attempt that did not match the thesis's C2 B2). :func:`helicopter_controller` designs a
Glover-McFarlane H∞ loop-shaping controller instead (design steps in its docstring). The coupling is the thesis's
(§10.4): u1 = y2 and u2 = W r − y1 with the pilot commands r = (Ḣ_ref, θ_ref, φ_ref, ψ̇_ref) and zero rate references,
i.e. u2 = (Ḣ_ref − Ḣ, θ_ref − θ, φ_ref − φ, ψ̇_ref − ψ̇, −p, −q).

The pilot commands are an exogenous signal. The thesis's pilot commands are missing too (figures only); the default
``pilot="v1"`` is the v1-like profile suggested by the spec (§10.4): smooth, never two commands at once, heave pulses in
[1, 11], [35, 45], [81, 91] and [115, 125] s (see :func:`pilot_v1`). In a co-simulation the pilot is its own
subsystem ``pilot`` (no states, outputs Hdot_ref, theta_ref, phi_ref, psidot_ref), so its commands are sampled at the
communication points like any output (the spec's "hold r at r(T^k)"); the monolithic reference sees r(t).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _check
from ..system import LTI, ODE, CoupledSystem, connect
from ._units import declare

STATES = ("theta", "phi", "p", "q", "xi", "vx", "vy", "vz")
INPUTS = ("collective", "long_cyclic", "lat_cyclic", "tail_rotor")
OUTPUTS = ("Hdot", "theta", "phi", "psidot", "p", "q")
#: controller inputs u2 = (r − y_ctrl, −y_rate) and the pilot's outputs r
CONTROLLER_INPUTS = ("e_Hdot", "e_theta", "e_phi", "e_psidot", "e_p", "e_q")
PILOT_OUTPUTS = ("Hdot_ref", "theta_ref", "phi_ref", "psidot_ref")
#: units of the signals (genser2020 §10.4: Ḣ and the velocities in ft/s, attitudes in rad, rates in rad/s, the four
#: actuator inputs in rad); the controller's own states have none
UNITS = {"theta": "rad", "phi": "rad", "p": "rad/s", "q": "rad/s", "xi": "rad/s", "vx": "ft/s", "vy": "ft/s",
         "vz": "ft/s", "Hdot": "ft/s", "psidot": "rad/s", **{u: "rad" for u in INPUTS}}
UNITS.update({f"e_{k}": UNITS[k] for k in ("Hdot", "theta", "phi", "psidot", "p", "q")})
UNITS.update({f"{k}_ref": UNITS[k] for k in ("Hdot", "theta", "phi", "psidot")})

# genser2020.md Appendix A (from the Skogestad & Postlethwaite model; rounded to 7 significant digits)
A1 = np.array([
    [0, 0, 0, 0.9985738, 0.05338427, 0, 0, 0],
    [0, 0, 1, -0.003182219, 0.05952466, 0, 0, 0],
    [0, 0, -11.5705, -2.544638, -0.06360263, 0.1067805, -0.09491867, 0.007107574],
    [0, 0, 0.4393566, -1.998182, 0, 0.01665188, 0.01846205, -0.001187471],
    [0, 0, -2.040895, -0.4589992, -0.7350278, 0.01925576, -0.004595622, 0.002120361],
    [-32.10361, 0, -0.503355, 2.297859, 0, -0.02121581, -0.02116792, 0.01581159],
    [0.1021612, 32.05783, -2.347218, -0.5036116, 0.8349476, 0.02122657, -0.03787974, 0.0003540039],
    [-1.910973, 1.713829, -0.004005432, -0.05741119, 0, 0.01398963, -0.0009067534, -0.2905135]])
B1 = np.array([
    [0, 0, 0, 0],
    [0, 0, 0, 0],
    [0.1243351, 0.08278584, -2.752478, -0.01788877],
    [-0.03635892, 0.4750953, 0.01429074, 0],
    [0.3044915, 0.01495802, -0.4965184, -0.2067419],
    [0.2877355, -0.5445061, -0.01637936, 0],
    [-0.01907349, 0.01636744, -0.5445361, 0.2348423],
    [-4.820633, -0.0003814697, 0, 0]])
C1 = np.array([
    [0, 0, 0, 0, 0, 0.0595, 0.05329, -0.9968],
    [1, 0, 0, 0, 0, 0, 0, 0],
    [0, 1, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, -0.05348, 1, 0, 0, 0],
    [0, 0, 1, 0, 0, 0, 0, 0],
    [0, 0, 0, 1, 0, 0, 0, 0]])
for _m in (A1, B1, C1):
    _m.setflags(write=False)

#: The thesis's printed exact IJs (genser2020 eq. 4.5, 4.6, 4.9, 4.10; 3 significant digits): ``dS1dy`` (6x6),
#: ``dS1du`` (6x4) of the helicopter and ``dS2dy`` (4x4), ``dS2du`` (4x6) of the thesis's (unpublished) controller.
#: Both ∂S/∂u̇ are zero. Used for the IJ-level tests (AT-2, AT-5, AT-6).
THESIS_IJ = dict(
    dS1dy=np.array([
        [-2.91e-01, 1.37e-04, 1.70e-05, 4.45e-02, -1.51e-01, 1.69e-01],
        [0.00e+00, 0.00e+00, 0.00e+00, 5.34e-02, 0.00e+00, 1.00e+00],
        [0.00e+00, 0.00e+00, 0.00e+00, 5.95e-02, 1.00e+00, 1.16e-06],
        [-1.38e-03, 0.00e+00, 0.00e+00, -7.35e-01, -2.06e+00, -3.91e-01],
        [-5.79e-03, 0.00e+00, 0.00e+00, -6.36e-02, -1.16e+01, -2.55e+00],
        [3.16e-03, 0.00e+00, 0.00e+00, -3.29e-16, 4.39e-01, -2.00e+00]]),
    dS1du=np.array([
        [4.82e+00, -3.11e-02, -3.00e-02, 1.25e-02],
        [0.00e+00, 0.00e+00, 0.00e+00, 0.00e+00],
        [0.00e+00, 0.00e+00, 0.00e+00, 0.00e+00],
        [3.06e-01, -1.05e-02, -4.97e-01, -2.07e-01],
        [1.24e-01, 8.28e-02, -2.75e+00, -1.79e-02],
        [-3.64e-02, 4.75e-01, 1.43e-02, 0.00e+00]]),
    dS2dy=np.array([
        [-2.25e+01, -3.69e+01, -3.05e+00, 4.07e+01],
        [-4.99e+01, -2.13e+02, -1.78e+01, 2.37e+02],
        [-4.83e+00, -2.06e+01, -2.78e-01, 2.55e+01],
        [5.41e+01, 2.32e+02, 2.19e+01, -2.67e+02]]),
    dS2du=np.array([
        [6.34e+01, 1.90e+02, -4.93e+01, 1.87e+02, -2.68e+01, 1.25e+01],
        [2.84e+02, 1.12e+03, -2.86e+02, 1.08e+03, -1.55e+02, 7.33e+01],
        [2.77e+01, 1.06e+02, -4.58e+01, 1.16e+02, -1.60e+01, 5.33e+00],
        [-3.04e+02, -1.19e+03, 3.32e+02, -1.25e+03, 1.69e+02, -7.66e+01]]),
)
for _m in THESIS_IJ.values():
    _m.setflags(write=False)

# v1-like pilot commands (genser2020.md §10.4 suggestion): (command index, start [s], end [s], amplitude)
V1_PULSES = (
    (0, 1.0, 11.0, 1.0), (0, 35.0, 45.0, -1.0), (0, 81.0, 91.0, 1.0), (0, 115.0, 125.0, -1.0),   # Ḣ_ref [ft/s]
    (1, 14.0, 24.0, 0.1), (1, 94.0, 104.0, -0.1),                                                  # θ_ref [rad]
    (2, 48.0, 58.0, 0.1), (2, 128.0, 138.0, -0.1),                                                 # φ_ref [rad]
    (3, 62.0, 76.0, 0.05), (3, 140.0, 149.0, -0.05),                                               # ψ̇_ref [rad/s]
)


def _real_scalar(v, name, positive=False, minimum=None):
    v = _check.real(v, name, positive=positive)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name}: must be >= {minimum}, got {v!r}")
    return v


def pilot_v1(t) -> np.ndarray:
    """The default pilot commands r(t) = (Ḣ_ref [ft/s], θ_ref [rad], φ_ref [rad], ψ̇_ref [rad/s]) over 0-150 s.

    A reconstruction of the thesis's v1 pattern (its figures are missing; genser2020.md §10.4): raised-cosine pulses
    r_i(t) = a (1 − cos(2π (t − t_0)/(t_1 − t_0)))/2 on [t_0, t_1] (continuous with a continuous derivative), never
    two commands at once. Heave pulses of ±1 ft/s in [1, 11], [35, 45], [81, 91], [115, 125] s; pitch and roll pulses
    of ±0.1 rad; heading-rate pulses of ±0.05 rad/s (:data:`V1_PULSES`). ``t``: scalar or array; returns shape
    ``t.shape + (4,)``. A scalar ``t`` takes a plain-Python path (about 3 µs instead of ~100 µs through NumPy: the
    co-simulation calls it once per macro step)."""
    if isinstance(t, (float, int, np.floating, np.integer)) and not isinstance(t, bool):
        tf = float(t)
        if not math.isfinite(tf):
            raise ValueError("t: expected finite real times")
        r = [0.0, 0.0, 0.0, 0.0]
        for i, t0, t1, a in V1_PULSES:
            if t0 <= tf <= t1:
                r[i] += 0.5 * a * (1.0 - math.cos(2.0 * math.pi * (tf - t0) / (t1 - t0)))
        return np.array(r)
    T = np.asarray(t, dtype=float)
    if T.dtype.kind not in "f" or not np.all(np.isfinite(T)):
        raise ValueError("t: expected finite real times")
    r = np.zeros(T.shape + (4,))
    for i, t0, t1, a in V1_PULSES:
        inside = (T >= t0) & (T <= t1)
        r[..., i] += np.where(inside, 0.5 * a * (1.0 - np.cos(2.0 * np.pi * (T - t0) / (t1 - t0))), 0.0)
    return r


def _pilot_function(pilot):
    """r(t) -> (4,) from ``pilot``: "v1", a callable, or samples (t, r) interpolated linearly (held outside)."""
    if isinstance(pilot, str):
        if pilot != "v1":
            raise ValueError(f"pilot: unknown pattern {pilot!r}; use 'v1', a callable r(t), samples (t, r) or None")
        return pilot_v1
    if callable(pilot):
        r0 = np.asarray(pilot(0.0), dtype=float).reshape(-1)
        if r0.size != 4 or not np.all(np.isfinite(r0)):
            raise ValueError(f"pilot: r(0) must be 4 finite values (Hdot_ref, theta_ref, phi_ref, psidot_ref), "
                             f"got {r0}")
        return lambda t: np.asarray(pilot(t), dtype=float).reshape(4)
    if isinstance(pilot, (tuple, list)) and len(pilot) == 2:
        ts = _check.matrix(np.reshape(pilot[0], (1, -1)), "pilot[0]")[0]
        rs = _check.matrix(pilot[1], "pilot[1]")
        if rs.shape != (ts.size, 4):
            raise ValueError(f"pilot[1]: expected shape ({ts.size}, 4) matching the times pilot[0], got {rs.shape}")
        if ts.size < 1 or np.any(np.diff(ts) <= 0):
            raise ValueError("pilot[0]: times must be strictly increasing")
        return lambda t: np.array([np.interp(t, ts, rs[:, i]) for i in range(4)])
    raise TypeError(f"pilot: expected 'v1', a callable r(t), samples (t, r) or None, got {type(pilot).__name__}")


def helicopter_plant(name="S1", x0=None) -> LTI:
    """S1: the Lynx model of Appendix A as a :class:`cosim.LTI` with named states, inputs and outputs (module doc).
    ``x0``: initial state (default zero: "helicopter on the ground, rotors still", genser2020 §10.4)."""
    plant = LTI(A1, B1, C1, np.zeros((6, 4)), x0=x0, name=name, inputs=list(INPUTS), outputs=list(OUTPUTS),
                states=list(STATES))
    return declare(UNITS, plant)[0]


def _series(G1, G2):
    """State space of y = G2(G1(u)), state (x_G1, x_G2)."""
    Aa, Ba, Ca, Da = G1
    Ab, Bb, Cb, Db = G2
    na, nb = Aa.shape[0], Ab.shape[0]
    A = np.block([[Aa, np.zeros((na, nb))], [Bb @ Ca, Ab]])
    return A, np.vstack([Ba, Bb @ Da]), np.hstack([Db @ Ca, Cb]), Db @ Da


def helicopter_controller(gain=2.0, zero=1.0, pole=0.005, rate_weight=0.1, gamma_factor=1.1, name="S2") -> LTI:
    """S2: a **reconstructed** controller for the Lynx, a Glover-McFarlane H∞ loop-shaping design (not the thesis's).

    The thesis's controller (a 20-state S/KS mixed-sensitivity H∞ design with reference scaling W3, genser2020 §10.4)
    is not published, and the weights recalled in genser2020.md App. C give a controller whose C2 B2 does not match
    the thesis's (4.10). This is therefore a documented substitute with the same interface and a similar ZOH
    co-simulation stability limit, designed from scratch with SciPy's Riccati solver:

    1. Plant G = (A1, B1, C1, 0), 4 inputs, 6 outputs (Ḣ, θ, φ, ψ̇, p, q).
    2. Loop shaping: pre-compensator W1 = ``gain`` · I_4 and post-compensator
       W2 = diag(w(s) I_4, ``rate_weight`` · I_2) with w(s) = (s + ``zero``)/(s + ``pole``): near-integral action on
       the four tracked outputs (the thesis's weights also use poles at ≈ 0.005), the rates p, q weighted 0.1 as the
       thesis's W3 weights them. Shaped plant G_s = W2 G W1 (12 states).
    3. Normalised coprime-factor robust stabilisation of G_s (Glover & McFarlane; Skogestad & Postlethwaite §9.4):
       the control ARE A^T X + X A − X B B^T X + C^T C = 0 and the filter ARE A Z + Z A^T − Z C^T C Z + B B^T = 0 give
       γ_min = sqrt(1 + ρ(X Z)); with γ = ``gamma_factor`` · γ_min and Λ = (1 − γ²) I + X Z the central controller is
       A_∞ = A − B B^T X + γ² Λ^{-T} Z C^T C, B_∞ = γ² Λ^{-T} Z C^T, C_∞ = B^T X (positive feedback u = K_∞ y_s).
    4. Final controller K = W1 K_∞ W2 (16 states). The co-simulation feeds it the errors u2 = (r − y_ctrl, −y_rate),
       so S2 = −K (negative feedback); its outputs are the helicopter's inputs.

    The default gain 2 is chosen so that Jacobi/ZOH co-simulation with exact subsystems is stable up to ΔT = 0.14 s
    and unstable from 0.15 s on (spectral radius of the amplification matrix), matching the thesis's "ZOH unstable for
    ΔT > 0.14 s" (§15.2). Tracking: Ḣ and ψ̇ follow steps within seconds with unit static gain; θ and φ cannot be
    held constant by this 1-DOF design (a constant attitude makes v_x, v_y drift, and the 4 integrators share the
    6 weighted outputs), they follow short pulses only partially. The controller is much less stiff than the thesis's
    (max|Re λ| / min|Re λ| ≈ 3.4e5 there). ``design`` (an attribute of the returned LTI) holds γ_min, γ, the controller
    and closed-loop eigenvalues and the stiffness ratios.

    Parameters: ``gain`` (W1), ``zero``, ``pole`` (w(s), 0 < pole < zero), ``rate_weight`` (W2 on p, q),
    ``gamma_factor`` (γ/γ_min > 1), ``name``.
    """
    from scipy.linalg import solve_continuous_are
    gain = _real_scalar(gain, "gain", positive=True)
    zero = _real_scalar(zero, "zero", positive=True)
    pole = _real_scalar(pole, "pole", positive=True)
    if pole >= zero:
        raise ValueError(f"pole: must be smaller than zero = {zero} (a lag-lead weight with integral-like action), "
                         f"got {pole}")
    rate_weight = _real_scalar(rate_weight, "rate_weight", positive=True)
    gamma_factor = _real_scalar(gamma_factor, "gamma_factor")
    if gamma_factor <= 1.0:
        raise ValueError(f"gamma_factor: must be > 1 (γ > γ_min), got {gamma_factor}")
    W1 = gain * np.eye(4)
    W2 = (-pole * np.eye(4), np.hstack([np.eye(4), np.zeros((4, 2))]),
          np.vstack([(zero - pole) * np.eye(4), np.zeros((2, 4))]), np.diag([1.0, 1.0, 1.0, 1.0, rate_weight,
                                                                              rate_weight]))
    A, B, C, _ = _series((A1, B1 @ W1, C1, np.zeros((6, 4))), W2)
    X = solve_continuous_are(A, B, C.T @ C, np.eye(B.shape[1]))
    Z = solve_continuous_are(A.T, C.T, B @ B.T, np.eye(C.shape[0]))
    gamma_min = float(np.sqrt(1.0 + np.max(np.abs(np.linalg.eigvals(X @ Z)))))
    gamma = gamma_factor * gamma_min
    Lam_T_inv = np.linalg.inv(((1.0 - gamma ** 2) * np.eye(A.shape[0]) + X @ Z).T)
    Ainf = A - B @ B.T @ X + gamma ** 2 * Lam_T_inv @ Z @ C.T @ C
    Binf = gamma ** 2 * Lam_T_inv @ Z @ C.T
    Cinf = W1 @ B.T @ X
    AK, BK, CK, DK = _series(W2, (Ainf, Binf, Cinf, np.zeros((4, 6))))
    K = LTI(AK, -BK, CK, -DK, name=name, inputs=list(CONTROLLER_INPUTS), outputs=list(INPUTS),
            states=[f"xk{i}" for i in range(AK.shape[0])])
    declare(UNITS, K)
    lam_k = np.linalg.eigvals(AK)
    Acl = np.block([[A1, B1 @ CK], [BK @ C1, AK]])  # u2 = −y1 (r = 0) and S2 = (AK, −BK, CK)
    lam_cl = np.linalg.eigvals(Acl)
    K.design = dict(method="Glover-McFarlane H-infinity loop shaping (reconstruction, not the thesis's controller)",
                    gain=gain, zero=zero, pole=pole, rate_weight=rate_weight, gamma_min=gamma_min, gamma=gamma,
                    stability_margin=1.0 / gamma, order=AK.shape[0], eig_controller=lam_k, eig_closed_loop=lam_cl,
                    controller_stiffness=float(np.max(np.abs(lam_k.real)) / np.min(np.abs(lam_k.real))),
                    closed_loop_stiffness=float(np.max(np.abs(lam_cl)) / np.min(np.abs(lam_cl))))
    return K


def helicopter(controller=None, pilot="v1", *, x0=None, pilot_input=False) -> CoupledSystem:
    """The helicopter co-simulation of genser2020 §10.4: ``S1`` (the Lynx, :func:`helicopter_plant`), ``S2`` (the
    controller, default :func:`helicopter_controller`, a reconstruction) and, unless ``pilot`` is None, ``pilot``.

    Coupling u1 = y2, u2 = (r − y_ctrl, −y_rate) (L = [[0, I4], [−I6, 0]] plus r). ``pilot``: ``"v1"`` (default,
    :func:`pilot_v1`), a callable r(t) returning the 4 commands (Ḣ_ref, θ_ref, φ_ref, ψ̇_ref), samples ``(t, r)`` with
    r of shape (len(t), 4) (linear interpolation), or None (r = 0: an all-LTI system, usable by
    :mod:`cosim.analysis` and :func:`cosim.simulate_monolithic` with the exact solver). The pilot is a state-less
    Python subsystem whose outputs Hdot_ref, ... are evaluated at the communication points (give it a fixed-step
    solver, e.g. ``solver={"S1": Exact(), "S2": Exact(), "pilot": Euler()}``). ``controller``: any LTI-like
    subsystem with 6 inputs and 4 outputs. ``x0``: initial state of S1 (default 0). ``pilot_input``: give the pilot
    one unused input ``unused`` held at 0 (:class:`cosim.PreStep` needs every unit to have inputs and outputs; the
    commands do not depend on it). The system has ``params``."""
    plant = helicopter_plant(x0=x0)
    if controller is None:
        controller = helicopter_controller()
    from ..system import Subsystem
    if not isinstance(controller, Subsystem):
        raise TypeError(f"controller: expected a cosim subsystem (e.g. cosim.LTI), got {type(controller).__name__}")
    if (controller.nu, controller.ny) != (6, 4):
        raise ValueError(f"controller: expected 6 inputs and 4 outputs, got {controller.nu} and {controller.ny}")
    if controller.name in ("S1", "pilot"):
        raise ValueError(f"controller: name {controller.name!r} is taken; use e.g. 'S2'")
    subs = [plant, controller]
    c = controller.name
    conns = [connect(f"{c}.y[{i}]", f"S1.u[{i}]") for i in range(4)]
    conns += [connect(f"S1.y[{j}]", f"{c}.u[{j}]", -1.0) for j in range(6)]
    if pilot is not None:
        r = _pilot_function(pilot)
        if not isinstance(pilot_input, bool):
            raise TypeError(f"pilot_input: expected True or False, got {pilot_input!r}")
        subs.append(ODE(lambda t, x, u: np.zeros(0), lambda t, x, u: r(t), 0, int(pilot_input), 4, name="pilot",
                        feedthrough=False, outputs=list(PILOT_OUTPUTS), inputs=["unused"] if pilot_input else None,
                        units={k: UNITS[k] for k in PILOT_OUTPUTS}))
        conns += [connect(f"pilot.y[{i}]", f"{c}.u[{i}]") for i in range(4)]
    system = CoupledSystem(subs, conns, inputs_default={"pilot.u[0]": 0.0} if pilot is not None and pilot_input
                           else None)
    system.params = dict(controller=controller, pilot=pilot, pilot_input=pilot_input)
    return system


def helicopter_closed_loop(controller=None):
    """The monolithic closed loop of S1 and an LTI controller S2 driven by the pilot commands r (Ḣ_ref, θ_ref, φ_ref,
    ψ̇_ref): ż = A z + B r, (y1; y2) = C z + D r with z = (x1, x2). With u2 = −C1 x1 + E r (E = [I4; 0]) and u1 = y2:
    A = [[A1 − B1 D2 C1, B1 C2], [−B2 C1, A2]], B = [B1 D2 E; B2 E], C = [[C1, 0], [−D2 C1, C2]], D = [0; D2 E].
    Returns (A, B, C, D); max Re λ(A) < 0 for the default controller (see its ``design``)."""
    system = helicopter(controller, pilot=None)
    s1, s2 = system.subsystems
    if not isinstance(s2, LTI):
        raise TypeError(f"controller: the closed-loop matrices need a cosim.LTI controller, got {type(s2).__name__}")
    A, _, _ = system.monolithic_lti()
    E = np.vstack([np.eye(4), np.zeros((2, 4))])
    B = np.vstack([s1.B @ s2.D @ E, s2.B @ E])
    C = np.block([[s1.C, np.zeros((6, s2.nx))], [-s2.D @ s1.C, s2.C]])
    D = np.vstack([np.zeros((6, 4)), s2.D @ E])
    return A, B, C, D
