"""Stability and local-error analysis of explicit coupling schemes (busch2016 §3-4, kraft2021 §15).

For coupled LTI subsystems integrated *exactly*, one macro step of an explicit co-simulation is a linear recurrence
(busch2016 eq. 21-23)

    X_{N+1} = Ω X_N + g,   X_N = (x(T_N); y(T_N); y(T_{N-1}); ...; y(T_{N-P+1})),

whose companion (amplification) matrix Ω depends on the scheme (Jacobi / Gauss-Seidel and its order), the
approximation of the coupling signals (ZOH, Lagrange k, EXTRIPOL-C0/C1 k), the parameters and the macro step H. The
scheme is numerically stable iff the spectral radius ρ(Ω) < 1 (eq. 25). The matrix is assembled in C from the same
approximation weights the co-simulation master uses, with the integrals K of eq. 20 computed exactly (φ functions of A H).
The local error (eq. 26) feeds the exact history of the strongly coupled system into the recurrence.

Functions: :func:`amplification_matrix`, :func:`recurrence`, :func:`spectral_radius`, :func:`stability_map`,
:func:`two_mass_stability_map`, :func:`local_error`, :func:`fit_order`; :func:`result_spectral_radius` (also
``Result.spectral_radius()``) with the settings of a run. Plots: :mod:`cosim.plot`. Users reach them as
:mod:`cosim.analysis`; this module sits below :mod:`cosim.result` (it needs no result type and runs no
simulation), so that ``Result.spectral_radius()`` does not import upwards.

Defaults (scheme, approximation, update) are those of :func:`cosim.simulate`, from :mod:`cosim.defaults`:
Jacobi, ZOH, consistent update, so that the same call pattern analyses the same co-simulation.
"""
from __future__ import annotations

import numbers
import os
from dataclasses import dataclass, field

import numpy as np

from . import _core, defaults
from .approximations import (Approximation, ExtrapolatedInterpolation, Hermite, IntegratedAcceleration, Lagrange,
                             LeastSquares, as_approximation)
from . import _check
from . import stability_acc as _acc
from .system import CoupledSystem

__all__ = ["amplification_matrix", "recurrence", "spectral_radius", "result_spectral_radius", "stability_map",
           "two_mass_stability_map", "local_error", "fit_order", "Recurrence", "StabilityMap", "LocalError"]

_SCHEMES = {n: _core.codes["scheme"][c] for n, c in (("jacobi", "jacobi"), ("gauss-seidel", "gauss-seidel"),
                                                    ("gauss_seidel", "gauss-seidel"), ("gaussseidel", "gauss-seidel"),
                                                    ("gs", "gauss-seidel"))}
_UPDATES = dict(_core.codes["update"])


# ----------------------------------------------------------------------------------------------------------------
# argument checking and packing
def _check_system(system, name="system"):
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"{name}: expected a cosim.CoupledSystem, got {type(system).__name__}")
    if len(system.subsystems) < 2:
        raise ValueError(f"{name}: the analysis needs two or more coupled subsystems, got {len(system.subsystems)}")
    for s in system.subsystems:
        if not getattr(s, "is_lti", False):
            raise ValueError(f"{name}: subsystem {s.name!r} is not a cosim.LTI; the stability analysis needs linear "
                             "time-invariant subsystems (busch2016 eq. 4)")
    return system


def _scheme_code(scheme):
    if isinstance(scheme, str):
        code = _SCHEMES.get(scheme.lower().replace(" ", "-"))
        if code is not None:
            return code, None
        raise ValueError(f"scheme: unknown scheme {scheme!r}; use 'jacobi' or 'gauss-seidel'")
    # scheme objects of the engine (e.g. cosim.GaussSeidel(order=...)), if present
    name = type(scheme).__name__.lower()
    if "jacobi" in name:
        return 0, None
    if "gauss" in name:
        return 1, getattr(scheme, "order", None)
    raise TypeError(f"scheme: expected 'jacobi' or 'gauss-seidel', got {type(scheme).__name__}")


