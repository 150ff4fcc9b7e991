"""Kraft's adaptive macro-step and order control (kraft2021 §8-§11, §19): the pieces, testable alone, and
:class:`StepControl`, the option of :func:`cosim.simulate` that switches it on.

Symbols as in the thesis: κ (``kappa``) the degree of the coupling-variable polynomials, a_i = (T_{N+1} −
T_{N+1−i})/H the step ratios, SDN the scaled derivative norms, Γ (``safety``) the safety factor, r the step ratio
H_new = r·H, N_fail / N_succ the consecutive failed attempts / successful steps.

The numerics are in C (``csrc/control/kraft.c``, ``adaptive.c``, ``estimators.c``); these functions only check and
convert their arguments.
"""
from __future__ import annotations

import math

import numpy as np

from . import _check, _core

ESTIMATORS = dict(_core.codes["estimator"])
IMPLICIT_ESTIMATORS = {"imMD": "Implicit", "imCV": "Implicit", "waCV": "WaveformRelaxation"}  # the scheme each needs
ORDER_STRATEGIES = {n: _core.codes["order_strategy"][n] for n in ("ida", "conservative")}
_FIXED_ORDER = _core.codes["order_strategy"]["fixed"]
_POS, _VEL = _core.codes["monitor_group"]["pos"], _core.codes["monitor_group"]["vel"]
_GROUPS = ("pos", "vel", "u")
KMAX_ENGINE = _core.MAXDEG  # the coupling polynomials of the engine (exLE compares with κ+1)
KMAX_CONSTANTS = 7       # error constants in closed form (CS_KRAFT_KMAX)
KMAX_DEFAULT = 5         # κ_max when not given (4 for exLE): the thesis's chapter-5 setting


def _kappa_cap(estimator):
    """The highest κ step control can use, 6 for every estimator: exLE's comparative polynomial has degree κ + 1
    and exMD uses the error-constant ratio C^{κ+1}/C^κ, both available up to 7."""
    return min(KMAX_CONSTANTS, KMAX_ENGINE) - 1


