"""Iterative co-simulation schemes: :class:`Implicit` (predictor/corrector with Newton on the coupling residual,
kraft2021 §6) and :class:`WaveformRelaxation` (fixed-point iteration over whole windows, kraft2021 §7, with the
Aitken and IQN-ILS accelerations of preCICE). Pass one as ``scheme=`` to :func:`cosim.simulate`; the iterations per
macro step are in ``res.stats["iterations_per_step"]`` (total: ``res.stats["iterations"]``). Under step control a
macro step may be attempted several times (corrector failure: restore and retry with r = 0.25; failed error test):
``iterations_per_step[N]`` counts the iterations of all attempts at step N, so that the total is every iteration done.

Both iterate the end value of the coupling polynomial of the step (kraft2021 eq. 2.24 with u_{N+1} unknown), so the
approximation must be Lagrange-type (:class:`cosim.Lagrange` of degree κ, or :class:`cosim.ZOH` for κ = 0).
Tolerances: the WRMS norm of kraft2021 eq. 2.32 with weights W = 1/(atol + tol |v|), atol = tol unless given.
"""
from __future__ import annotations


import numpy as np

from . import _check, _core

_CODES = _core.codes
JACOBIANS = dict(_CODES["jacobian"])
ACCELERATIONS = {None: _CODES["acceleration"]["none"], **_CODES["acceleration"]}
WAVEFORMS = dict(_CODES["waveform"])
ON_FAILURE = dict(_CODES["on_failure"])
CONVERGENCE = {"u": 0, "y": 1}   # a flag of the C options (conv_y), not an enum


def _choice(name, v, table):
    key = v.lower() if isinstance(v, str) else v
    if key not in table:
        known = [k for k in table if k is not None]
        raise ValueError(f"{name}: unknown value {v!r}; use one of {known}")
    return key


class IterativeScheme:
    """Common part of the iterative schemes (tolerances, iteration limit, failure policy)."""

    kind = None
    code = None
    base = "jacobi"

    def __init__(self, tol, max_iter, atol, on_failure):
        self.tol = _check.real(tol, "tol", positive=True)
        self.max_iter = _check.integer(max_iter, "max_iter", 1, 100000)
        self.atol = self.tol if atol is None else _check.real(atol, "atol", positive=True)
        self.on_failure = _choice("on_failure", on_failure, ON_FAILURE)

    def spec(self, kappa) -> dict:
        """The scheme's spec for the C core (``_core.kinds["scheme"][kind]``); ``kappa``: the degree of the
        approximation (the first iterate's extrapolation)."""
        return dict(kind=self.kind, tol=self.tol, atol=self.atol, max_iter=self.max_iter, on_failure=ON_FAILURE[self.on_failure], jacobian=0,
                    tau=0.33, conv_y=0, perturbation=0.0, omega=1.0, accel=0, waveform=0, gauss_seidel=0, reuse=0,
                    filter=0.0, kappa=int(kappa))


class Implicit(IterativeScheme):
    """Implicit co-simulation (kraft2021 §6): predictor j = 0 with the explicit extrapolation p^pre (2.23)/(2.24),
    then Newton's method on the coupling residual g(u_{N+1}) = u_{N+1} − φ(y_{N+1}(u_{N+1})) (2.27) until the
    convergence test (2.31)-(2.33) holds.

    Parameters
    ----------
    jacobian : the interface Jacobian ∂y/∂u: "fd" (one perturbed integration per input from the saved state at T_N,
        perturbations Δλ of §6.3), "sap" (the first term of the series of App. A per entry: C_vel H/m for
        velocities, C_pos H²/m for positions, Table A.1; needs no extra integration; what the thesis calls sap),
        "sap2" (the first two terms of that series per entry, (A.5): − C_pos d H²/m² on velocities, − c_2 d H³/m²
        on positions; App. A's two-term variant, which the thesis found no better and unstable at high damping) or
        "exact" (LTI subsystems: the exact sensitivity from the matrix exponential, once per step; nonlinear
        subsystems: the forward sensitivity equations (A.8) Ṡ = f_x S + f_u L^κ integrated with the state by the
        unit's own integrator, at the predictor and at every corrector iterate).
    tol : relative and absolute tolerance of the WRMS norm (2.32) (``atol`` separately if given).
    max_iter : n_cor^max, corrector iterations per macro step (kraft: 10).
    convergence : "u" (δ of the coupling variables, the imCV rule) or "y" (δ of the outputs, the imMD rule).
    perturbation : Δλ_min of §6.3 (absolute); default 1e-6 (1 + |u|).
    tau : τ of (2.31) (kraft's default 0.33; 0.01 for hard cases).
    on_failure : "raise" (:class:`cosim.ConvergenceError` with the partial result) or "continue" (kraft §5.1:
        go on with the last iterate).
    """

    kind = "implicit"
    code = _CODES["scheme"][kind]

    def __init__(self, jacobian="fd", tol=1e-8, max_iter=10, convergence="u", perturbation=None, tau=0.33,
                 atol=None, on_failure="raise"):
        super().__init__(tol, max_iter, atol, on_failure)
        self.jacobian = _choice("jacobian", jacobian, JACOBIANS)
        self.convergence = _choice("convergence", convergence, CONVERGENCE)
        self.perturbation = None if perturbation is None else _check.real(perturbation, "perturbation", positive=True)
        self.tau = _check.real(tau, "tau", above=0.0, below=1.0)

    def spec(self, kappa):
        o = super().spec(kappa)
        o.update(jacobian=JACOBIANS[self.jacobian], tau=self.tau, conv_y=CONVERGENCE[self.convergence],
                 perturbation=self.perturbation or 0.0)
        return o

    def __repr__(self):
        return (f"Implicit(jacobian={self.jacobian!r}, tol={self.tol!r}, max_iter={self.max_iter}, "
                f"convergence={self.convergence!r})")