def _order_array(system, order):
    if order is None:
        return None
    try:
        items = list(order)
    except TypeError:
        raise TypeError(f"order: expected a sequence of subsystem names or indices, got {order!r}") from None
    idx = []
    for it in items:
        if isinstance(it, str):
            if it not in system.names:
                raise ValueError(f"order: unknown subsystem {it!r} (known: {system.names})")
            idx.append(system.names.index(it))
        elif isinstance(it, numbers.Integral) and not isinstance(it, bool):
            if not 0 <= it < len(system.subsystems):
                raise ValueError(f"order: index {it} out of range")
            idx.append(int(it))
        else:
            raise TypeError(f"order: expected subsystem names or indices, got {it!r}")
    if sorted(idx) != list(range(len(system.subsystems))):
        raise ValueError(f"order: must name every subsystem exactly once, got {items!r}")
    return np.array(idx, dtype=np.intc)


def _approx(approximation):
    a = as_approximation(approximation)
    if isinstance(a, IntegratedAcceleration):
        raise ValueError(f"approximation: {a!r} carries output derivatives in its recurrence; "
                         "cosim.analysis.spectral_radius and amplification_matrix analyse it (not this function)")
    if isinstance(a, Hermite):
        raise ValueError("approximation: Hermite needs output derivatives and is not supported by the stability "
                         "analysis; use cosim.ZOH(), cosim.Lagrange(k), cosim.ExtrapolatedInterpolation(k, c) or "
                         "cosim.LeastSquares(k, n_points)")
    if not isinstance(a, (Lagrange, ExtrapolatedInterpolation, LeastSquares)):
        raise TypeError(f"approximation: unsupported type {type(a).__name__}")
    if getattr(a, "smooth", False):
        raise ValueError("approximation: the stability analysis covers the unsmoothed approximations; the quintic "
                         "switch (smooth=True, moshagen §2.5) blends two windows' polynomials and changes the "
                         "recurrence")
    return a


def _check_H(H, name="H", allow_array=True):
    if isinstance(H, (bool, np.bool_)):
        raise TypeError(f"{name}: expected a positive number or a 1-D array of them, got {H!r}")
    arr = _check.real_array(H, name, "positive number or 1-D array of them")
    if arr.ndim > 1 or (arr.ndim == 1 and not allow_array):
        raise ValueError(f"{name}: expected a {'scalar or 1-D array' if allow_array else 'scalar'}")
    if arr.size == 0:
        raise ValueError(f"{name}: empty")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name}: macro step sizes must be finite and > 0, got {H!r}")
    return arr


def _sizes(system):
    nx = np.array([s.nx for s in system.subsystems], dtype=np.intc)
    nu = np.array([s.nu for s in system.subsystems], dtype=np.intc)
    ny = np.array([s.ny for s in system.subsystems], dtype=np.intc)
    return nx, nu, ny


def _pack(system):
    """Packed parameter set (analysis/companion.h): A_i, B_i, C_i, D_i per subsystem, then L, r."""
    parts = []
    for s in system.subsystems:
        parts += [s.A.ravel(), s.B.ravel(), s.C.ravel(), s.D.ravel()]
    L, r = system.connection_matrix()
    parts += [L.ravel(), r.ravel()]
    return np.concatenate(parts).astype(float)


class _Structure:
    """Everything the C plan needs except the numbers: sizes, L pattern, scheme, order, approximation, update."""

    def __init__(self, system, scheme, approximation, order, update, mask=None):
        scheme = defaults.SCHEME if scheme is None else scheme
        approximation = defaults.approximation() if approximation is None else approximation
        update = defaults.UPDATE if update is None else update
        self.code, sch_order = _scheme_code(scheme)
        if order is None:
            order = sch_order
        if order is not None and self.code == 0:
            raise ValueError("order: only meaningful for scheme='gauss-seidel'")
        self.order = _order_array(system, order)
        self.approximation = _approx(approximation)
        if update not in _UPDATES:
            raise ValueError(f"update: must be one of {tuple(_UPDATES)}, got {update!r}")
        self.update = update
        self.nx, self.nu, self.ny = _sizes(system)
        L, _ = system.connection_matrix()
        self.mask = (L != 0).astype(np.uint8) if mask is None else mask
        self.args = (self.nx, self.nu, self.ny, self.mask, self.approximation.spec(), self.code,
                     self.order, _UPDATES[update])
        self.info = _core.amp_info(*self.args)

    def same_sizes(self, system):
        nx, nu, ny = _sizes(system)
        return np.array_equal(nx, self.nx) and np.array_equal(nu, self.nu) and np.array_equal(ny, self.ny)