def _vector(name, v, n=None):
    try:
        a = np.asarray(v, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected an array of real numbers") from None
    if n is not None and a.size != n:
        raise ValueError(f"{name}: expected {n} values, got {a.size}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: values must be finite")
    return a


# ---------------------------------------------------------------------------------------------- pure functions
def error_constants(kappa, a=()):
    """Error constants (C^κ_pos, C^κ_vel) of kraft2021 eqs. 3.11/3.15 for the step ratios a = (a_2, ..., a_κ)
    (a_1 = 1 is implied; for a constant step a_i = i), in closed form (kraft2021 §8.1):
    C_pos = Σ_k (−1)^k e_k(1/a_2..1/a_κ)/((k+2)(k+3)), C_vel = Σ_k (−1)^k e_k/((k+1)(k+2)); κ ≤ 6.
    Also accepts a of length κ starting with a_1 = 1."""
    kappa = _check.integer(kappa, "kappa", 0, KMAX_CONSTANTS)
    a = _vector("a", a)
    if a.size == kappa and kappa >= 1:
        if a[0] != 1.0:
            raise ValueError(f"a: with {kappa} ratios the first must be a_1 = 1, got {a[0]}")
        a = a[1:]
    if a.size != max(kappa - 1, 0):
        raise ValueError(f"a: expected the {max(kappa - 1, 0)} ratios a_2..a_κ, got {a.size}")
    if np.any(a == 0):
        raise ValueError("a: step ratios must be nonzero")
    return _core.kraft_error_constants(kappa, a)


def uniform_ratios(kappa):
    """a_2..a_κ of a constant macro step: (2, 3, ..., κ)."""
    return np.arange(2, _check.integer(kappa, "kappa", 0, KMAX_CONSTANTS) + 1, dtype=float)


def divided_difference(T, u):
    """Divided difference u[T_0, ..., T_{n−1}] of n ≤ 10 samples with distinct times T."""
    T, u = _vector("T", T), _vector("u", u)
    if T.size != u.size or not 1 <= T.size <= 10:
        raise ValueError(f"T/u: need equal lengths 1..10, got {T.size} and {u.size}")
    if np.unique(T).size != T.size:
        raise ValueError("T: sample times must be distinct")
    return _core.kraft_divided_difference(T, u)


def newton_difference(kappa, T, u, t):
    """Predictor difference (3.26): P_{κ+1}(t) − P_κ(t) = u[T_M..T_{M−κ−1}] Π_{j=0}^{κ} (t − T_{M−j}), with the
    κ+2 samples T, u newest first (T_M first)."""
    kappa = _check.integer(kappa, "kappa", 0, 8)
    T, u = _vector("T", T), _vector("u", u)
    if T.size != kappa + 2 or u.size != kappa + 2:
        raise ValueError(f"T/u: kappa = {kappa} needs {kappa + 2} samples, got {T.size} and {u.size}")
    if np.unique(T).size != T.size:
        raise ValueError("T: sample times must be distinct")
    return _core.kraft_divided_difference(T, u, kappa, _check.real(t, "t"))


def wrms(eps, weights):
    """Weighted RMS norm (3.21): sqrt(1/n Σ (ε_i W_i)²)."""
    eps, w = _vector("eps", eps), _vector("weights", weights)
    if eps.size != w.size:
        raise ValueError(f"weights: expected {eps.size} values like eps, got {w.size}")
    return _core.kraft_wrms(eps, w)


def error_weights(values, rtol, atol):
    """W_i = 1/(atol_i + rtol |value_i|) of (3.22)/(3.23)."""
    v = _vector("values", values)
    rtol = _check.real(rtol, "rtol", positive=True)
    atol = np.broadcast_to(_vector("atol", atol), v.shape) if np.ndim(atol) else np.full(v.shape, float(atol))
    return 1.0 / (atol + rtol * np.abs(v))


def select_order(kappa, sdn, n_succ, n_fail, k_max, strategy="ida"):
    """κ for the next step by Listing 3.2 (``strategy="ida"``) or 3.1 (``"conservative"``).

    ``sdn`` = [SDN(1), SDN(2), ...] (SDN(j) = ||H^j P_j^{(j)}||, kraft2021 §10) or a dict {j: SDN(j)}. A decrease
    needs SDN(1..κ+1), an increase also SDN(κ+2); decisions whose SDN are missing are not taken."""
    kappa = _check.integer(kappa, "kappa", 0, KMAX_CONSTANTS)
    k_max = _check.integer(k_max, "k_max", 0, KMAX_CONSTANTS)
    n_succ = _check.integer(n_succ, "n_succ", 0)
    n_fail = _check.integer(n_fail, "n_fail", 0)
    if strategy not in ORDER_STRATEGIES:
        raise ValueError(f"strategy: must be 'ida' or 'conservative', got {strategy!r}")
    if isinstance(sdn, dict):
        n = max(sdn) if sdn else 0
        arr = np.zeros(n + 1)
        for j in range(1, n + 1):
            if j not in sdn:
                raise ValueError(f"sdn: SDN({j}) missing")
            arr[j] = _check.real(sdn[j], f"sdn[{j}]", nonneg=True)
    else:
        s = _vector("sdn", sdn)
        if np.any(s < 0):
            raise ValueError("sdn: norms must be >= 0")
        arr = np.concatenate([[0.0], s])
    return _core.kraft_select_order(kappa, arr, n_succ, n_fail, k_max, ORDER_STRATEGIES[strategy])


def limit_step_ratio(r, n_fail, r_min=0.5, r_max=1.5, dead_zone=True, corrector_failed=False):
    """Step ratio limits of Listing 3.3 (kraft2021 §11.3; defaults: the chapter-5 values [0.5, 1.5], dead zone
    [1, r_max) on). With ``dead_zone=False`` a step without failure takes r clipped to [r_min, r_max]."""
    r = _check.real(r, "r", nonneg=True) if not (isinstance(r, float) and math.isinf(r)) else r
    n_fail = _check.integer(n_fail, "n_fail", 0)
    r_min, r_max = _check.real(r_min, "r_min", positive=True), _check.real(r_max, "r_max", positive=True)
    if not r_min < r_max:
        raise ValueError(f"r_min: must be < r_max, got r_min = {r_min}, r_max = {r_max}")
    return _core.kraft_limit_step_ratio(float(r), n_fail, r_min, r_max, bool(dead_zone), bool(corrector_failed))


def land_micro_step(h, remaining):
    """Listing 4.1: the next micro step h with ``remaining`` = T_{N+1} − t left: stretched by up to 10 % onto
    T_{N+1}, or the remainder split into two equal steps when less than 2h is left."""
    return _core.kraft_land_micro_step(_check.real(h, "h", positive=True),
                                       _check.real(remaining, "remaining", positive=True))


def nrmse(x, ref):
    """NRMSE (kraft2021 eqs. 5.1/5.2): ||[nrmse(Z_1), ..., nrmse(Z_nz)]||_2 with
    nrmse(Z_j) = sqrt(Σ_i (Z^ref_ij − Z_ij)² / Σ_i (Z^ref_ij − mean_j Z^ref)²); columns are variables."""
    x = np.asarray(x, dtype=float)
    ref = np.asarray(ref, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if ref.ndim == 1:
        ref = ref[:, None]
    if x.shape != ref.shape:
        raise ValueError(f"ref: shape {ref.shape} differs from x {x.shape}")
    if x.ndim != 2 or x.shape[0] < 2:
        raise ValueError("x: need at least two points (rows)")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(ref))):
        raise ValueError("x/ref: values must be finite")
    return _core.kraft_nrmse(np.ascontiguousarray(x), np.ascontiguousarray(ref))