class WaveformRelaxation(IterativeScheme):
    """Waveform relaxation (kraft2021 §7; preCICE's waveform iteration): every window [T_N, T_{N+1}] is iterated as a
    fixed point over the exchanged output waveforms until the residual is below ``tol``.

    Parameters
    ----------
    omega : relaxation ω ∈ (0, 2): x^{k+1} = x^k + ω (F(x^k) − x^k) (ω = 1: plain fixed point). Kraft's eq. 2.35
        weighs the *old* value: his ω_K = 1 − ω (kraft's ω_K = 0.3 is ω = 0.7 here). With Aitken it is the start
        value of every window, with IQN-ILS the relaxation of the first iteration.
    acceleration : None, "aitken" (dynamic relaxation) or "iqn-ils" (interface quasi-Newton with least squares;
        columns of the last ``reuse`` windows reused, linearly dependent columns filtered by a QR filter with
        threshold ``filter``).
    waveform : "polynomial" (the coupling polynomial of degree κ through the previous macro points and the iterated
        end value: kraft's (2.34); works with :class:`cosim.Exact`) or "substeps" (the units' own micro-step outputs,
        interpolated by not-a-knot cubic splines: preCICE's waveform iteration; needs RK4/Euler/CVODE units).
    sweep : "jacobi" (all units from the previous iterate) or "gauss-seidel" (units in the system's order, or in
        simulate's ``order=``, use the fresh waveforms of the units swept before them).
    order : deprecated name of ``sweep`` (``order=`` means the Gauss-Seidel order of the units in
        :func:`cosim.simulate`); still accepted with a DeprecationWarning.
    """

    kind = "waveform"
    code = _CODES["scheme"][kind]

    def __init__(self, omega=1.0, acceleration=None, tol=1e-8, max_iter=50, waveform="polynomial", sweep=None,
                 reuse=0, filter=1e-6, atol=None, on_failure="raise", *, order=None):
        super().__init__(tol, max_iter, atol, on_failure)
        self.omega = _check.real(omega, "omega", above=0.0, below=2.0)
        self.acceleration = _choice("acceleration", acceleration, ACCELERATIONS)
        if self.acceleration == "none":
            self.acceleration = None
        self.waveform = _choice("waveform", waveform, WAVEFORMS)
        sweep = _check.renamed(sweep, order, "sweep", "order", "jacobi")
        self.sweep = _choice("sweep" if order is None else "order", sweep,
                             {n: _CODES["scheme"][n] for n in ("jacobi", "gauss-seidel")})
        self.base = self.sweep
        self.reuse = _check.integer(reuse, "reuse", 0, 8)
        self.filter = _check.real(filter, "filter", minimum=0.0, below=1.0)

    def spec(self, kappa):
        o = super().spec(kappa)
        o.update(omega=self.omega, accel=ACCELERATIONS[self.acceleration], waveform=WAVEFORMS[self.waveform],
                 gauss_seidel=int(self.sweep == "gauss-seidel"), reuse=self.reuse, filter=self.filter)
        return o

    def __repr__(self):
        return (f"WaveformRelaxation(omega={self.omega!r}, acceleration={self.acceleration!r}, tol={self.tol!r}, "
                f"max_iter={self.max_iter}, waveform={self.waveform!r}, sweep={self.sweep!r})")

    @property
    def order(self):
        """Deprecated name of :attr:`sweep`."""
        return self.sweep