def _signal_names(system):
    """The result's signal names (:attr:`cosim.Result.signals`) of the entries of ``_labels(system, 1)``: every
    state, then every output."""
    return ([f"{s.name}.{s.signal_label('x', i)}" for s in system.subsystems for i in range(s.nx)]
            + [f"{s.name}.{s.signal_label('y', j)}" for s in system.subsystems for j in range(s.ny)])


def _labels(system, depth):
    labels = []
    for s in system.subsystems:
        labels += [f"{s.name}.x[{i}]" for i in range(s.nx)]
    for lag in range(depth):
        when = "N" if lag == 0 else f"N-{lag}"
        for s in system.subsystems:
            outs = s.outputs or [f"y[{i}]" for i in range(s.ny)]
            labels += [f"{s.name}.{o}@T_{when}" for o in outs]
    return labels


def _threads(threads):
    if threads is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - non-Linux
            return max(1, os.cpu_count() or 1)
    return _check.integer(threads, "threads", 1, 1024)


# ----------------------------------------------------------------------------------------------------------------
# single system
@dataclass
class Recurrence:
    """One macro step X_{N+1} = Ω X_N + g (busch2016 eq. 23).

    ``Omega``: companion matrix Ω; ``g``: response to the constant offsets r of u = L y + r; ``labels``: meaning of
    each entry of X (``"S1.x[0]"``, ``"S2.F@T_N-1"``, ...); ``depth``: P, the number of output samples in X;
    ``nx``, ``ny``: total states and outputs (X = (x; y_N; ...; y_{N-P+1}))."""

    Omega: np.ndarray
    g: np.ndarray
    labels: list
    depth: int
    nx: int
    ny: int

    @property
    def rho(self) -> float:
        """Spectral radius ρ(Ω) (eq. 25); stable iff < 1."""
        return float(np.max(np.abs(np.linalg.eigvals(self.Omega))))

    def history(self, x, y_hist):
        """Assemble X_N from the stacked state x(T_N) and a sequence of stacked outputs y(T_N), y(T_{N-1}), ..."""
        y_hist = [np.asarray(v, dtype=float).reshape(-1) for v in y_hist]
        if len(y_hist) < self.depth:
            raise ValueError(f"y_hist: need {self.depth} output samples, got {len(y_hist)}")
        return np.concatenate([np.asarray(x, dtype=float).reshape(-1)] + y_hist[:self.depth])

    def step(self, X):
        """X_{N+1} = Ω X_N + g."""
        return self.Omega @ X + self.g


def recurrence(system, H, scheme=None, approximation=None, *, order=None,
               update=None) -> Recurrence:
    """The full recurrence of one macro step (Ω, g and the meaning of X); see :func:`amplification_matrix`."""
    _check_system(system)
    h = float(_check_H(H, allow_array=False))
    st = _Structure(system, scheme, approximation, order, update)
    Om, g, depth = _core.amp_matrix(*st.args, _pack(system), h)
    return Recurrence(Om, g, _labels(system, depth), depth, int(st.nx.sum()), int(st.ny.sum()))