# ---------------------------------------------------------------------------------------------- StepControl
class StepControl:
    """Adaptive macro steps and polynomial degrees (kraft2021 §8-§11, §19) for :func:`cosim.simulate`
    (``step_control=cosim.StepControl(...)``; ``H`` is then the initial step H_init).

    Parameters
    ----------
    estimator : "exLE" (local extrapolation, eq. 3.2-3.6), "exMD" (Milne device, eq. 3.7-3.14) or "exCV"
        (coupling-variable local extrapolation, eq. 3.16). exLE/exMD integrate every unit with monitored states a
        second time (comparative polynomial p̂^pre; Jacobi scheme); exCV needs no extra integration.
        With ``scheme=cosim.Implicit(...)``: "imMD" (Milne device with the predictor states, ε = (1 − C^{κ+1}/C^κ)
        |x^pre − x|, eq. 3.18/3.19) or "imCV" (ε^u = |u^pre − u_{N+1}|, eq. 3.20); with
        ``scheme=cosim.WaveformRelaxation(...)``: "waCV" (the same as imCV). They need no extra integration; the
        corrector's polynomial then has the controller's degree κ, and a corrector that does not converge makes the
        controller repeat the step with r = 0.25 (corConvFail, §19; counted in ``res.stats["corrector_failures"]``).
    rtol : relative tolerance of the local error test (3.22)/(3.23).
    atol : absolute tolerances by group: ``{"pos": ..., "vel": ..., "u": ...}`` (positions, velocities of the
        monitored states; coupling variables), or one number for all. Defaults (kraft2021 §9, §18.5):
        pos = 1e-3·rtol, vel = rtol, u = 1e3·rtol. The u group also weighs the SDN of order control and the
        a-priori estimate (3.26).
    order_control : "ida" (Listing 3.2), "conservative" (Listing 3.1), an int κ (fixed degree) or "fixed" (the
        degree of the ``approximation``).
    order : deprecated name of ``order_control`` (``order=`` means the Gauss-Seidel order of the units in
        :func:`cosim.simulate`); still accepted with a DeprecationWarning.
    k_max : κ_max, 0..6 (kraft2021 §20 item 1; the estimators use degree κ+1 ≤ 7). Default 5 (4 for exLE).
    safety : Γ of (3.27)/(3.28) (chapter-5 default 6).
    r_min, r_max : limits of the step ratio r (Listing 3.3; default [0.5, 1.5]).
    dead_zone : keep H when 1 ≤ r < r_max (Listing 3.3).
    H_min, H_max : bounds of H; a failed local error test at H_min raises :class:`cosim.StepSizeError` with the
        partial result (default H_min = 1e-12·t_end, H_max = t_end).
    initial_phase : §19: start with κ = 0 and double H while raising κ by one per step, until κ_max, a failed test
        or a reduction. The first step is error-tested too (exLE/exMD: the Milne device (3.7) with the end value
        u_{N+1} of the update while fewer than κ+2 macro points exist); if it fails, H_init is replaced by
        0.9 (Γ‖ε‖)^(−1/order)·H_init from its own estimate and the initial phase starts with the first accepted step.
    monitor : the monitored variables: a list of signal names (states like ``"S1.x1"``/``"S1.x[0]"`` join the
        group the model declares for them, else "vel"; inputs like ``"S1.lam"`` the group "u") or a dict
        ``{"pos": [...], "vel": [...], "u": [...]}``. Default: what the model declares (``system.monitor``, e.g.
        the coupling bodies of :func:`cosim.models.kraft_two_mass`), else all states ("vel") and all inputs ("u").
    """

    def __init__(self, estimator="exMD", rtol=1e-5, atol=None, *, order_control=None, k_max=None, safety=6.0,
                 r_min=0.5, r_max=1.5, dead_zone=True, H_min=None, H_max=None, initial_phase=True, monitor=None,
                 order=None):
        if not isinstance(estimator, str) or estimator not in ESTIMATORS:
            raise ValueError(f"estimator: must be one of {list(ESTIMATORS)}, got {estimator!r}")
        self.estimator = estimator
        self.rtol = _check.real(rtol, "rtol", positive=True)
        kcap = _kappa_cap(estimator)
        default = KMAX_DEFAULT - 1 if estimator == "exLE" else KMAX_DEFAULT
        self.k_max = default if k_max is None else _check.integer(k_max, "k_max")
        if not 0 <= self.k_max <= kcap:
            raise ValueError(f"k_max: must be in 0..{kcap} (the estimators use degree κ+1 <= {KMAX_ENGINE}), "
                             f"got {self.k_max}")
        name = "order_control" if order is None else "order"
        order = _check.renamed(order_control, order, "order_control", "order", "ida")
        if isinstance(order, str):
            if order not in ORDER_STRATEGIES and order != "fixed":
                raise ValueError(f"{name}: must be 'ida', 'conservative', 'fixed' or an int κ, got {order!r}")
        else:
            order = _check.integer(order, name, 0, kcap)
        self.order_control = order
        self.safety = _check.real(safety, "safety", positive=True)
        self.r_min = _check.real(r_min, "r_min", positive=True)
        self.r_max = _check.real(r_max, "r_max", positive=True)
        if not self.r_min < self.r_max:
            raise ValueError(f"r_min: must be smaller than r_max, got r_min = {self.r_min}, r_max = {self.r_max}")
        if not (self.r_min < 1.0 < self.r_max):
            raise ValueError(f"r_min/r_max: need r_min < 1 < r_max, got {self.r_min}, {self.r_max}")
        self.dead_zone = bool(dead_zone)
        self.H_min = None if H_min is None else _check.real(H_min, "H_min", nonneg=True)
        self.H_max = None if H_max is None else _check.real(H_max, "H_max", positive=True)
        if self.H_min is not None and self.H_max is not None and self.H_min > self.H_max:
            raise ValueError(f"H_min: must be <= H_max, got {self.H_min} > {self.H_max}")
        self.initial_phase = bool(initial_phase)
        default = {"pos": 1e-3 * self.rtol, "vel": self.rtol, "u": 1e3 * self.rtol}
        if atol is None:
            self.atol = default
        elif isinstance(atol, dict):
            unknown = [k for k in atol if k not in _GROUPS]
            if unknown:
                raise ValueError(f"atol: unknown keys {unknown}; use 'pos', 'vel', 'u'")
            self.atol = dict(default)
            for k, v in atol.items():
                self.atol[k] = _check.real(v, f"atol[{k!r}]", nonneg=True)
        else:
            a = _check.real(atol, "atol", nonneg=True)
            self.atol = {g: a for g in _GROUPS}
        if monitor is not None:
            if isinstance(monitor, str):
                raise TypeError(f"monitor: expected a list of signal names or a dict by group, got {monitor!r}")
            if isinstance(monitor, dict):
                unknown = [k for k in monitor if k not in _GROUPS]
                if unknown:
                    raise ValueError(f"monitor: unknown groups {unknown}; use 'pos', 'vel', 'u'")
                monitor = {g: list(v) for g, v in monitor.items()}
            else:
                monitor = list(monitor)
        self.monitor = monitor

    @property
    def order(self):
        """Deprecated name of :attr:`order_control`."""
        return self.order_control

    def __repr__(self):
        return (f"StepControl(estimator={self.estimator!r}, rtol={self.rtol}, order_control={self.order_control!r}, "
                f"k_max={self.k_max}, safety={self.safety})")

    # -------------------------------------------------------------------------------- engine options
    def _resolve(self, system):
        """Monitored variables as global indices: (state_index, state_group, in_index) with groups 0 pos, 1 vel."""
        xnames = system.signal_names("x")
        unames = system.signal_names("u")
        xi = {n: i for i, n in enumerate(xnames)}
        ui = {n: i for i, n in enumerate(unames)}
        for s, a in zip(system.subsystems, system.state_offset[:-1]):
            xi.update({f"{s.name}.x[{i}]": int(a) + i for i in range(s.nx)})
        for s, a in zip(system.subsystems, system.in_offset[:-1]):
            ui.update({f"{s.name}.u[{i}]": int(a) + i for i in range(s.nu)})
        declared = getattr(system, "monitor", None) or {}

        def lookup(group, names):
            out = []
            for n in names:
                if not isinstance(n, str):
                    raise TypeError(f"monitor: signal names must be strings, got {n!r}")
                table = ui if group == "u" else xi
                if n not in table:
                    kind = "input" if group == "u" else "state"
                    raise ValueError(f"monitor: unknown {kind} {n!r} for group {group!r}")
                out.append(table[n])
            return out

        groups = {"pos": [], "vel": [], "u": []}
        if self.monitor is None:
            if declared:
                for g in _GROUPS:
                    groups[g] = lookup(g, declared.get(g, []))
            else:
                groups["vel"] = list(range(len(xnames)))
                groups["u"] = list(range(len(unames)))
        elif isinstance(self.monitor, dict):
            for g in _GROUPS:
                groups[g] = lookup(g, self.monitor.get(g, []))
        else:
            dgroup = {}
            for g in ("pos", "vel"):
                for n in declared.get(g, []):
                    if n in xi:
                        dgroup[xi[n]] = g
            for n in self.monitor:
                if isinstance(n, str) and n in xi:
                    groups[dgroup.get(xi[n], "vel")].append(xi[n])
                elif isinstance(n, str) and n in ui:
                    groups["u"].append(ui[n])
                else:
                    raise ValueError(f"monitor: unknown signal {n!r} (states: {xnames}, inputs: {unames})")
            if not groups["u"]:
                groups["u"] = lookup("u", declared.get("u", [])) if declared.get("u") else list(range(len(unames)))
        return groups

    def _options(self, system, approximation, scheme, t_end, H):
        from .approximations import Lagrange, ZOH
        if not isinstance(approximation, (Lagrange, ZOH)):
            raise ValueError(f"approximation: step control needs Lagrange or ZOH, got {approximation!r}")
        need = IMPLICIT_ESTIMATORS.get(self.estimator)
        if need is not None or not isinstance(scheme, str):  # implicit estimators <-> iterative schemes
            got = scheme if isinstance(scheme, str) else type(scheme).__name__
            if need is None:
                raise ValueError(f"scheme: estimator {self.estimator!r} is explicit; with {got} use "
                                 f"{[k for k, v in IMPLICIT_ESTIMATORS.items() if v == got]} (kraft2021 §8.5-8.6)")
            if got != need:
                raise ValueError(f"scheme: estimator {self.estimator!r} needs scheme=cosim.{need}(...), got {got!r}")
        elif self.estimator != "exCV" and scheme != "jacobi":
            raise ValueError(f"scheme: estimator {self.estimator!r} needs scheme='jacobi' (its comparative run "
                             "re-integrates every unit with the extrapolated inputs); use 'exCV' for Gauss-Seidel")
        groups = self._resolve(system)
        on_u = self.estimator in ("exCV", "imCV", "waCV")
        if on_u and not groups["u"]:
            raise ValueError(f"monitor: {self.estimator} needs at least one monitored coupling variable (group 'u')")
        if not on_u and not (groups["pos"] or groups["vel"]):
            raise ValueError(f"monitor: {self.estimator} needs monitored states (groups 'pos'/'vel')")
        order = self.order
        k_max = self.k_max
        if order == "fixed":
            order, k_max = _FIXED_ORDER, getattr(approximation, "k", 0)
        elif isinstance(order, int):
            order, k_max = _FIXED_ORDER, order
        else:
            order = ORDER_STRATEGIES[order]
        kcap = _kappa_cap(self.estimator)
        if k_max > kcap:
            raise ValueError(f"order: fixed degree {k_max} above {kcap} for {self.estimator}")
        H_min = self.H_min if self.H_min is not None else 1e-12 * max(t_end, 1e-300)
        H_max = self.H_max if self.H_max is not None else max(t_end, H)
        if H < H_min:
            raise ValueError(f"H: the initial step H = {H} is below H_min = {H_min}")
        H_max = max(H_max, H)
        si = groups["pos"] + groups["vel"]
        sg = [_POS] * len(groups["pos"]) + [_VEL] * len(groups["vel"])
        sa = [self.atol["pos"]] * len(groups["pos"]) + [self.atol["vel"]] * len(groups["vel"])
        return dict(kind="kraft", estimator=ESTIMATORS[self.estimator], rtol=self.rtol, safety=self.safety, r_min=self.r_min,
                    r_max=self.r_max, dead_zone=int(self.dead_zone), order=order, k_max=int(k_max),
                    initial_phase=int(self.initial_phase), H_init=float(H), H_min=float(H_min), H_max=float(H_max),
                    state_index=np.asarray(si, dtype=np.int64), state_group=np.asarray(sg, dtype=np.int64),
                    state_atol=np.asarray(sa, dtype=float), in_index=np.asarray(groups["u"], dtype=np.int64),
                    in_atol=np.full(len(groups["u"]), self.atol["u"]))


def result_fields(raw):
    """What a run under :class:`StepControl` adds to its :class:`cosim.Result`, from the engine's step-control
    records: (fields, stats) with fields ``step_sizes`` (accepted H), ``k`` (κ) and ``error_estimate`` per step,
    and the rejected steps and counters for ``Result.stats``; ({}, {}) for a run without step control."""
    sc = raw.get("step_control")
    if not sc:
        return {}, {}
    fields = dict(step_sizes=sc["H"], k=sc["k"], error_estimate=sc["eps"])
    stats = dict(rejected_times=sc["T_rejected"], rejected_H=sc["H_rejected"],
                 comparative_integrations=sc["comparative_steps"], h_min_failed=bool(sc["h_min_failed"]),
                 corrector_failures=int(sc.get("corrector_failures", 0)))
    return fields, stats
