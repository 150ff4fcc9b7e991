"""Exponential and BIBO stability of the discrete pre-step coupling (genser2020 §4, §5, §13.3).

With frozen interface Jacobians (IJs) and LTI subsystems, one communication step of the discrete pre-step method
(Step 1 EDE, Step 2 extrapolation, Step 3 input optimisation; spec §4-§5) is linear. The coupling element
"CoupEle" is then a state-space system (spec eq. 3.23-3.29) and the co-simulation S_1 + ... + S_N + CoupEle a free
recurrence Z^{k+1} = φ_{A,comb} Z^k (3.30) with Z^k = (u^{k−1}, u^k, δ^{k−1}, y^{k−1}, y^k, x^k).

Notation (global, spec §5.1): Sy = blkdiag(Sy_{d,i}), Su = blkdiag(Su^-_{d,i}), Sd = blkdiag(Su^+_{d,i}); u = L y.

    Ĉ = (I − Sd L)^{-1}          (EDE inverse)       Ã = Sy + Su L,  B̃ = Su,  D̃ = Sd
    Ê = (I − Sd L)^{-1}(Sy + Su L)  (extrapolation map, ŷ^{k+1} = Ê ỹ^k)
    δ^k     = Ĉ [Ã δ^{k−1} + B̃ (L y^{k−1} − u^{k−1}) + D̃ (L y^k − u^k)]                    (3.23)
    ŷ^{k+1} = Ê (y^k + δ^k)                                                                (3.24)
    u^{k+1} = G_ŷ ŷ^{k+1} + G_y y^k + G_u u^k                                              (input optimisation)

G matrices (spec §13.3 [EXT], from §5.3), per subsystem i with A_i = Su^+_{d,i} (n_i × m_i), E_i / F_i selecting
y_i / u_i and L_i the rows of L of u_i:
  underdetermined (m_i > n_i), P_i = A_i^T (A_i A_i^T)^{-1}: G_ŷ,i = L_i + P_i (E_i − A_i L_i), G_y,i = −P_i Sy_i E_i,
  G_u,i = −P_i Su^-_i F_i;  otherwise P_i = A_i^+ and the L_i terms are dropped (G_ŷ,i = A_i^+ E_i).
The modified method (no input optimisation, §4.4) has u^{k+1} = L ŷ^{k+1}; without the EDE (useErrDiffEqu false)
δ ≡ 0.

Exogenous inputs (u = L y + r, external forces) enter additively and do not change φ_{A,comb}: the functions here
describe the free system, the object of exponential stability (Ludyk, Def. 2) and, with bounded matrices, of BIBO
stability (Thm 3.3.1).

Functions: :func:`extrapolation_matrix`, :func:`coupele`, :func:`coupele_matrix`, :func:`prestep_closed_loop`,
:func:`bohl_exponent`, :func:`boundedness`; their plots are :func:`cosim.plot.bohl_plot` and
:func:`cosim.plot.norm_plot`.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from . import _check
from .system import CoupledSystem

__all__ = ["extrapolation_matrix", "coupele", "coupele_matrix", "prestep_closed_loop", "bohl_exponent",
           "boundedness", "CoupEle", "CombinedSystem", "Boundedness"]


# ------------------------------------------------------------------------------------------------ argument checks
def _mat(value, name, shape=None):
    a = _check.real_array(value, name, "matrix")
    if a.ndim == 0:
        a = a.reshape(1, 1)
    if a.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D matrix, got shape {a.shape}")
    if shape is not None and a.shape != tuple(shape):
        raise ValueError(f"{name}: expected shape {tuple(shape)}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def _bool(v, name):
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {v!r}")
    return bool(v)


def _blkdiag(blocks):
    rows = sum(b.shape[0] for b in blocks)
    cols = sum(b.shape[1] for b in blocks)
    out = np.zeros((rows, cols))
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r += b.shape[0]
        c += b.shape[1]
    return out


def _ij_list(ijs):
    """[(Sy, Su_minus, Su_plus)] from DiscreteIJ / ContinuousIJ-like objects or 3-tuples, sizes checked."""
    if isinstance(ijs, (str, bytes)) or not hasattr(ijs, "__len__") or len(ijs) < 1:
        raise TypeError("ijs: expected a list of per-subsystem IJs (cosim.sysid.DiscreteIJ or (Sy, Su_minus, "
                        "Su_plus) tuples)")
    out = []
    for i, ij in enumerate(ijs):
        if hasattr(ij, "Sy") and hasattr(ij, "Su_minus") and hasattr(ij, "Su_plus"):
            parts = (ij.Sy, ij.Su_minus, ij.Su_plus)
        elif isinstance(ij, (tuple, list)) and len(ij) == 3:
            parts = ij
        else:
            raise TypeError(f"ijs[{i}]: expected a DiscreteIJ or a tuple (Sy, Su_minus, Su_plus), "
                            f"got {type(ij).__name__}")
        Sy = _mat(parts[0], f"ijs[{i}].Sy")
        n = Sy.shape[0]
        if Sy.shape != (n, n):
            raise ValueError(f"ijs[{i}].Sy: must be square, got shape {Sy.shape}")
        Sm = _mat(parts[1], f"ijs[{i}].Su_minus")
        if Sm.shape[0] != n:
            raise ValueError(f"ijs[{i}].Su_minus: expected {n} rows (Sy is {n}x{n}), got shape {Sm.shape}")
        Sp = _mat(parts[2], f"ijs[{i}].Su_plus", Sm.shape)
        out.append((Sy, Sm, Sp))
    return out


def _coupling_matrix(L, m, n):
    L = _mat(L, "L")
    if L.shape != (m, n):
        raise ValueError(f"L: expected shape ({m}, {n}) (total inputs x total outputs of the IJs), got {L.shape}")
    return L


# ------------------------------------------------------------------------------------------------ Steps 1-3 matrices
def extrapolation_matrix(Sy, Su, Sd, L) -> np.ndarray:
    """Global extrapolation map (I − Sd L)^{-1}(Sy + Su L) (spec §5.1): continuous dŷ/dt = M ŷ with the continuous
    IJs (Sd = ∂S/∂u̇), discrete ŷ^{k+1} = M ŷ^k with the discrete ones (Su = Su^-, Sd = Su^+).

    Sy (n×n), Su and Sd (n×m) block-diagonal global IJs, L (m×n). Raises ValueError for wrong sizes or an
    algebraic loop (singular I − Sd L)."""
    Sy = _mat(Sy, "Sy")
    n = Sy.shape[0]
    if Sy.shape != (n, n):
        raise ValueError(f"Sy: must be square, got shape {Sy.shape}")
    Su = _mat(Su, "Su")
    if Su.shape[0] != n:
        raise ValueError(f"Su: expected {n} rows, got shape {Su.shape}")
    Sd = _mat(Sd, "Sd", Su.shape)
    L = _coupling_matrix(L, Su.shape[1], n)
    return _solve_loop(np.eye(n) - Sd @ L, Sy + Su @ L, "Sd")


def _solve_loop(M, rhs, name):
    if np.linalg.cond(M) > 1e12:
        raise ValueError(f"{name}: I − Sd L is singular (an algebraic loop; zero-stability needs at least one "
                         "subsystem without feed-through, spec §1.2)")
    return np.linalg.solve(M, rhs)


@dataclass
class CoupEle:
    """The coupling element as a state-space system (spec eq. 3.28-3.29): z_c^{k+1} = phi_A z_c^k + phi_B (y^{k−1};
    y^k), u^{k+1} = C z_c^{k+1}, z_c = (u^{k−1}, u^k, δ^{k−1}). Also the pieces: ``C_hat`` = Ĉ, ``E_hat`` = Ê,
    ``A_t``, ``B_t``, ``D_t`` = Ã, B̃, D̃, the input-optimisation gains ``G_yhat``, ``G_y``, ``G_u`` and ``mats``
    (Mat_{u^{k−1}}, Mat_{u^k}, Mat_δ, Mat_{y^{k−1}}, Mat_{y^k} of eq. 3.27)."""
    phi_A: np.ndarray
    phi_B: np.ndarray
    C: np.ndarray
    C_hat: np.ndarray
    E_hat: np.ndarray
    A_t: np.ndarray
    B_t: np.ndarray
    D_t: np.ndarray
    G_yhat: np.ndarray
    G_y: np.ndarray
    G_u: np.ndarray
    mats: dict
    n: int
    m: int


def coupele(ijs, L, *, use_error_de=True, input_optimization=True) -> CoupEle:
    """CoupEle of the discrete pre-step with frozen IJs (spec §13.3, eq. 3.23-3.29, generalised to N subsystems).

    ijs : per-subsystem discrete IJs, :class:`cosim.sysid.DiscreteIJ` or tuples (Sy_d, Su^-_d, Su^+_d) (2.15)
    L : (m_tot × n_tot) coupling u = L y over the stacked outputs/inputs of the subsystems in the order of ``ijs``
    use_error_de : Step 1 (useErrDiffEqu); False sets δ ≡ 0
    input_optimization : Step 3; False is the modified method u^{k+1} = L ŷ^{k+1} (§4.4)
    """
    parts = _ij_list(ijs)
    use_error_de = _bool(use_error_de, "use_error_de")
    input_optimization = _bool(input_optimization, "input_optimization")
    Sy = _blkdiag([p[0] for p in parts])
    Su = _blkdiag([p[1] for p in parts])
    Sd = _blkdiag([p[2] for p in parts])
    n, m = Su.shape
    L = _coupling_matrix(L, m, n)
    C_hat = _solve_loop(np.eye(n) - Sd @ L, np.eye(n), "ijs")
    A_t, B_t, D_t = Sy + Su @ L, Su, Sd
    E_hat = C_hat @ A_t
    G_yhat, G_y, G_u = np.zeros((m, n)), np.zeros((m, n)), np.zeros((m, m))
    if input_optimization:
        r = c = 0
        for Syi, Smi, Api in parts:
            ni, mi = Api.shape
            Ei = np.zeros((ni, n))
            Ei[:, r:r + ni] = np.eye(ni)
            Fi = np.zeros((mi, m))
            Fi[:, c:c + mi] = np.eye(mi)
            Li = L[c:c + mi, :]
            if mi > ni:       # underdetermined: minimum extrapolation error (Lagrange, 2.66-2.71)
                Pi = Api.T @ np.linalg.pinv(Api @ Api.T)
                G_yhat[c:c + mi] = Li + Pi @ (Ei - Api @ Li)
            else:             # over- or exactly determined: least squares
                Pi = np.linalg.pinv(Api)
                G_yhat[c:c + mi] = Pi @ Ei
            G_y[c:c + mi] = -Pi @ Syi @ Ei
            G_u[c:c + mi] = -Pi @ Smi @ Fi
            r += ni
            c += mi
    else:
        G_yhat = L.copy()
    Z_nm, Z_nn, Z_mm = np.zeros((n, m)), np.zeros((n, n)), np.zeros((m, m))
    if use_error_de:
        GE = G_yhat @ E_hat
        mats = {"u_prev": -GE @ C_hat @ B_t, "u": -GE @ C_hat @ D_t + G_u, "delta": GE @ C_hat @ A_t,
                "y_prev": GE @ C_hat @ B_t @ L, "y": GE @ (np.eye(n) + C_hat @ D_t @ L) + G_y}
        d_rows = [-C_hat @ B_t, -C_hat @ D_t, C_hat @ A_t]
        d_in = [C_hat @ B_t @ L, C_hat @ D_t @ L]
    else:
        mats = {"u_prev": Z_mm, "u": G_u.copy(), "delta": np.zeros((m, n)), "y_prev": np.zeros((m, n)),
                "y": G_yhat @ E_hat + G_y}
        d_rows = [Z_nm, Z_nm, Z_nn]
        d_in = [Z_nn, Z_nn]
    phi_A = np.block([[Z_mm, np.eye(m), np.zeros((m, n))],
                      [mats["u_prev"], mats["u"], mats["delta"]],
                      d_rows])
    phi_B = np.block([[np.zeros((m, n)), np.zeros((m, n))],
                      [mats["y_prev"], mats["y"]],
                      d_in])
    Cc = np.hstack([Z_mm, np.eye(m), np.zeros((m, n))])
    return CoupEle(phi_A, phi_B, Cc, C_hat, E_hat, A_t, B_t, D_t, G_yhat, G_y, G_u, mats, n, m)


@dataclass
class CombinedSystem:
    """The free combined recurrence Z^{k+1} = phi_A Z^k of S_1..S_N + CoupEle (spec eq. 3.30).

    ``blocks`` maps the parts of Z^k = (u^{k−1}, u^k, δ^{k−1}, y^{k−1}, y^k, x^k) to slices ("u_prev", "u",
    "delta", "y_prev", "y", "x"); ``coupele`` is the :class:`CoupEle`."""
    phi_A: np.ndarray
    blocks: dict
    coupele: CoupEle
    sizes: dict = field(default_factory=dict)

    @property
    def rho(self) -> float:
        """Spectral radius of phi_A: the Bohl exponent of the time-invariant recurrence (stable iff < 1)."""
        return float(np.max(np.abs(np.linalg.eigvals(self.phi_A))))

    def state(self, u_prev, u, delta, y_prev, y, x) -> np.ndarray:
        """Assemble Z^k from its parts (stacked global vectors)."""
        vals = dict(u_prev=u_prev, u=u, delta=delta, y_prev=y_prev, y=y, x=x)
        Z = np.zeros(self.phi_A.shape[0])
        for k, sl in self.blocks.items():
            v = np.asarray(vals[k], dtype=float).reshape(-1)
            if v.size != sl.stop - sl.start:
                raise ValueError(f"{k}: expected {sl.stop - sl.start} entries, got {v.size}")
            Z[sl] = v
        return Z


def _model_list(models, parts):
    if isinstance(models, (str, bytes)) or not hasattr(models, "__len__"):
        raise TypeError("models: expected a list of per-subsystem (PhiA, PhiB, C, D) tuples")
    if len(models) != len(parts):
        raise ValueError(f"models: expected {len(parts)} subsystems (one per IJ), got {len(models)}")
    out = []
    for i, (mdl, (Sy, Sm, _)) in enumerate(zip(models, parts)):
        if not isinstance(mdl, (tuple, list)) or len(mdl) != 4:
            raise TypeError(f"models[{i}]: expected a tuple (PhiA, PhiB, C, D)")
        PA = _mat(mdl[0], f"models[{i}].PhiA")
        nx = PA.shape[0]
        if PA.shape != (nx, nx):
            raise ValueError(f"models[{i}].PhiA: must be square, got shape {PA.shape}")
        ni, mi = Sm.shape
        PB = _mat(mdl[1], f"models[{i}].PhiB", (nx, mi))
        C = _mat(np.reshape(mdl[2], (ni, nx)) if np.size(mdl[2]) == ni * nx else mdl[2], f"models[{i}].C",
                 (ni, nx))
        D = _mat(np.reshape(mdl[3], (ni, mi)) if np.size(mdl[3]) == ni * mi else mdl[3], f"models[{i}].D",
                 (ni, mi))
        out.append((PA, PB, C, D))
    return out


def coupele_matrix(ijs, L, models, *, use_error_de=True, input_optimization=True) -> CombinedSystem:
    """Combined closed-loop matrix φ_{A,comb} of the subsystems and the pre-step CoupEle (spec eq. 3.30).

    ijs, L, use_error_de, input_optimization : as in :func:`coupele`

    models : per subsystem its discrete model in the thesis form (2.16)-(2.17), the input u^{k+1} held over
        [T^k, T^{k+1}]: x^{k+1} = PhiA x^k + PhiB u^{k+1}, y^{k+1} = C x^{k+1} + D u^{k+1}; tuples (PhiA, PhiB, C, D)
        with sizes matching the IJs (n_i outputs, m_i inputs)


    Rows (Z^k = (u^{k−1}, u^k, δ^{k−1}, y^{k−1}, y^k, x^k)): u^k copied; u^{k+1} and δ^k from CoupEle; y^k copied;
    y^{k+1} = blkdiag(C_i PhiA_i) x^k + Mat_CB u^{k+1}, Mat_CB = blkdiag(C_i PhiB_i + D_i); x^{k+1} =
    blkdiag(PhiA_i) x^k + blkdiag(PhiB_i) u^{k+1}."""
    parts = _ij_list(ijs)
    mdl = _model_list(models, parts)
    ce = coupele(parts, L, use_error_de=use_error_de, input_optimization=input_optimization)
    n, m = ce.n, ce.m
    PA = _blkdiag([p[0] for p in mdl])
    PB = _blkdiag([p[1] for p in mdl])
    CPA = _blkdiag([p[2] @ p[0] for p in mdl])
    MCB = _blkdiag([p[2] @ p[1] + p[3] for p in mdl])
    nx = PA.shape[0]
    sizes = dict(u_prev=m, u=m, delta=n, y_prev=n, y=n, x=nx)
    blocks, o = {}, 0
    for k, s in sizes.items():
        blocks[k] = slice(o, o + s)
        o += s
    Phi = np.zeros((o, o))
    cz = slice(0, 2 * m + n)                       # CoupEle state (u^{k−1}, u^k, δ^{k−1})
    yy = slice(2 * m + n, 2 * m + 3 * n)           # its input (y^{k−1}, y^k)
    Phi[cz, cz] = ce.phi_A
    Phi[cz, yy] = ce.phi_B
    Phi[blocks["y_prev"], blocks["y"]] = np.eye(n)
    row_u = Phi[blocks["u"]].copy()                # u^{k+1} as a function of Z^k
    Phi[blocks["y"]] = MCB @ row_u
    Phi[blocks["y"], blocks["x"]] += CPA
    Phi[blocks["x"]] = PB @ row_u
    Phi[blocks["x"], blocks["x"]] += PA
    return CombinedSystem(Phi, blocks, ce, sizes)


def _lti_models(system, H):
    from .sysid import discretize
    out = []
    for s in system.subsystems:
        PhiA, PhiB = discretize(s.A, s.B, H)
        out.append((PhiA, PhiB, s.C, s.D))
    return out


def prestep_closed_loop(system, H, ijs="exact", *, use_error_de=True, input_optimization=True,
                        rtol=1e-12) -> CombinedSystem:
    """φ_{A,comb} of a :class:`cosim.CoupledSystem` of LTI subsystems co-simulated with the discrete pre-step at the
    communication step ``H`` (inputs held over each step, exact subsystems; spec §13.3).

    ijs : ``"exact"`` (default): the exact discrete IJs of the thesis form (2.18)-(2.20) with C^+ = pinv(C) (for
        C with more states than outputs this cancels dynamics, spec §2.1, §15.1); or a list of per-subsystem IJs
        (e.g. identified ones, frozen). Other arguments as in :func:`coupele`; ``rtol``: pinv cut-off."""
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"system: expected a cosim.CoupledSystem, got {type(system).__name__}")
    for s in system.subsystems:
        if not getattr(s, "is_lti", False):
            raise ValueError(f"system: subsystem {s.name!r} is not a cosim.LTI (the combined matrix needs LTI "
                             "subsystems)")
    if isinstance(H, bool) or not isinstance(H, numbers.Real) or not np.isfinite(H) or H <= 0:
        raise ValueError(f"H: communication step size must be a positive finite number, got {H!r}")
    models = _lti_models(system, float(H))
    if isinstance(ijs, str):
        if ijs != "exact":
            raise ValueError(f"ijs: expected 'exact' or a list of per-subsystem IJs, got {ijs!r}")
        from .sysid import ij_discrete
        ijs = [ij_discrete(PA, PB, C, D, form="thesis", rtol=rtol) for PA, PB, C, D in models]
    return coupele_matrix(ijs, system.L, models, use_error_de=use_error_de, input_optimization=input_optimization)


def _prestep_reference_step(Z, cs: CombinedSystem, ijs, L, models, *, use_error_de=True, input_optimization=True):
    """One step of the discrete pre-step written directly from the algorithm of spec §4-§5 (Steps 1-3 by solves,
    the Lagrange case by its KKT system, the subsystems stepped with held inputs): the independent check of
    :func:`coupele_matrix` (AT-17). Returns Z^{k+1}."""
    parts = _ij_list(ijs)
    mdl = _model_list(models, parts)
    b = cs.blocks
    u_prev, u, d_prev, y_prev, y, x = (Z[b[k]] for k in ("u_prev", "u", "delta", "y_prev", "y", "x"))
    Sy = _blkdiag([p[0] for p in parts])
    Su = _blkdiag([p[1] for p in parts])
    Sd = _blkdiag([p[2] for p in parts])
    n = Sy.shape[0]
    M = np.eye(n) - Sd @ L
    if use_error_de:  # Step 1 (2.57 / §5.1): (I − Sd L) δ^k = (Sy + Su L) δ^{k−1} + Su ε^{k−1} + Sd ε^k
        delta = np.linalg.solve(M, (Sy + Su @ L) @ d_prev + Su @ (L @ y_prev - u_prev) + Sd @ (L @ y - u))
    else:
        delta = np.zeros(n)
    yhat = np.linalg.solve(M, (Sy + Su @ L) @ (y + delta))          # Step 2 (2.63)
    u_new = np.zeros_like(u)
    r = c = 0
    for Syi, Smi, Api in parts:                                      # Step 3 (2.64-2.71), local
        ni, mi = Api.shape
        Li = L[c:c + mi]
        if not input_optimization:
            u_new[c:c + mi] = Li @ yhat
        else:
            rhs = yhat[r:r + ni] - Syi @ y[r:r + ni] - Smi @ u[c:c + mi]
            if mi > ni:   # min ||L_i ŷ − u||² s.t. A u = rhs: KKT [[2I, A^T], [A, 0]] (u, λ) = (2 L_i ŷ, rhs)
                K = np.block([[2 * np.eye(mi), Api.T], [Api, np.zeros((ni, ni))]])
                u_new[c:c + mi] = np.linalg.solve(K, np.concatenate([2 * Li @ yhat, rhs]))[:mi]
            else:
                u_new[c:c + mi] = np.linalg.lstsq(Api, rhs, rcond=None)[0]
        r += ni
        c += mi
    x_new, y_new = np.zeros_like(x), np.zeros_like(y)
    r = c = o = 0
    for PA, PB, C, D in mdl:                                         # subsystems, u^{k+1} held
        nx, mi, ni = PA.shape[0], PB.shape[1], C.shape[0]
        x_new[o:o + nx] = PA @ x[o:o + nx] + PB @ u_new[c:c + mi]
        y_new[r:r + ni] = C @ x_new[o:o + nx] + D @ u_new[c:c + mi]
        o += nx
        c += mi
        r += ni
    return cs.state(u, u_new, delta, y, y_new, x_new)


# ------------------------------------------------------------------------------------------------ Bohl exponents
def _sequence(phi, name="phi"):
    """(kind, data): ("ti", Φ) for one matrix, a cosim.analysis.Recurrence or a CombinedSystem; ("tv", [Φ_k])."""
    if isinstance(phi, CombinedSystem):
        return "ti", phi.phi_A
    if hasattr(phi, "Omega") and hasattr(phi, "depth"):   # cosim.analysis.Recurrence
        return "ti", _square(phi.Omega, name)
    if isinstance(phi, (list, tuple)):
        if len(phi) < 1:
            raise ValueError(f"{name}: empty sequence of matrices")
        mats = [_square(p, f"{name}[{k}]") for k, p in enumerate(phi)]
        if len({p.shape for p in mats}) != 1:
            raise ValueError(f"{name}: all matrices must have the same size, got {sorted({p.shape for p in mats})}")
        return "tv", np.stack(mats)
    a = _check.real_array(phi, name, "matrix or sequence of matrices")
    if a.ndim == 2:
        return "ti", _square(a, name)
    if a.ndim == 3:
        if a.shape[0] < 1:
            raise ValueError(f"{name}: empty sequence of matrices")
        if a.shape[1] != a.shape[2]:
            raise ValueError(f"{name}: the matrices must be square, got shape {a.shape[1:]}")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or infinite values")
        return "tv", a
    raise ValueError(f"{name}: expected a square matrix, a (K, n, n) array of matrices or a list of them, got "
                     f"shape {a.shape}")


def _square(a, name):
    a = _mat(a, name)
    if a.shape[0] != a.shape[1] or a.shape[0] < 1:
        raise ValueError(f"{name}: must be a non-empty square matrix (the recurrence's transition matrix), got "
                         f"shape {a.shape}")
    return a


def window_lengths(m, name="m"):
    scalar = isinstance(m, numbers.Integral) and not isinstance(m, bool)
    ms = np.atleast_1d(np.asarray(m) if not scalar else int(m))
    if isinstance(m, bool) or ms.dtype.kind not in "iu" or ms.ndim != 1 or ms.size < 1:
        raise TypeError(f"{name}: expected an int >= 1 or a 1-D sequence of them, got {m!r}")
    if np.any(ms < 1):
        raise ValueError(f"{name}: window lengths must be >= 1, got {m!r}")
    return scalar, ms.astype(np.int64)


def _log_norms(mats, m_max, start, ti):
    """log ||Φ^{start+j, start}||_2 for j = 1..m_max by a renormalised running product (no over/underflow)."""
    n = mats.shape[-1]
    P = np.eye(n)
    logs = np.empty(m_max)
    acc = 0.0
    for j in range(m_max):
        P = (mats if ti else mats[start + j]) @ P
        s = np.linalg.norm(P, 2)
        if s == 0.0:
            logs[j:] = -np.inf
            break
        if not np.isfinite(s):
            raise ArithmeticError("phi: the transition-matrix product is not finite")
        acc += np.log(s)
        P /= s
        logs[j] = acc
    return logs


def bohl_exponent(phi, m, *, stride=1):
    """Estimate of the upper Bohl exponent β̄ of x^{k+1} = Φ^k x^k (spec §13.3; Genser et al., MED 2020):

        β̄_m = max_l ||Φ^{l+m, l}||_2^{1/m},   Φ^{l+m, l} = Φ^{l+m−1} ⋯ Φ^l,

    which converges to β̄ as the window m grows; exponential stability iff β̄ < 1 (multiplicative form).

    phi : one square matrix (time-invariant: β̄_m = ||Φ^m||^{1/m} → ρ(Φ)), a :class:`cosim.analysis.Recurrence`
        (its Ω), a :class:`CombinedSystem` (its φ_{A,comb}), or a time-variant sequence: a list of K square matrices
        or a (K, n, n) array Φ^0..Φ^{K−1} (every window l = 0, stride, ... with l + m <= K)

    m : window length m >= 1, or a 1-D sequence of them (then an array of β̄_m is returned)
    stride : step between window starts l (time-variant case), int >= 1

    The products are renormalised at every step and accumulated as logarithms (no overflow or underflow). Cost:
    max(m) matrix products (time-invariant), (K − min(m)) / stride · max(m) products (time-variant)."""
    kind, mats = _sequence(phi)
    scalar, ms = window_lengths(m)
    if isinstance(stride, bool) or not isinstance(stride, numbers.Integral) or stride < 1:
        raise ValueError(f"stride: expected an int >= 1, got {stride!r}")
    m_max = int(ms.max())
    if kind == "ti":
        logs = _log_norms(mats, m_max, 0, True)
        out = np.exp(logs[ms - 1] / ms)
    else:
        K = mats.shape[0]
        if m_max > K:
            raise ValueError(f"m: window length {m_max} exceeds the number of matrices K = {K}")
        best = np.full(ms.size, -np.inf)
        for start in range(0, K - int(ms.min()) + 1, int(stride)):
            span = min(m_max, K - start)
            logs = _log_norms(mats, span, start, False)
            ok = ms <= span
            best[ok] = np.maximum(best[ok], logs[ms[ok] - 1] / ms[ok])
        out = np.exp(best)
    return float(out[0]) if scalar else out


@dataclass
class Boundedness:
    """sup_k ||φ_A^k||_2 and sup_k ||φ_B^k||_2 (spec §13.3, Thm 3.3.1) and whether both are finite (and below
    ``bound`` when one was given)."""
    sup_A: float
    sup_B: float | None
    bounded: bool
    norms_A: np.ndarray
    norms_B: np.ndarray | None


def boundedness(phi_A, phi_B=None, *, bound=None) -> Boundedness:
    """Boundedness check of the time-variant matrices of a recurrence x^{k+1} = φ_A^k x^k + φ_B^k u^{k+1}: the
    spectral norms of every φ_A^k (and φ_B^k), their suprema and the verdict (finite, and <= ``bound`` if given).
    With an exponentially stable free system (:func:`bohl_exponent` < 1) bounded matrices give BIBO stability.

    phi_A : square matrix or sequence (list or (K, n, n) array) of them; phi_B : matrix or sequence (K, n, p) with
    the same K and n rows, optional."""
    kind, A = _sequence(phi_A, "phi_A")
    A = A[None] if kind == "ti" else A
    nA = np.array([np.linalg.norm(a, 2) for a in A])
    nB = None
    if phi_B is not None:
        if isinstance(phi_B, (list, tuple)):
            B = np.stack([_mat(b, f"phi_B[{k}]") for k, b in enumerate(phi_B)]) if len(phi_B) else None
        else:
            B = _check.real_array(phi_B, "phi_B", "matrix or sequence of matrices")
            B = B[None] if B.ndim == 2 else B
        if B is None or B.ndim != 3 or B.shape[0] != A.shape[0] or B.shape[1] != A.shape[1]:
            raise ValueError(f"phi_B: expected {A.shape[0]} matrices with {A.shape[1]} rows (like phi_A), got shape "
                             f"{None if B is None else B.shape}")
        if not np.all(np.isfinite(B)):
            raise ValueError("phi_B: contains NaN or infinite values")
        nB = np.array([np.linalg.norm(b, 2) for b in B])
    if bound is not None:
        if isinstance(bound, bool) or not isinstance(bound, numbers.Real) or not bound > 0:
            raise ValueError(f"bound: expected a positive number, got {bound!r}")
    sups = [float(nA.max())] + ([] if nB is None else [float(nB.max())])
    ok = all(np.isfinite(s) for s in sups) and (bound is None or all(s <= bound for s in sups))
    return Boundedness(sups[0], None if nB is None else sups[1], bool(ok), nA, nB)