def amplification_matrix(system, H, scheme=None, approximation=None, *, order=None,
                         update=None) -> np.ndarray:
    """Companion (amplification) matrix Ω of one macro step (busch2016 eq. 23-24).

    Parameters
    ----------
    system : CoupledSystem
        Two or more :class:`cosim.LTI` subsystems (any sizes) coupled by u = L y + r.
    H : float
        Macro step size (constant, > 0).
    scheme : ``"jacobi"`` (default, as in cosim.simulate; :mod:`cosim.defaults`) or ``"gauss-seidel"``
        Jacobi: all signals extrapolated (busch2016 eq. 11/12/14). Gauss-Seidel: subsystems stepped in ``order``
        (default: as listed); a subsystem interpolates the outputs of those already stepped (eq. 13).
    approximation : cosim.ZOH, cosim.Lagrange(k), cosim.ExtrapolatedInterpolation(k, continuity)
        Approximation of every coupling signal (default ZOH, as in cosim.simulate); k = 0..5 (EXTRIPOL k <= 5
        here too).
    order : sequence of subsystem names or indices, optional
        Gauss-Seidel stepping order.
    update : ``"consistent"`` (default, as in cosim.simulate) or ``"simplified"``
        Outputs at T_{N+1}: ``"consistent"`` solves the algebraic loop u = L y + r (kraft2021 eq. 2.22; what
        cosim.simulate does); ``"simplified"`` uses y = C x + D ũ(T_{N+1}) with the approximated input
        (busch2016 eq. 19). They differ only for subsystems with feed-through whose inputs are extrapolated.

    Returns
    -------
    ndarray (dim, dim) acting on X_N = (x(T_N); y(T_N); ...; y(T_{N-P+1})); see :func:`recurrence` for the labels.
    With :class:`cosim.IntegratedAcceleration` / :class:`cosim.RelaxedAcceleration` the state also carries the
    output derivatives (``cosim.stability_acc.amplification_matrix``).
    """
    if isinstance(approximation, IntegratedAcceleration):
        _check_system(system)
        return _acc.amplification_matrix(system, _check_H(H, allow_array=False),
                                         *_acc_args(system, scheme, order, update, approximation))
    return recurrence(system, H, scheme, approximation, order=order, update=update).Omega


def _acc_args(system, scheme, order, update, approximation):
    """acc/accRel (kraft2021 App. C): (approximation, Gauss-Seidel order or None for Jacobi); their update flag is
    the predictor's own."""
    if update is not None:
        raise ValueError(f"update: not used with {approximation!r} (its update= says whether the accelerations are "
                         "recomputed)")
    code, sch_order = _scheme_code(scheme) if scheme is not None else (0, None)
    order = sch_order if order is None else order
    if code == 0:
        if order is not None:
            raise ValueError("order: only meaningful for scheme='gauss-seidel'")
        return approximation, None
    o = _order_array(system, order)
    return approximation, np.arange(len(system.subsystems)) if o is None else o


def spectral_radius(system, H, scheme=None, approximation=None, *, order=None, update=None,
                    threads=None):
    """ρ(Ω) (busch2016 eq. 25) for one system at one H (float) or over a 1-D array of H (array).

    Arguments as in :func:`amplification_matrix` (defaults: those of :func:`cosim.simulate`); ``threads``: POSIX
    threads over the H values. For the settings of a finished run use ``res.spectral_radius()``
    (:func:`result_spectral_radius`).

    Examples
    --------
    ZOH under the Jacobi scheme (the defaults) on the two-mass oscillator: stable at H = 1 ms, unstable at 2 ms.

    >>> import cosim
    >>> system = cosim.models.two_mass_oscillator(ck=2e5, dk=200)
    >>> [round(float(r), 4) for r in cosim.analysis.spectral_radius(system, [1e-3, 2e-3])]
    [0.9953, 1.0004]
    """
    _check_system(system)
    Harr = _check_H(H)
    if isinstance(approximation, IntegratedAcceleration):
        return _acc.spectral_radius(system, Harr, *_acc_args(system, scheme, order, update, approximation))
    st = _Structure(system, scheme, approximation, order, update)
    rho, nfail, msg = _core.rho_map(*st.args, _pack(system)[None, :], np.atleast_1d(Harr), _threads(threads))
    if nfail:
        raise ArithmeticError(f"spectral_radius: {msg}")
    return float(rho[0, 0]) if Harr.ndim == 0 else rho[0]


