"""System identification of interface Jacobians (Genser 2020, chapter 2.3; spec ``genser2020.md`` sections 2, 6, 7).

All numerics run in the C core (``csrc/sysid``, LAPACK); this module validates arguments and wraps results.

Index convention (spec section 1.3): ``y[k]`` is the output at T^k, ``u[k]`` the input applied during the step
(T^{k-1}, T^k] that produced it. Discrete interface Jacobians (IJs) predict

    y^{k+1} = Sy y^k + Su^- u^k + Su^+ u^{k+1}                                   (2.15)

Contents
--------
moesp, MOESPWindow    subspace identification (section 6.1; MOESP and PO-MOESP), batch and sliding window
RLS                   MIMO recursive least squares with forgetting factor lambda (section 6.2)
gilbert               minimal realization of the RLS transfer-function matrix (section 6.3)
ij_continuous         continuous IJs dS/dy, dS/du, dS/du' from (A, B, C, D) (2.12-2.14)
ij_discrete           discrete IJs from a thesis-form (2.18-2.20) or standard-form model (section 2.2 [EXT])
discretize            exact PhiA = e^{A dT}, PhiB = int e^{A s} B ds
resample              n_a = n_b = 1 parameters to a larger step (4.13, 4.14, section 6.5)
eps_si, eps_si_global quality measure eps_SI,rel (2.92) and its global norm (2.93)
switch_factor         tanh switch-phase factor fac_MBC (section 8.4)
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from . import _check, _core

__all__ = ["StateSpace", "MOESPResult", "moesp", "MOESPWindow", "RLS", "Realization", "gilbert", "ContinuousIJ",
           "DiscreteIJ", "ij_continuous", "ij_discrete", "discretize", "resample", "eps_si", "eps_si_global",
           "switch_factor"]


# ----------------------------------------------------------------------------------------------- validation helpers

def _array(value, name, ndim=None, *, allow_1d_as_column=False):
    """Float64 C-contiguous array of `ndim` dimensions (any if None), finite entries; 1-D data becomes one column if
    allowed. Complex, string and non-numeric input raise TypeError naming the argument (cosim._check.real_array)."""
    a = _check.real_array(value, name, "array of numbers")
    a = np.ascontiguousarray(a) if a.ndim else a
    if allow_1d_as_column and a.ndim == 1:
        a = a.reshape(-1, 1)
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name}: expected {ndim} dimension(s), got {a.ndim}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def _samples(u, y):
    U = _array(u, "u", 2, allow_1d_as_column=True)
    Y = _array(y, "y", 2, allow_1d_as_column=True)
    if U.shape[0] != Y.shape[0]:
        raise ValueError(f"y: mismatched lengths: u has {U.shape[0]} samples, y has {Y.shape[0]}")
    if U.shape[1] == 0 or Y.shape[1] == 0:
        raise ValueError("u, y: need at least one input and one output channel")
    return U, Y


# ----------------------------------------------------------------------------------------------- results

@dataclass
class StateSpace:
    """Discrete standard-form model x_{j+1} = PhiA x_j + PhiB u_j, y_j = C x_j + D u_j (A = PhiA, B = PhiB)."""
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray

    @property
    def order(self) -> int:
        return self.A.shape[0]

    def eigenvalues(self) -> np.ndarray:
        """Eigenvalues of PhiA (similarity-invariant)."""
        return np.linalg.eigvals(self.A) if self.order else np.zeros(0, complex)

    def markov(self, count: int) -> list[np.ndarray]:
        """Markov parameters [D, C PhiB, C PhiA PhiB, ...] (``count`` of them; similarity-invariant)."""
        out, M = [self.D.copy()], self.B.copy()
        for _ in range(count - 1):
            out.append(self.C @ M)
            M = self.A @ M
        return out


@dataclass
class MOESPResult(StateSpace):
    """MOESP model (spec 6.1) plus diagnostics.

    singular_values: the r n_y singular values of L22 (2.82), for the order choice.
    rank_u: numerical rank of L11 (r n_u if the input is persistently exciting of order r).
    reliable: False if L11 or the [D; PhiB] least-squares problem is rank deficient: PhiB and D are then not
    determined by the data (non-exciting input); PhiA and C may still be meaningful.
    """
    singular_values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rank_u: int = 0
    reliable: bool = True
    block_rows: int = 0
    columns: int = 0
    message: str = ""


def _moesp_result(d, r):
    msg = ""
    if not d["reliable"]:
        msg = (f"MOESP result unreliable: rank(L11) = {d['rank_u']} of {r * d['B'].shape[1]} (input not "
               f"persistently exciting of order r = {r}?), rank of the [D; PhiB] problem = {d['rank_bd']} of "
               f"{d['D'].shape[0] + d['A'].shape[0]}")
    return MOESPResult(A=d["A"], B=d["B"], C=d["C"], D=d["D"], singular_values=d["sv"], rank_u=d["rank_u"],
                       reliable=bool(d["reliable"]), block_rows=r, columns=d["ncols"], message=msg)


_MOESP_METHODS = dict(_core.codes["moesp_method"])
DEFAULT_METHOD = "po-moesp"


def _method_arg(method):
    if not isinstance(method, str):
        raise TypeError(f"method: expected a string, one of {sorted(_MOESP_METHODS)}, got {type(method).__name__}")
    key = method.strip().lower()
    if key not in _MOESP_METHODS:
        raise ValueError(f"method: unknown MOESP variant {method!r}; expected one of {sorted(_MOESP_METHODS)}")
    return key


#: Size caps of MOESP (the C core allocates the Hankel matrix and its LQ factor): Hankel rows r (n_u + n_y) (twice
#: that for PO-MOESP) and Hankel entries rows x columns (1 GiB of float64).
MOESP_MAX_ROWS = 4096
MOESP_MAX_HANKEL = 2 ** 27


def _moesp_caps(rows, columns, what):
    if rows > MOESP_MAX_ROWS:
        raise ValueError(f"block_rows: the Hankel matrix would have {rows} rows ({what}), more than the cap of "
                         f"{MOESP_MAX_ROWS}")
    if rows * columns > MOESP_MAX_HANKEL:
        raise ValueError(f"{'window' if what == 'window' else 'u'}: the Hankel matrix would have {rows} x {columns} "
                         f"entries, more than the cap of {MOESP_MAX_HANKEL}")


def _moesp_need(r, nu, ny, method):
    """(Hankel rows, fewest samples): r (n_u + n_y) rows over r samples (MOESP), twice that over 2 r (PO-MOESP)."""
    k = 2 if method == "po-moesp" else 1
    rows = k * r * (nu + ny)
    return rows, rows + k * r - 1


def _order_args(order, block_rows, threshold, ny):
    if order is not None:
        order = _check.integer(order, "order", 0)
    if block_rows is None:
        block_rows = max(2, order + 1) if order is not None else 10
    block_rows = _check.integer(block_rows, "block_rows", 2)
    threshold = _check.real(threshold, "threshold")
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold: must be in [0, 1), got {threshold}")
    if order is not None and order > (block_rows - 1) * ny:
        raise ValueError(f"order: {order} exceeds (block_rows - 1) * n_y = {(block_rows - 1) * ny}; "
                         f"increase block_rows")
    return (-1 if order is None else order), block_rows, threshold


def moesp(u, y, order=None, block_rows=None, threshold=1e-8, method=DEFAULT_METHOD) -> MOESPResult:
    """MOESP identification of PhiA, PhiB, C, D from aligned samples (u_j, y_j).

    Parameters
    ----------
    u : (N, n_u) or (N,) array, inputs u_j.
    y : (N, n_y) or (N,) array, outputs y_j (same N).
    order : model order n (thesis ``modelOrder``); None selects it from the singular values of L22:
        the number of sigma_i > threshold * sigma_1.
    block_rows : number of block rows r of the Hankel matrices (not given in the thesis, erratum E12);
        default n + 1 (at least 2) for a fixed order, 10 for automatic order.
    threshold : relative singular-value threshold of the automatic order choice.
    method : "po-moesp" (default) or "moesp".
        "moesp": ordinary MOESP, the thesis' algorithm (Genser eq. 2.72-2.85, spec 6.1): LQ of [U; Y], SVD of L22;
        W = N - r + 1 Hankel columns, at least r (n_u + n_y).
        "po-moesp": past-output MOESP (Verhaegen 1994; Verhaegen & Verdult, Filtering and System Identification,
        sec. 9.6): r past and r future block rows, LQ of [U_f; Z_p; Y_f] with instruments Z_p = [U_p; Y_p], SVD
        of L32, then as MOESP with L21 -> L31; W = N - 2 r + 1 columns, at least 2 r (n_u + n_y).
        Why PO-MOESP is the default: with output noise plain MOESP's L22 keeps the noise (biased column space
        when a mode is near the noise floor), the past-data instruments remove it. Measured at 40 dB SNR over
        30 random 3rd-order 2x2 systems (N = 4000, r = 6): mean eigenvalue error 1.0e-3 vs 2.2e-3 (plain), worst
        5.0e-3 vs 3.7e-2; in benchmarks/sysid.py (n = 4, r = 8) it matches nfoursid's accuracy where plain MOESP
        is up to 1.3x worse. It costs about 4x plain MOESP (twice the Hankel rows in the QR), still 10x to 600x
        faster than nfoursid. Noise-free, both are exact to round-off. Use "moesp" for the thesis' algorithm,
        for the fewest samples, or when speed matters more than noise rejection.
    Returns a MOESPResult; if the input is not persistently exciting the result is flagged (``reliable`` False,
    a RuntimeWarning is issued).
    """
    meth = _method_arg(method)
    U, Y = _samples(u, y)
    o, r, thr = _order_args(order, block_rows, threshold, Y.shape[1])
    _, need = _moesp_need(r, U.shape[1], Y.shape[1], meth)
    if U.shape[0] < need:
        raise ValueError(f"u: too few samples: {'PO-MOESP' if meth == 'po-moesp' else 'MOESP'} with block_rows = "
                         f"{r}, n_u = {U.shape[1]}, n_y = {Y.shape[1]} needs at least {need}, got {U.shape[0]}")
    rows, _ = _moesp_need(r, U.shape[1], Y.shape[1], meth)
    _moesp_caps(rows, max(U.shape[0], rows), "samples")
    res = _moesp_result(_core.sysid_moesp(U, Y, r, o, thr, _MOESP_METHODS[meth]), r)
    if not res.reliable:
        warnings.warn(res.message, RuntimeWarning, stacklevel=2)
    return res


class MOESPWindow:
    """Online MOESP on a sliding window (spec 6.1 step 1): ``push`` samples as they arrive, ``fit`` re-identifies.

    window : W, number of Hankel columns of a full window (thesis ``windowSize``, DoE levels 50..1000). The window
        grows until it holds W + r - 1 samples (PO-MOESP: W + 2 r - 1) and then slides; a fit needs at least
        r (n_u + n_y) + r - 1 samples (PO-MOESP: 2 r (n_u + n_y) + 2 r - 1).
    method : "moesp" (default here: the thesis' online algorithm, and the thesis' small windows, e.g. W = 50 with
        r = 10, are too short for PO-MOESP's 2 r (n_u + n_y) columns) or "po-moesp" (see ``moesp``).
    refactor_every : the window is updated recursively: ``push`` up-dates the triangular factor R of the stacked
        Hankel data (R^T R = H^T H, the L of the LQ step is R^T) with one Givens sweep when a Hankel column enters and
        down-dates it (LINPACK dchdd) when the oldest one leaves, so ``fit`` costs O(P^3) instead of a QR of
        O(W P^2), P = r (n_u + n_y) rows. R is re-factored from the samples (one QR) every ``refactor_every``
        pushes (default W; 0: never) to bound the rounding drift of the up/down-dates, and whenever a downdate
        fails (the window's data lost rank). The fit equals the batch :func:`moesp` on the same samples to
        rounding (up to the similarity transform of the identified state basis).

    All memory is allocated here; push and fit do not allocate in C.
    """

    def __init__(self, n_u, n_y, window, order=None, block_rows=None, threshold=1e-8, method="moesp",
                 refactor_every=None):
        self.method = _method_arg(method)
        self.n_u = _check.integer(n_u, "n_u", 1)
        self.n_y = _check.integer(n_y, "n_y", 1)
        self._order, self.block_rows, self.threshold = _order_args(order, block_rows, threshold, self.n_y)
        self.window = _check.integer(window, "window", 1)
        rows, _ = _moesp_need(self.block_rows, self.n_u, self.n_y, self.method)
        if self.window < rows:
            raise ValueError(f"window: must be >= {'2 * ' if self.method == 'po-moesp' else ''}block_rows * "
                             f"(n_u + n_y) = {rows}, got {self.window}")
        _moesp_caps(rows, self.window, "window")
        self.refactor_every = (self.window if refactor_every is None
                               else _check.integer(refactor_every, "refactor_every", 0))
        if self.refactor_every > 2 ** 31 - 1:
            raise ValueError(f"refactor_every: must be < 2**31, got {self.refactor_every}")
        self._cap = _core.sysid_moesp_window_new(self.n_u, self.n_y, self.block_rows, self.window,
                                                 _MOESP_METHODS[self.method])
        _core.sysid_moesp_window_refresh(self._cap, self.refactor_every)

    @property
    def stats(self) -> dict:
        """Counters of the recursive factor: re-factorizations, failed downdates, pushes since the last QR."""
        a, b, c = _core.sysid_moesp_window_refresh(self._cap)
        return dict(refactorizations=a, failed_downdates=b, pushes_since_refactor=c)

    def push(self, u, y) -> int:
        """Append one sample (u: (n_u,), y: (n_y,)) or several rows; returns the number of samples held."""
        U, Y = _array(u, "u"), _array(y, "y")
        if U.ndim not in (1, 2):
            raise ValueError(f"u: expected 1 or 2 dimension(s), got {U.ndim}")
        if Y.ndim not in (1, 2):
            raise ValueError(f"y: expected 1 or 2 dimension(s), got {Y.ndim}")
        U = U.reshape(1, -1) if U.ndim == 1 else U
        Y = Y.reshape(1, -1) if Y.ndim == 1 else Y
        if U.ndim != 2 or U.shape[1] != self.n_u:
            raise ValueError(f"u: expected {self.n_u} input(s) per sample")
        if Y.ndim != 2 or Y.shape[1] != self.n_y:
            raise ValueError(f"y: expected {self.n_y} output(s) per sample")
        if U.shape[0] != Y.shape[0]:
            raise ValueError(f"y: mismatched lengths: u has {U.shape[0]} samples, y has {Y.shape[0]}")
        return _core.sysid_moesp_window_push(self._cap, U, Y)

    @property
    def count(self) -> int:
        return _core.sysid_moesp_window_info(self._cap)[0]

    @property
    def ready(self) -> bool:
        """True once enough samples for a fit are held."""
        count, need, _ = _core.sysid_moesp_window_info(self._cap)
        return count >= need

    def clear(self):
        _core.sysid_moesp_window_info(self._cap, True)

    def fit(self) -> MOESPResult:
        count, need, _ = _core.sysid_moesp_window_info(self._cap)
        if count < need:
            raise ValueError(f"window: too few samples: {count} held, a fit needs {need}")
        res = _moesp_result(_core.sysid_moesp_window_fit(self._cap, self._order, self.threshold), self.block_rows)
        if not res.reliable:
            warnings.warn(res.message, RuntimeWarning, stacklevel=2)
        return res


# ----------------------------------------------------------------------------------------------- RLS

#: Size caps of :class:`RLS` (as in the C core, csrc/sysid/rls.h): n_params = n_a + n_u n_b and the number of
#: covariance entries n_y n_params^2 (256 MiB of float64).
RLS_MAX_PARAMS = 4096
RLS_MAX_COV = 2 ** 25


class RLS:
    """MIMO recursive least squares with forgetting factor (Genser eq. 2.86-2.87, spec 6.2, erratum E7).

    One MISO filter per output i (no cross-output terms):

        y_i^k = sum_{l=1..n_a} a_il y_i^{k-l} + sum_j sum_{l=1..n_b} b_ijl w_j^{k-l}

    where w^{k-1} is the input applied during the step that produced y^k (u^k in the convention of spec 1.3).
    Update with gain g = P phi / (lambda + phi^T P phi), p += g e, P = (P - g phi^T P) / lambda (kept symmetric).

    Parameters
    ----------
    n_y, n_u : numbers of outputs and inputs.
    n_a, n_b : numbers of past outputs (thesis ``N``) and past inputs (thesis ``M``) per filter.
    lam : forgetting factor lambda in (0, 1] (thesis ``lambda``; about 1/(1 - lambda) samples count).
    P0 : P(0): a positive scalar (P0 I), an (np, np) matrix for every output or an (n_y, np, np) array,
        np = n_a + n_u n_b.
    p0 : initial parameters (a, b) with a: (n_y, n_a), b: (n_y, n_u, n_b); default zero.
    trace_max : optional bound on trace(P) per output (guards against covariance wind-up with lambda < 1).
    """

    def __init__(self, n_y, n_u, n_a=1, n_b=1, lam=1.0, P0=1e4, p0=None, trace_max=None):
        self.n_y = _check.integer(n_y, "n_y", 1)
        self.n_u = _check.integer(n_u, "n_u", 1)
        self.n_a = _check.integer(n_a, "n_a", 0)
        self.n_b = _check.integer(n_b, "n_b", 0)
        if self.n_a + self.n_b < 1:
            raise ValueError("n_a, n_b: at least one of them must be >= 1")
        npar = self.n_a + self.n_u * self.n_b
        if npar > RLS_MAX_PARAMS:
            raise ValueError(f"n_a, n_u, n_b: n_params = n_a + n_u n_b = {npar} exceeds the cap of {RLS_MAX_PARAMS}")
        if self.n_y * npar * npar > RLS_MAX_COV:
            raise ValueError(f"n_y: n_y n_params^2 = {self.n_y * npar * npar} covariance entries exceed the cap of "
                             f"{RLS_MAX_COV} (n_params = {npar})")
        self.lam = _check.real(lam, "lam")
        if not 0 < self.lam <= 1:
            raise ValueError(f"lam: must be in (0, 1], got {self.lam}")
        tm = 0.0 if trace_max is None else _check.real(trace_max, "trace_max", positive=True)
        self.n_params = self.n_a + self.n_u * self.n_b
        P0m = None
        if np.ndim(P0) == 0:
            p0s = _check.real(P0, "P0", positive=True)
        else:
            P0m = self._cov_array(P0, "P0")
            p0s = 1.0
        self._P0 = P0m if P0m is not None else p0s
        self._cap = _core.sysid_rls_new(self.n_y, self.n_u, self.n_a, self.n_b, self.lam, p0s, tm)
        if P0m is not None:
            _core.sysid_rls_set(self._cap, "cov", P0m)
        if p0 is not None:
            self.set_parameters(*p0)

    def _cov_array(self, P, name):
        npar = self.n_params
        P = _array(P, name)
        if P.shape == (npar, npar):
            P = np.broadcast_to(P, (self.n_y, npar, npar)).copy()
        if P.shape != (self.n_y, npar, npar):
            raise ValueError(f"{name}: expected shape ({npar}, {npar}) or ({self.n_y}, {npar}, {npar}), got {P.shape}")
        if not np.allclose(P, np.swapaxes(P, 1, 2), rtol=1e-12, atol=0):
            raise ValueError(f"{name}: must be symmetric")
        if np.any(np.linalg.eigvalsh(P) <= 0):
            raise ValueError(f"{name}: must be positive definite")
        return np.ascontiguousarray(P)

    def update(self, u, y) -> np.ndarray:
        """One sample: u (n_u,) applied during the step that ended with output y (n_y,). Returns the a-priori
        prediction errors y - phi^T p (zeros while the n_a / n_b history fills)."""
        if not isinstance(u, np.ndarray):   # arrays go straight to the C converter, which checks them alike
            u = np.atleast_1d(_array(u, "u"))
        if not isinstance(y, np.ndarray):
            y = np.atleast_1d(_array(y, "y"))
        return _core.sysid_rls_update(self._cap, u, y)

    def update_many(self, u, y) -> np.ndarray:
        """Samples u: (N, n_u), y: (N, n_y) in one C loop (GIL released). Returns the (N, n_y) a-priori errors."""
        U, Y = _samples(u, y)
        if U.shape[1] != self.n_u:
            raise ValueError(f"u: expected {self.n_u} column(s), got {U.shape[1]}")
        if Y.shape[1] != self.n_y:
            raise ValueError(f"y: expected {self.n_y} column(s), got {Y.shape[1]}")
        return _core.sysid_rls_update_many(self._cap, U, Y)

    def predict(self, u_next) -> np.ndarray:
        """One-step prediction of the next output for the input u_next applied during the next step."""
        return _core.sysid_rls_predict(self._cap, np.atleast_1d(_array(u_next, "u_next")))

    @property
    def parameters(self) -> tuple[np.ndarray, np.ndarray]:
        """(a, b): a (n_y, n_a) with a[i, l-1] = a_il, b (n_y, n_u, n_b) with b[i, j, l-1] = b_ijl."""
        return _core.sysid_rls_get(self._cap, "params")

    def set_parameters(self, a, b):
        a = _array(a, "a", 2)
        b = _array(b, "b", 3)
        if a.shape != (self.n_y, self.n_a):
            raise ValueError(f"a: expected shape ({self.n_y}, {self.n_a}), got {a.shape}")
        if b.shape != (self.n_y, self.n_u, self.n_b):
            raise ValueError(f"b: expected shape ({self.n_y}, {self.n_u}, {self.n_b}), got {b.shape}")
        _core.sysid_rls_set(self._cap, "params", a, b)

    @property
    def covariance(self) -> np.ndarray:
        """P of every output, (n_y, np, np)."""
        return _core.sysid_rls_get(self._cap, "cov")

    def set_covariance(self, P):
        _core.sysid_rls_set(self._cap, "cov", self._cov_array(P, "P"))

    @property
    def samples(self) -> int:
        return _core.sysid_rls_get(self._cap, "samples")

    def reset(self, P0=None):
        """Reset P to P(0) and clear the history (parameters are kept)."""
        P0 = self._P0 if P0 is None else P0
        if np.ndim(P0) == 0:
            _core.sysid_rls_set(self._cap, "reset", _check.real(P0, "P0", positive=True))
        else:
            P = self._cov_array(P0, "P0")
            _core.sysid_rls_set(self._cap, "reset", 1.0)
            _core.sysid_rls_set(self._cap, "cov", P)

    def save(self) -> dict:
        """Complete state (parameters, covariance, history, counters) as a dict of arrays (e.g. for np.savez)."""
        return {"dims": np.array([self.n_y, self.n_u, self.n_a, self.n_b]), "lam": np.array(self.lam),
                "state": _core.sysid_rls_get(self._cap, "state")}

    def load(self, state):
        """Restore a state from :meth:`save` (a dict or an ``np.load`` result)."""
        try:
            dims, st = state["dims"], state["state"]
        except (KeyError, TypeError, IndexError):
            raise ValueError("state: expected the dict returned by RLS.save()") from None
        if list(np.asarray(dims).ravel()) != [self.n_y, self.n_u, self.n_a, self.n_b]:
            raise ValueError(f"state: saved for dims {list(np.asarray(dims).ravel())}, this RLS has "
                             f"{[self.n_y, self.n_u, self.n_a, self.n_b]}")
        _core.sysid_rls_set(self._cap, "state", _array(st, "state", 1))

    def realization(self, rank_tol=1e-10, pole_tol=1e-6) -> "Realization":
        """Gilbert realization (spec 6.3) of the current transfer-function matrix."""
        return gilbert(*self.parameters, rank_tol=rank_tol, pole_tol=pole_tol)

    def ij(self, rtol=1e-12) -> "DiscreteIJ":
        """Discrete IJs of the current model (spec 6.4): Sy = C PhiA C^+, Su^- = 0, Su^+ = C PhiB."""
        R = self.realization()
        return ij_discrete(R.A, R.B, R.C, R.D, form="thesis", rtol=rtol)


# ----------------------------------------------------------------------------------------------- Gilbert

@dataclass
class Realization(StateSpace):
    """State-space realization of H(z) (2.89). ``minimal`` is False for the observable-form fallback
    (repeated poles, where Gilbert's method does not apply)."""
    minimal: bool = True


def gilbert(a, b, rank_tol=1e-10, pole_tol=1e-6) -> Realization:
    """Gilbert realization (Genser eq. 2.89-2.91, errata E8, E9) of the RLS transfer-function matrix

        H_ij(z) = (b_ij1 z^-1 + .. + b_ij,nb z^-nb) / (1 - a_i1 z^-1 - .. - a_i,na z^-na)

    a : (n_y, n_a), b : (n_y, n_u, n_b) (as :attr:`RLS.parameters`).

    rank_tol : relative singular-value threshold for rank(R_i) of the residue matrices.

    pole_tol : relative distance below which poles are equal (merged across outputs; repeated within one output
        triggers the non-minimal observable-form fallback).

    Returns PhiA (block diagonal, real 2x2 blocks for complex pairs), PhiB, C, D = 0 with sum rank(R_i) states.
    """
    a = _array(a, "a", 2)
    b = _array(b, "b", 3)
    if b.shape[0] != a.shape[0]:
        raise ValueError(f"b: first dimension must equal that of a ({a.shape[0]}), got {b.shape[0]}")
    if a.shape[0] < 1 or b.shape[1] < 1:
        raise ValueError("a, b: need at least one output and one input")
    rank_tol = _check.real(rank_tol, "rank_tol", positive=True)
    pole_tol = _check.real(pole_tol, "pole_tol", positive=True)
    d = _core.sysid_gilbert(a, b, rank_tol, pole_tol)
    return Realization(A=d["A"], B=d["B"], C=d["C"], D=d["D"], minimal=bool(d["minimal"]))


# ----------------------------------------------------------------------------------------------- IJ conversions

@dataclass
class ContinuousIJ:
    """Continuous IJs (2.8): y' = dSdy y + dSdu u + dSdud u'."""
    dSdy: np.ndarray
    dSdu: np.ndarray
    dSdud: np.ndarray


@dataclass
class DiscreteIJ:
    """Discrete IJs (2.15): y^{k+1} = Sy y^k + Su_minus u^k + Su_plus u^{k+1} (convention of spec 1.3)."""
    Sy: np.ndarray
    Su_minus: np.ndarray
    Su_plus: np.ndarray

    def predict(self, y, u) -> np.ndarray:
        """One-step predictions ybar^k = Sy y^{k-1} + Su^- u^{k-1} + Su^+ u^k for k >= 1 (row 0 = y[0]);
        y: (K, n_y), u: (K, n_u) with u[k] applied during the step ending at T^k."""
        Y, U = _array(y, "y", 2, allow_1d_as_column=True), _array(u, "u", 2, allow_1d_as_column=True)
        if U.shape[0] != Y.shape[0]:
            raise ValueError(f"u: mismatched lengths: y has {Y.shape[0]} samples, u has {U.shape[0]}")
        return _core.sysid_ij_predict(self.Sy, self.Su_minus, self.Su_plus, Y, U)


def _ss(A, B, C, D, names):
    A = _array(A, names[0], 2)
    B = _array(B, names[1], 2)
    C = _array(C, names[2], 2)
    D = _array(D, names[3], 2)
    return A, B, C, D


def ij_continuous(A, B, C, D, rtol=1e-12) -> ContinuousIJ:
    """Continuous IJs from x' = A x + B u, y = C x + D u (Genser eq. 2.12-2.14), with C^+ = pinv(C):
    dS/dy = C A C^+, dS/du = C B - C A C^+ D, dS/du' = D. ``rtol``: pinv singular-value cut-off."""
    A, B, C, D = _ss(A, B, C, D, ("A", "B", "C", "D"))
    return ContinuousIJ(*_core.sysid_ij_continuous(A, B, C, D, _check.real(rtol, "rtol")))


def ij_discrete(PhiA, PhiB, C, D, form="standard", C_prev=None, D_prev=None, rtol=1e-12) -> DiscreteIJ:
    """Discrete IJs of an identified or discretized model.

    form="standard": x_{j+1} = PhiA x_j + PhiB w_j, z_j = C x_j + D w_j fitted on aligned (u^j, y^j) (e.g. MOESP):
        Sy = C PhiA C^+, Su^- = C PhiB - Sy D, Su^+ = D  (spec 2.2 [EXT]).
    form="thesis": x^{k+1} = PhiA x^k + PhiB u^{k+1}, y^{k+1} = C^k x^{k+1} + D^k u^{k+1} (2.16, 2.17):
        Sy = C^k PhiA (C^{k-1})^+, Su^- = -Sy D^{k-1}, Su^+ = C^k PhiB + D^k  (2.18-2.20),
        with C^{k-1}, D^{k-1} = C_prev, D_prev from the previous identification (default: C, D, time-invariant).
    """
    if form not in ("standard", "thesis"):
        raise ValueError(f"form: must be 'standard' or 'thesis', got {form!r}")
    A, B, C, D = _ss(PhiA, PhiB, C, D, ("PhiA", "PhiB", "C", "D"))
    if form == "standard" and (C_prev is not None or D_prev is not None):
        raise ValueError("C_prev, D_prev: only used with form='thesis'")
    Cp = None if C_prev is None else _array(C_prev, "C_prev", 2)
    Dp = None if D_prev is None else _array(D_prev, "D_prev", 2)
    return DiscreteIJ(*_core.sysid_ij_discrete(0 if form == "thesis" else 1, A, B, C, D, Cp, Dp,
                                               _check.real(rtol, "rtol")))


def discretize(A, B, dt):
    """Exact discretization PhiA = e^{A dt}, PhiB = int_0^dt e^{A s} B ds (2.5, 2.6), via the φ functions of A dt (PhiB = dt φ_1(A dt) B)."""
    A = _array(A, "A", 2)
    B = _array(B, "B", 2)
    return _core.sysid_discretize(A, B, _check.real(dt, "dt", positive=True))


#: Largest step ratio of :func:`resample` (the C core forms a^q by q = floor(ratio) multiplications).
RESAMPLE_MAX_RATIO = 1e6


def resample(a, b, ratio):
    """Resample n_a = n_b = 1 RLS parameters identified at step H to the step H~ = ratio H (Genser eq. 4.13, 4.14,
    spec 6.5, erratum E29), assuming steady parameters and held input:

        q = floor(ratio), f = ratio - q,
        a~ = (1 - f) a^q + f a^(q+1),   b~_j = b_j [(1 - f) sum_{i<q} a^i + f sum_{i<=q} a^i]

    a : (n_y,) or scalar; b : (n_y, n_u) or (n_u,) for one output. Returns (a~, b~) with the same shapes.
    ratio > 0 (meant for ratio >= 1; linear interpolation avoids complex powers of negative a).
    """
    A0 = _array(a, "a")
    scalar = A0.ndim == 0
    A = np.atleast_1d(A0)
    B = _array(b, "b")
    if B.ndim == 1 and A.shape[0] == 1:
        B = B.reshape(1, -1)
    elif B.ndim == 0:
        B = B.reshape(1, 1)
    if B.ndim != 2 or B.shape[0] != A.shape[0]:
        raise ValueError(f"b: expected shape ({A.shape[0]}, n_u), got {np.shape(b)}")
    ratio = _check.real(ratio, "ratio", positive=True)
    if ratio > RESAMPLE_MAX_RATIO:
        raise ValueError(f"ratio: must be <= {RESAMPLE_MAX_RATIO:g} (a^q is formed with q = floor(ratio) products), "
                         f"got {ratio:g}")
    at, bt = _core.sysid_resample(A, B, ratio)
    if scalar:
        return float(at[0]), bt.reshape(np.shape(b)) if np.ndim(b) else float(bt[0, 0])
    return at, bt


# ----------------------------------------------------------------------------------------------- quality, switch

def eps_si(y, y_pred, eps=1e-12) -> np.ndarray:
    """eps_SI,rel^k (Genser eq. 2.92) for every k of a record:

        (1/n) sum_i |y^k[i] - ybar^k[i]| / (max_{j<=k} y^j[i] - min_{j<=k} y^j[i] + eps)

    y, y_pred : (K, n) outputs and their one-step IJ predictions (e.g. :meth:`DiscreteIJ.predict`).
    Invariant to scaling and offset of each output channel (up to eps)."""
    Y = _array(y, "y", 2, allow_1d_as_column=True)
    Yb = _array(y_pred, "y_pred", 2, allow_1d_as_column=True)
    if Yb.shape != Y.shape:
        raise ValueError(f"y_pred: expected shape {Y.shape}, got {Yb.shape}")
    return _core.sysid_eps_si(Y, Yb, _check.real(eps, "eps"))


def eps_si_global(eps_values) -> float:
    """eps_SI,global = sqrt(sum_i eps_SI,rel^i ^2) over subsystems (2.93)."""
    e = _array(eps_values, "eps_values", 1)
    return float(np.sqrt(np.sum(e * e)))


def switch_factor(t, t_start, t_switch):
    """fac_MBC(t) = (tanh(-5 + 10 (t - T_StartSwitching) / timeSwitching) + 1) / 2 (spec 8.4); fac_SBC = 1 - fac_MBC.
    t : scalar or 1-D array; t_start : T_StartSwitching (end of the learning phase); t_switch : timeSwitching > 0."""
    T0 = _array(t, "t")
    scalar = T0.ndim == 0
    T = np.atleast_1d(T0)
    if T.ndim != 1:
        raise ValueError("t: expected a scalar or a 1-D array")
    out = _core.sysid_switch_factor(T, _check.real(t_start, "t_start"),
                                    _check.real(t_switch, "t_switch", positive=True))
    return float(out[0]) if scalar else out
