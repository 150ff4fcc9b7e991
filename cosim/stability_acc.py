"""Linear stability of Kraft's acc and accRel predictors (kraft2021 App. C, spec §15.2): the amplification matrix of
one Jacobi or Gauss-Seidel macro step of LTI subsystems integrated exactly, with the accelerations in the recurrence
state.

The companion matrix of :mod:`cosim.stability` carries output samples only; acc/accRel also read the output
derivatives ẏ (the accelerations of the velocity outputs) at the macro points, and a position's polynomial depends
on its velocity's data. The state here is::

    Z_N = ( x(T_N); y(T_N), ..., y(T_{N-P+1}); ẏ(T_N), ..., ẏ(T_{N-P+1}) )

The input polynomials are linear in the history, so the engine's own rule (``_core.acc_coefficients``, the code the
signal coupling runs) applied to the unit vectors of Z_N gives their coefficients as rows over Z_N; the exact step
x(T_{N+1}) = Φ x(T_N) + Σ_m Γ_m c_m (``_core.poly_propagator``) and the update y = C x, ẏ = C (A x + B u) close the
recurrence Z_{N+1} = Ω Z_N + g. Under Gauss-Seidel each unit's outputs at T_{N+1} (and their rates with the input
it ended the step with) enter the interpolating rule (``acc_coefficients(..., interpolate=True)``) of the units
stepped after it. ``update=True`` takes u(T_{N+1}) = L y(T_{N+1}) + r (the accelerations recomputed
with the updated coupling variables); ``update=False`` the input polynomial's end value (the acceleration the unit
ended the step with). Units with feed-through (D ≠ 0) are not covered.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg

from . import _core
from .approximations import IntegratedAcceleration, MAXHIST, integral_of
from .subsystem import LTI

_NV = 2 * MAXHIST   # data slots per signal: values newest first, then derivatives


def _check(system, approximation):
    if not isinstance(approximation, IntegratedAcceleration):
        raise TypeError(f"approximation: expected cosim.IntegratedAcceleration or cosim.RelaxedAcceleration, got "
                        f"{type(approximation).__name__}")
    subs = getattr(system, "subsystems", None)
    if subs is None or len(subs) < 2:
        raise ValueError("system: need a cosim.CoupledSystem of two or more subsystems")
    for s in subs:
        if not isinstance(s, LTI):
            raise ValueError(f"system: subsystem {s.name!r} is not a cosim.LTI (the analysis integrates exactly)")
        if np.any(s.D):
            raise ValueError(f"system: subsystem {s.name!r} has feed-through (D != 0); the acc/accRel analysis "
                             "covers units without it (force/force, force/displacement with feedthrough=False)")


def amplification_matrix(system, H: float, approximation, order=None) -> np.ndarray:
    """Ω of one acc/accRel macro step (module docstring) at the macro step ``H`` > 0.

    Parameters
    ----------
    system : cosim.CoupledSystem
        LTI subsystems without feed-through.
    H : float
        Macro step size H.
    approximation : cosim.IntegratedAcceleration or cosim.RelaxedAcceleration
        The predictor, with its degrees κ_a (and κ_λ, ω) and ``update``.
    order : sequence of int, optional
        None: Jacobi. Otherwise the Gauss-Seidel stepping order (subsystem indices): a unit stepped later reads the
        outputs of the units already at T_{N+1} through the interpolating acc/accRel rule (the engine's
        ``on_unit_done``), with the rates those units ended the step with.

    Returns
    -------
    ndarray (dim, dim), dim = n_x + 2 P n_y with P the samples the predictor reads.
    """
    return _step(system, H, approximation, order)[:-1, :-1]


def _step(system, H, approximation, order):
    """The affine step as a matrix on (Z_N; 1): Ω and, in the last column, the part of the offsets r."""
    _check(system, approximation)
    subs = system.subsystems
    nx = [s.nx for s in subs]
    ny = [s.ny for s in subs]
    xo, yo = np.r_[0, np.cumsum(nx)], np.r_[0, np.cumsum(ny)]
    uo = np.r_[0, np.cumsum([s.nu for s in subs])]
    nxt, nyt = int(xo[-1]), int(yo[-1])
    a = approximation
    P = max(a.k, getattr(a, "k_lambda", 0)) + 1
    dim = nxt + 2 * P * nyt + 1                          # the last entry of Z is the constant 1
    iy = lambda s, j: nxt + s * nyt + j                  # noqa: E731  (index of y_j(T_{N-s}) in Z)
    iyd = lambda s, j: nxt + (P + s) * nyt + j           # noqa: E731  (index of ẏ_j(T_{N-s}))
    data = np.zeros((dim, nyt, _NV))
    for s in range(P):
        for j in range(nyt):
            data[iy(s, j), j, s] = 1.0
            data[iyd(s, j), j, MAXHIST + s] = 1.0
    integ = integral_of(system, a.pairs)
    T = -H * np.arange(P, dtype=float)
    c, deg = _core.acc_coefficients(a.kind, a.k, a._k2, a._omega, T, 0.0, float(H), data, integ)
    L, r = system.connection_matrix()
    Cb = np.zeros((nyt, nxt))
    for i, s in enumerate(subs):
        Cb[yo[i]:yo[i + 1], xo[i]:xo[i + 1]] = s.C
    seq = [list(range(len(subs)))] if order is None else [[int(i)] for i in order]
    src = np.zeros((dim, nyt, deg + 2))                  # each output's polynomial rows (degree up to deg + 1)
    src[:, :, :deg + 1] = c
    Xn = np.zeros((nxt, dim))
    Uend = np.zeros((L.shape[0], dim))
    for group in seq:                                    # Jacobi: one group; Gauss-Seidel: one unit after another
        U = np.einsum("aj,qjm->qam", L, src)             # input coefficients as rows over Z: (dim, nu, m)
        U[-1, :, 0] += r
        for i in group:
            s, xi, ui = subs[i], slice(xo[i], xo[i + 1]), slice(uo[i], uo[i + 1])
            d = deg if order is None else src.shape[2] - 1
            Phi, Gam = _core.poly_propagator(s.A, s.B, float(H), d)
            Xn[xi, xi] = Phi
            Xn[xi] += np.einsum("mxu,qum->xq", Gam, U[:, ui, :d + 1])
            Uend[ui] = U[:, ui, :].sum(axis=2).T
        if order is None:
            break
        i = group[0]                                     # its outputs at T_{N+1}, then the interpolants the later
        yi = slice(yo[i], yo[i + 1])                     # units read (busch2016 eq. 13 with the acc rule)
        ys = Cb[yi] @ Xn
        yds = subs[i].C @ (subs[i].A @ Xn[xo[i]:xo[i + 1]] + subs[i].B @ Uend[uo[i]:uo[i + 1]])
        dint = np.zeros((dim, nyt, _NV))
        dint[:, yi, 0] = ys.T
        dint[:, yi, MAXHIST] = yds.T
        dint[:, yi, 1:MAXHIST] = data[:, yi, 0:MAXHIST - 1]
        dint[:, yi, MAXHIST + 1:] = data[:, yi, MAXHIST:_NV - 1]
        ci, dgi = _core.acc_coefficients(a.kind, a.k, a._k2, a._omega, np.r_[H, T], 0.0, float(H), dint, integ, True)
        src[:, yi, :] = 0.0
        src[:, yi, :dgi + 1] = ci[:, yi, :]
    Yn = Cb @ Xn
    Un = L @ Yn if a.update else Uend                   # u(T_{N+1}): updated, or the polynomial's end value
    if a.update:
        Un[:, -1] += r
    Ydn = np.zeros((nyt, dim))
    for i, s in enumerate(subs):
        Ydn[yo[i]:yo[i + 1]] = s.C @ (s.A @ Xn[xo[i]:xo[i + 1]] + s.B @ Un[uo[i]:uo[i + 1]])
    Om = np.zeros((dim, dim))
    Om[:nxt] = Xn
    Om[iy(0, 0):iy(0, 0) + nyt] = Yn
    Om[iyd(0, 0):iyd(0, 0) + nyt] = Ydn
    for s in range(1, P):                               # shifted history
        for j in range(nyt):
            Om[iy(s, j), iy(s - 1, j)] = 1.0
            Om[iyd(s, j), iyd(s - 1, j)] = 1.0
    Om[-1, -1] = 1.0
    return Om


def spectral_radius(system, H, approximation, order=None):
    """ρ(Ω) of :func:`amplification_matrix` for one H (float) or a 1-D array of H (array): the acc/accRel
    co-simulation of ``system`` is numerically stable where ρ ≤ 1 (kraft2021 App. C, [SLL15])."""
    Hs = np.atleast_1d(np.asarray(H, dtype=float))
    rho = np.array([_core.spectral_radius(amplification_matrix(system, h, approximation, order)) for h in Hs])
    return float(rho[0]) if np.ndim(H) == 0 else rho


def local_error(system, H, approximation, order, t, z0):
    """One acc/accRel step from the exact history of the strongly coupled system (states z(T_N), outputs and their
    rates at T_N, ..., T_{N-P+1}, T_N = t, from z(0) = z0) against the exact states and outputs at T_N + H, for each
    H of the 1-D array ``H``: (eps, exact), each (len(H), n_x + n_y), states then outputs."""
    A, b, _ = system.monolithic_lti()
    subs = system.subsystems
    nxt = A.shape[0]
    Cb = scipy.linalg.block_diag(*[s.C for s in subs])
    Aug = np.zeros((nxt + 1, nxt + 1))
    Aug[:nxt, :nxt], Aug[:nxt, nxt] = A, b
    exact_z = lambda tau: (scipy.linalg.expm(Aug * tau) @ np.r_[z0, 1.0])[:nxt]   # noqa: E731
    P = max(approximation.k, getattr(approximation, "k_lambda", 0)) + 1
    eps, exact = [], []
    for h in H:
        zs = [exact_z(t - q * h) for q in range(P)]
        Z = np.concatenate([zs[0]] + [Cb @ z for z in zs] + [Cb @ (A @ z + b) for z in zs] + [[1.0]])
        M = _step(system, float(h), approximation, order)
        step = M @ Z
        z1 = exact_z(t + h)
        want = np.r_[z1, Cb @ z1]
        got = np.r_[step[:nxt], step[nxt:nxt + Cb.shape[0]]]
        eps.append(got - want)
        exact.append(want)
    return np.array(eps), np.array(exact)