def result_spectral_radius(result) -> float:
    """ρ(Ω) (busch2016 eq. 25) for the settings of a finished :func:`cosim.simulate` run: its system, scheme,
    approximation, update, Gauss-Seidel order and macro step H (``Result.spectral_radius()``).

    Needs an all-LTI system of two or more subsystems and a constant H (a run with an explicit non-uniform grid
    has no single Ω; the Kraft start-up steps are ignored: ρ describes the steps of size H after them). The
    analysis assumes exact integration of the subsystems (cosim.Exact); with CVODE/RK4 ρ describes the coupling
    error only."""
    if not (hasattr(result, "options") and hasattr(result, "system")):
        raise TypeError(f"result: expected a cosim Result, got {type(result).__name__}")
    opts = result.options or {}
    if opts.get("monolithic"):
        raise ValueError("result: a monolithic reference run has no coupling to analyse")
    if "scheme" not in opts or "H" not in opts:
        raise ValueError("result: does not record the settings of a cosim.simulate run")
    grid = opts.get("grid")
    H = opts["H"]
    if grid is not None:
        d = np.diff(np.asarray(grid, dtype=float))
        if np.max(d) - np.min(d) > 1e-9 * np.max(d):
            raise ValueError("result: the run used a non-uniform macro grid; the spectral radius needs one constant "
                             "H (call cosim.analysis.spectral_radius with the H of interest)")
    system = result.system
    _check_system(system, "result.system")
    if isinstance(opts["approximation"], IntegratedAcceleration):   # acc/accRel: the update is the predictor's own
        return spectral_radius(system, H, opts["scheme"], opts["approximation"], order=opts.get("order"))
    return spectral_radius(system, H, opts["scheme"], opts["approximation"], order=opts.get("order"),
                           update=opts["update"])