def end_basis(kappa, a=None):
    """Coefficients (in s = (t − T_N)/H, ascending powers) of L^κ(s) = Π_{i=1..κ} (s − 1 + a_i)/a_i, the Lagrange
    basis polynomial of the node T_{N+1} (kraft2021 eq. 3.11); a_i = (T_{N+1} − T_{N+1−i})/H, default i (uniform
    grid)."""
    kappa = _check.integer(kappa, "kappa", 0, 5)
    a = np.arange(1.0, kappa + 1) if a is None else np.asarray(a, dtype=float).reshape(-1)
    if a.size != kappa or not np.all(np.isfinite(a)) or np.any(a <= 0) or (kappa and a[0] != 1.0):
        raise ValueError(f"a: expected {kappa} positive step ratios with a_1 = 1, got {a}")
    return _core.lagrange_end_basis(1.0 - a)   # the nodes T_{N+1-i}: s = 1 - a_i (the C schemes' basis)


def interface_jacobian(subsystem, H, *, method="exact", kappa=0, a=None, x=None, u=None, coefs=None, solver=None,
                       perturbation=1.0):
    """The interface Jacobian ∂y(T+H)/∂u_{N+1} of one subsystem over one window of length H from the state ``x``
    (default its x0): the sensitivity of the outputs at the window end to the end value u_{N+1} of the input
    polynomial (kraft2021 §6.2-6.3, App. A), computed by the C core as :class:`Implicit` does.

    Parameters
    ----------
    subsystem : the unit's subsystem (:class:`cosim.LTI`, :class:`cosim.ODE`, a built-in or C model).
    H : the window length H = T_{N+1} − T_N (s).
    method : "fd" (perturbed integrations with Δ = ``perturbation``, kraft2021 §6.3), "sap" (the first series term
        per entry, Table A.1), "sap2" (the first two series terms per entry, the two-term variant of App. A) or
        "exact" (LTI: the exponential propagator; nonlinear subsystems: the forward sensitivity equations (A.8)
        integrated along the trajectory by ``solver``).
    kappa, a : degree κ of the end node's Lagrange basis L^κ and the step ratios a_i (:func:`end_basis`).
    x : the state at T_N (default the subsystem's x0).
    u : the constant input on the window (default 0); or
    coefs : the input polynomial on the window, ``(κ' + 1, nu)`` coefficients of s = (t − T_N)/H in ascending
        powers (κ' <= 7, ``_core.MAXDEG``); its value at s = 1 is u_{N+1}. Give ``u`` or ``coefs``, not both.
    solver : integrates the window (default :class:`cosim.Exact` for LTI, else RK4 with 100 micro steps).
    perturbation : Δ of "fd" (absolute, > 0).

    Returns
    -------
    G : ndarray, shape (ny, nu), G[i, a] = ∂y_i(T_{N+1})/∂u_{a,N+1}.
    """
    from .solvers import Exact, RK4, as_solver
    method = _choice("method", method, JACOBIANS)
    H = _check.real(H, "H", positive=True)
    ell = end_basis(kappa, a)
    x = np.asarray(subsystem.x0 if x is None else x, dtype=float).reshape(-1)
    if u is not None and coefs is not None:
        raise ValueError("u, coefs: give the input as a constant u or as polynomial coefs, not both")
    if coefs is None:
        u = np.zeros(subsystem.nu) if u is None else np.asarray(u, dtype=float).reshape(-1)
        if u.size != subsystem.nu:
            raise ValueError(f"u: expected {subsystem.nu} input values, got {u.size}")
        coefs = u[None, :]
    else:
        coefs = _check.matrix(coefs, "coefs")
        if coefs.shape[1] != subsystem.nu or not 1 <= coefs.shape[0] <= _core.MAXDEG + 1:
            raise ValueError(f"coefs: expected (deg + 1, {subsystem.nu}) coefficients with deg <= {_core.MAXDEG}, "
                             f"got shape {coefs.shape}")
    if solver is None:
        solver = Exact() if subsystem.is_lti else RK4(substeps=100)
    solver = as_solver(solver)
    # the window's polynomial carries both the input and the end basis ℓ (the C core's degree is the larger one)
    deg = max(ell.size, coefs.shape[0]) - 1
    poly = np.zeros((deg + 1, subsystem.nu))
    poly[:coefs.shape[0]] = coefs
    ellp = np.zeros(deg + 1)
    ellp[:ell.size] = ell
    delta = np.full(subsystem.nu, _check.real(perturbation, "perturbation", positive=True))
    return _core.interface_jacobian(subsystem.spec(), solver.spec(), x, 0.0, H, ellp, poly, delta,
                                    JACOBIANS[method])