# ----------------------------------------------------------------------------------------------------------------
# maps over parameter grids
@dataclass
class StabilityMap:
    """ρ(Ω) over a parameter grid: a labelled array.

    ``rho``: ndarray with one axis per entry of ``dims`` (the parameters in the order given, then ``"H"``);
    ``coords``: dict axis name -> grid values; ``stable``: ρ < 1 (NaN counts as not stable). ``nfail`` points could
    not be evaluated (NaN), ``first_error`` says why."""

    rho: np.ndarray
    dims: tuple
    coords: dict
    scheme: str
    approximation: Approximation
    update: str = "consistent"
    order: tuple | None = None
    nfail: int = 0
    first_error: str = ""
    meta: dict = field(default_factory=dict)

    @property
    def stable(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self.rho < 1.0

    def count_stable(self) -> int:
        return int(np.count_nonzero(self.stable))

    def count_unstable(self) -> int:
        with np.errstate(invalid="ignore"):
            return int(np.count_nonzero(self.rho >= 1.0))

    def points(self):
        """(coordinates of every grid point as a dict of flat arrays, flat ρ) - for scatter plots."""
        mesh = np.meshgrid(*[self.coords[d] for d in self.dims], indexing="ij")
        return {d: m.ravel() for d, m in zip(self.dims, mesh)}, self.rho.ravel()

    def sel(self, **fixed) -> "StabilityMap":
        """Sub-map with the named axes fixed at the grid value nearest to the given one (a 2-D slice of a 3-D map)."""
        idx = []
        dims = []
        for d in self.dims:
            if d in fixed:
                c = self.coords[d]
                idx.append(int(np.argmin(np.abs(np.log(c / fixed[d])) if np.all(c > 0) and fixed[d] > 0
                                         else np.abs(c - fixed[d]))))
            else:
                idx.append(slice(None))
                dims.append(d)
        unknown = set(fixed) - set(self.dims)
        if unknown:
            raise ValueError(f"sel: unknown axes {sorted(unknown)}; axes are {self.dims}")
        meta = dict(self.meta, fixed={d: float(self.coords[d][i]) for d, i in zip(self.dims, idx)
                                      if not isinstance(i, slice)})
        return StabilityMap(self.rho[tuple(idx)], tuple(dims), {d: self.coords[d] for d in dims}, self.scheme,
                            self.approximation, self.update, self.order, self.nfail, self.first_error, meta)


def _grid(values, name):
    try:
        a = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a 1-D array of numbers") from None
    if a.ndim == 0:
        a = a.reshape(1)
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D grid, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: empty grid")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


_PACK_ROWS = 8192   # grid points per block of the affine pack evaluation (about 10 ms each)


def _build_packs(build, params, affine):
    """Packed parameter sets for every point of the parameter grid (row-major over the axes).

    The builder is called once per axis (plus verification points) when the packed matrices are affine in the
    parameters (true for the two-mass oscillator in ck, dk): packs = P0 + Σ_q (p_q - p0_q) ΔP_q, evaluated with NumPy;
    otherwise once per grid point."""
    names = list(params)
    grids = [params[n] for n in names]
    shape = tuple(len(g) for g in grids)

    def call(values):
        s = build(**dict(zip(names, values)))
        if not isinstance(s, CoupledSystem):
            raise TypeError(f"build: must return a cosim.CoupledSystem, got {type(s).__name__}")
        return s

    p0 = [g[0] for g in grids]
    s0 = _check_system(call(p0), "build(...)")
    P0 = _pack(s0)
    sizes0 = _sizes(s0)
    if not grids:  # only H is swept: the one system
        return P0[None, :], shape, s0

    def pack_of(values):
        s = _check_system(call(values), "build(...)")
        if not all(np.array_equal(a, b) for a, b in zip(_sizes(s), sizes0)):
            raise ValueError("build: the subsystem sizes must not change over the parameter grid")
        return _pack(s), s

    if affine is not False:
        dirs = []
        for q, g in enumerate(grids):
            if len(g) == 1:
                dirs.append(np.zeros_like(P0))
                continue
            v = list(p0)
            v[q] = g[-1]
            dirs.append((pack_of(v)[0] - P0) / (g[-1] - g[0]))
        D = np.array(dirs)
        # Verify away from the points that defined the directions: interior values of every axis, the corner of
        # all last values (catches cross terms such as ck*dk) and random grid points.
        rng = np.random.default_rng(12345)
        checks = []
        if affine is None:
            for q, g in enumerate(grids):
                for i in sorted({len(g) // 2, len(g) // 3, (2 * len(g)) // 3} - {0, len(g) - 1}):
                    v = list(p0)
                    v[q] = g[i]
                    checks.append(v)
            checks.append([g[-1] for g in grids])
            checks += [[g[rng.integers(len(g))] for g in grids] for _ in range(4)]
        ok = True
        for v in checks:
            pred = P0 + (np.array(v) - np.array(p0)) @ D
            true = pack_of(v)[0]
            scale = np.abs(P0) + np.abs(np.array(v) - np.array(p0)) @ np.abs(D) + 1e-300
            if np.any(np.abs(pred - true) > 1e-11 * scale):
                ok = False
                break
        if ok:
            mesh = np.meshgrid(*grids, indexing="ij")
            dp = np.stack([m.ravel() - p for m, p in zip(mesh, p0)], axis=1)
            packs = np.empty((dp.shape[0], P0.size))
            for i in range(0, dp.shape[0], _PACK_ROWS):   # in blocks: Ctrl-C is noticed between them
                packs[i:i + _PACK_ROWS] = P0 + dp[i:i + _PACK_ROWS] @ D
            return packs, shape, s0
    packs = np.empty((int(np.prod(shape)), P0.size))
    for flat, idx in enumerate(np.ndindex(*shape)):
        packs[flat] = pack_of([g[i] for g, i in zip(grids, idx)])[0]
    return packs, shape, s0


def stability_map(build, params, H, scheme=None, approximation=None, *, order=None, update=None,
                  threads=None, affine=None) -> StabilityMap:
    """ρ(Ω) over a grid of parameters and macro step sizes, computed in C and threaded over grid points.

    Parameters
    ----------
    build : callable
        ``build(**{name: value})`` returns the coupled all-LTI :class:`cosim.CoupledSystem` at one parameter point
        (e.g. ``lambda ck, dk: models.two_mass_oscillator(ck, dk)``).
    params : dict name -> 1-D grid
        Parameter axes (in order); may be empty (then only H is swept).
    H : 1-D grid of macro step sizes (last axis of the result).
    scheme, approximation, order, update : see :func:`amplification_matrix`.
    threads : int, optional
        POSIX threads (default: the CPUs available to this process).
    affine : None, True or False
        If the packed system matrices are affine in the parameters the builder is called only once per axis
        (None: detect and verify at random grid points; True: assume; False: call the builder at every grid point).

    Returns
    -------
    StabilityMap with ``rho`` of shape (len(params[0]), ..., len(H)).
    """
    if not callable(build):
        raise TypeError("build: expected a callable returning a cosim.CoupledSystem")
    if not isinstance(params, dict):
        raise TypeError("params: expected a dict {name: 1-D grid}")
    grids = {str(n): _grid(v, f"params[{n!r}]") for n, v in params.items()}
    Hg = _grid(H, "H")
    if np.any(Hg <= 0):
        raise ValueError("H: macro step sizes must be > 0")
    nthreads = _threads(threads)
    if affine not in (None, True, False):
        raise ValueError("affine: must be None, True or False")
    if isinstance(approximation, IntegratedAcceleration):
        return _acc_stability_map(build, grids, Hg, scheme, approximation, order, update)
    packs, shape, s0 = _build_packs(build, grids, affine)
    L_pattern = np.zeros_like(s0.L, dtype=bool)
    nL = s0.L.size
    off = packs.shape[1] - s0.r.size - nL
    L_pattern |= np.any(packs[:, off:off + nL] != 0, axis=0).reshape(s0.L.shape)
    st = _Structure(s0, scheme, approximation, order, update,
                    mask=L_pattern.astype(np.uint8))
    rho, nfail, msg = _core.rho_map(*st.args, np.ascontiguousarray(packs), Hg, nthreads)
    dims = tuple(grids) + ("H",)
    coords = dict(grids, H=Hg)
    sch = "jacobi" if st.code == 0 else "gauss-seidel"
    order_names = tuple(s0.names[i] for i in st.order) if st.order is not None else None
    return StabilityMap(rho.reshape(shape + (Hg.size,)), dims, coords, sch, st.approximation, st.update, order_names,
                        int(nfail), msg, {"threads": nthreads})


def _acc_stability_map(build, grids, Hg, scheme, approximation, order, update):
    """stability_map for acc/accRel: the system built at every grid point, ρ of the recurrence with the rates
    (cosim.stability_acc) in Python, one point after another."""
    names = list(grids)
    shape = tuple(len(g) for g in grids.values())
    rho = np.empty(shape + (Hg.size,))
    order_names = None
    for idx in np.ndindex(*shape):
        s = build(**{n: grids[n][i] for n, i in zip(names, idx)})
        if not isinstance(s, CoupledSystem):
            raise TypeError(f"build: must return a cosim.CoupledSystem, got {type(s).__name__}")
        _check_system(s, "build(...)")
        a, o = _acc_args(s, scheme, order, update, approximation)
        rho[idx] = _acc.spectral_radius(s, Hg, a, o)
        order_names = None if o is None else tuple(s.names[i] for i in o)
    sch = "jacobi" if order_names is None else "gauss-seidel"
    return StabilityMap(rho, tuple(names) + ("H",), dict(grids, H=Hg), sch, approximation, None, order_names, 0, "",
                        {"threads": 1})   # update: the predictor's own (approximation.update)


def two_mass_stability_map(ck, dk, H, coupling="force/displacement", scheme=None, approximation=None, *,
                           order=None, update=None, threads=None, **model) -> StabilityMap:
    """ρ over (ck, dk, H) for the two-mass oscillator of busch2016 §3 (Figs. 9-14).

    ``model`` goes to :func:`cosim.models.two_mass_oscillator` (defaults are Busch's m1 = m2 = 10, c1 = 1e6,
    c2 = 1e7, d1 = 1, d2 = 2)."""
    from .models import two_mass_oscillator

    if "ck" in model or "dk" in model:
        raise TypeError("two_mass_stability_map: give ck and dk as grids, not in **model")

    def build(ck, dk):
        return two_mass_oscillator(ck=ck, dk=dk, coupling=coupling, **model)

    m = stability_map(build, {"ck": ck, "dk": dk}, H, scheme, approximation, order=order, update=update,
                      threads=threads)
    m.meta["coupling"] = coupling
    return m


# ----------------------------------------------------------------------------------------------------------------
# local error
@dataclass
class LocalError:
    """Local error of one macro step over H (busch2016 eq. 26).

    ``eps[:, i]``: (x, y)_co-sim(T_N + H) − (x, y)_exact(T_N + H) over H for the entry ``labels[i]`` (the
    recurrence's names: ``"S1.x[0]"`` for states, ``"S2.F@T_N"`` for outputs); ``exact``: the exact values;
    ``order``: dict signal name -> fitted slope of log|ε| over log H (:func:`fit_order`), keyed by the names of
    :attr:`cosim.Result.signals` (``"S1.x1"``, ``"S2.F"``; an output that is a state appears once, as the
    state)."""

    H: np.ndarray
    eps: np.ndarray
    exact: np.ndarray
    labels: list
    order: dict

    def norm(self, which="x"):
        """max |ε| over the states (``"x"``), the outputs (``"y"``) or everything (``"all"``), per H."""
        sel = [i for i, l in enumerate(self.labels) if which == "all" or (which == "x") == (".x[" in l)]
        return np.max(np.abs(self.eps[:, sel]), axis=1)


def fit_order(H, err, floor=None, scale=None):
    """Slope of log|err| over log H by least squares (the local-error order, busch2016 Fig. 15).

    Points with |err| at or below ``floor`` are left out (default floor: 1e3 machine epsilons times ``scale``, the
    magnitude of the quantity whose error it is, or of the largest error if no scale is given: the round-off
    floor); NaN if fewer than 3 points remain."""
    H = np.asarray(H, dtype=float)
    e = np.abs(np.asarray(err, dtype=float))
    if floor is None:
        ref = float(scale) if scale is not None else float(np.max(e))
        floor = 1e3 * np.finfo(float).eps * max(ref, 1e-300)
    sel = (e > floor) & np.isfinite(e)
    if np.count_nonzero(sel) < 3:
        return float("nan")
    return float(np.polyfit(np.log(H[sel]), np.log(e[sel]), 1)[0])


def local_error(system, H, scheme=None, approximation=None, *, order=None, update=None, t=0.0,
                x0=None, floor=None) -> LocalError:
    """Local error ε_{N+1}(H) (busch2016 eq. 26) for a 1-D array of macro step sizes.

    The exact solution of the strongly coupled system from ``x0`` (default: the subsystems' x0) at t = 0 supplies
    the history at T_N = ``t``, T_N − H, ... (propagated backwards when needed); the recurrence makes one step and is
    compared with the exact value at T_N + H. Orders are fitted per entry with :func:`fit_order`."""
    _check_system(system)
    Hg = _check_H(H)
    Hg = np.atleast_1d(Hg)
    try:
        t = float(t)
    except (TypeError, ValueError):
        raise TypeError("t: expected a real number") from None
    if not np.isfinite(t):
        raise ValueError("t: must be finite")
    n = sum(s.nx for s in system.subsystems)
    if x0 is None:
        z0 = np.concatenate([s.x0 for s in system.subsystems])
    else:
        try:
            z0 = np.asarray(x0, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            raise TypeError(f"x0: expected {n} real numbers (all states stacked)") from None
        if z0.size != n or not np.all(np.isfinite(z0)):
            raise ValueError(f"x0: expected {n} finite values (all states stacked), got {z0.size}")
    if isinstance(approximation, IntegratedAcceleration):   # acc/accRel: the recurrence with the rates
        eps, exact = _acc.local_error(system, Hg, *_acc_args(system, scheme, order, update, approximation), t, z0)
    else:
        st = _Structure(system, scheme, approximation, order, update)
        eps, exact, _ = _core.local_error(*st.args, _pack(system), z0, t, Hg)
    labels = _labels(system, 1)
    orders = {}
    for i, name in enumerate(_signal_names(system)):
        # an output that is a state has the state's name: its order is the state's (listed first)
        orders.setdefault(name, fit_order(Hg, eps[:, i], floor, scale=np.max(np.abs(exact[:, i]))))
    return LocalError(Hg, eps, exact, labels, orders)
