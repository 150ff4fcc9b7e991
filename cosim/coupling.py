"""Coupling methods passed as ``cosim.simulate(..., coupling=...)`` (DESIGN.md §2 "Coupling").

* :class:`FOH` and :class:`Quadratic`: signal-based extrapolation of order 1 and 2 (genser2020 §9). They are the
  Lagrange extrapolations of degree k = 1 and 2 on the macro grid (u^{k+1} = L(2y^k − y^{k−1}) and
  L(3y^k − 3y^{k−1} + y^{k−2}) at the end of the step) and run on the same C code as ``Lagrange(k)``.
* :class:`NEPCE`: nearly energy-preserving coupling element, a deferred correction of a signal-based coupling by the
  integral of the last step's extrapolation error (genser2020 §9 [EXT]).
* :class:`PreStep`: Genser's model-based pre-step stabilization (genser2020 §1-§5, §8): error differential equation
  (Step 1), model-based extrapolation of the global interface-Jacobian (IJ) surrogate (Step 2) and per-subsystem
  input optimization (Step 3), with exact continuous IJs or IJs identified online by RLS, learning, switch and
  error-based phase check. Every parameter has its thesis name.

After a run with :class:`PreStep`, ``res.coupling_log`` holds per macro step the phase ("SBC", "MOD", "MBC"), the
reason of signal-based steps ("learning", "threshold", "identification failed"), ε_SI,global, the identified
parameters, δ^k and the input chosen for the step.
"""
from __future__ import annotations

import math

import numpy as np

from . import _check, _core
from . import sysid as _sysid
from .approximations import Approximation, Lagrange, ZOH

__all__ = ["Coupling", "FOH", "Quadratic", "NEPCE", "PreStep", "MBCorr", "PythonCoupling"]

_KIND_SIGNAL, _KIND_PRESTEP, _KIND_NEPCE = (_core.codes["coupling"][n] for n in ("signal", "prestep", "nepce"))
_PHASE = _core.codes["prestep_phase"]
_PRESTEP_VARIANT, _IJ_SOURCE = _core.codes["prestep_variant"], _core.codes["ij_source"]
#: the coupling mode of a pre-step phase code (res.coupling_log["phase"]) and why it was chosen
PHASES = {_PHASE["learning"]: "SBC", _PHASE["sbc"]: "SBC", _PHASE["mod"]: "MOD", _PHASE["mbc"]: "MBC",
          _PHASE["fallback"]: "SBC"}
REASONS = {_PHASE["learning"]: "learning", _PHASE["sbc"]: "threshold", _PHASE["mod"]: "", _PHASE["mbc"]: "",
           _PHASE["fallback"]: "identification failed"}


#: PreStep's parameters under the names of genser2020's reference implementation -> cosim's names
THESIS_NAMES = {"useErrDiffEqu": "use_error_ode", "optionErrDiffEqu": "error_ode_method",
                "stepsErrDiffEqu": "error_ode_steps", "optionExtrapolation": "extrapolation_method",
                "stepsExtrapolation": "extrapolation_steps", "stepsDiscreteSystemMatrices": "discretization_steps",
                "timeLearning": "learning_time", "timeSwitchphase": "switch_time",
                "thresholdMbc2sbcCoupling": "threshold_sbc", "thresholdMbcNoInputOpt": "threshold_mod",
                "inputSemantics": "input_semantics", "sbcMethod": "sbc_method"}


def _given(value, default):
    return default if value is None else value


def _choice(v, name, options):
    if not isinstance(v, str) or v.lower() not in options:
        raise ValueError(f"{name}: must be one of {sorted(options)}, got {v!r}")
    return options[v.lower()]



def _phase_log(raw, t, names):
    """The per-step log of a coupling method that runs in phases: the step's start time and its phase by name."""
    ph = np.asarray(raw["phase"])
    return dict(t=np.arange(ph.size) * float(t), phase=np.array([names[p] for p in ph], dtype=object))

class Coupling:
    """Base class of the coupling methods of ``simulate(coupling=...)``."""

    #: the signal-based approximation this coupling runs on (None: it forms the inputs itself)
    def approximation(self) -> Approximation | None:
        return None

    def _options(self, system, H, t_end) -> dict | None:
        return None

    def _log(self, system, raw_log, t):
        return raw_log


class FOH(Coupling):
    """First-order hold = linear extrapolation from the last two exchanged values (genser2020 §9):
    u(t) = L[y^k + (y^k − y^{k−1})(t − T^k)/ΔT] + r, i.e. ``Lagrange(k=1)`` on the macro grid (the first step, with one
    sample only, holds y^0)."""

    def approximation(self):
        return Lagrange(1)

    def __repr__(self):
        return "FOH()"


class Quadratic(Coupling):
    """Quadratic extrapolation through (T^{k−2}, T^{k−1}, T^k) (genser2020 §9): ``Lagrange(k=2)``;
    end-of-step value u^{k+1} = L(3y^k − 3y^{k−1} + y^{k−2}) + r."""

    def approximation(self):
        return Lagrange(2)

    def __repr__(self):
        return "Quadratic()"


class NEPCE(Coupling):
    """Nearly energy-preserving coupling element (genser2020 §9 [EXT]; Benedikt, Watzenig, Hofer).

    Over [T^k, T^{k+1}] every input is its base approximation plus a deferred correction,

        E_k = ∫_{T^{k−1}}^{T^k} (y_c(t) − u(t)) dt,     u(t) = base(t) + K E_k / ΔT,

    y_c = L y + r the coupled output. The integral of y_c uses the intermediate (micro-step) values of a unit where the
    unit reports them (the unit trace op) and the trapezoidal rule on the macro-point values otherwise
    (``res.coupling_log`` counts both).

    Parameters
    ----------
    K : gain of the correction (default 1).
    filter : None (no filter) or the time constant τ [s] of a first-order low-pass on the correction,
        c ← c + ΔT/(τ + ΔT)(K E_k/ΔT − c).
    base : the signal-based approximation corrected: :class:`cosim.ZOH` (default) or an :class:`FOH`/``Lagrange``.
    """

    def __init__(self, K=1.0, filter=None, base=None):
        self.K = _check.real(K, "K")
        self.filter = None if filter is None else _check.real(filter, "filter", positive=True)
        if base is None:
            base = ZOH()
        if isinstance(base, (FOH, Quadratic)):
            base = base.approximation()
        if not isinstance(base, Approximation):
            raise TypeError(f"base: expected ZOH(), FOH() or a cosim approximation, got {base!r}")
        self.base = base

    def approximation(self):
        return self.base

    def _options(self, system, H, t_end):
        return dict(kind="nepce", K=self.K, tau=0.0 if self.filter is None else self.filter)

    def __repr__(self):
        return f"NEPCE(K={self.K!r}, filter={self.filter!r}, base={self.base!r})"


_VARIANTS = ("continuous", "discrete", "modified")
_SOLVE = {"exact": 1, "ex. euler": 0, "euler": 0, "ex_euler": 0, "explicit euler": 0}
_SEMANTICS = {"ramp": 0, "hold": 1}
_SBC = {"zoh": 0, "foh": 1}


class PreStep(Coupling):
    """Genser's model-based pre-step stabilization method (genser2020 §3-§5, §8) as a coupling.

    At every communication point T^k with the outputs y^k:

    1. **Error differential equation** (``use_error_ode``): δ = ỹ − y from the extrapolation errors
       ε = L y + r − u of the last step, (I − C̃) δ' = Ã δ + B̃ ε + D̃ ε' (2.34) or its discrete form (2.57);
       δ is continuous across steps. ỹ^k = y^k + δ^k.
    2. **Model-based extrapolation** of the global IJ surrogate under ideal coupling, (I − B̂) ŷ' = Â ŷ (2.37) or
       ŷ^{k+1} = (I − B̂)^{-1} Â ŷ^k (2.63), from ŷ(T^k) = ỹ^k.
    3. **Input optimization** per subsystem: the input whose IJ prediction reaches ŷ(T^{k+1}):
       continuous, RAMP u = u_0 + s (t − T^k), u_0 = L_i y^k + r_i, (φ_C + φ_D) s = ŷ_i − φ_A y_i − φ_B u_0 (2.48-2.50);
       discrete, HOLD u^{k+1}: Su^+ u^{k+1} = ŷ_i − Sy y_i^k − Su^- u_i^k (2.64-2.65). Least squares for more
       outputs than inputs, the Lagrange minimum-extrapolation-error solution for more inputs than outputs (§5.3),
       the pseudo-inverse for rank-deficient matrices (the rank per step is logged).

    The parameters carry the thesis's names (§17.2 item 13).

    Parameters
    ----------
    variant : "continuous" (continuous IJs, exact or Euler Steps 1-2, RAMP inputs), "discrete" (discrete IJs,
        algebraic Steps 1-2, HOLD inputs) or "modified" (skip Step 3: u = L ŷ + r, §4.4; continuous with exact IJs,
        discrete with identified IJs).
    jacobians : "exact" (the exact IJs of LTI subsystems and of built-in models that know them, eq. 2.12-2.14; for
        the discrete variant their exact discretization at ΔT in the thesis form, eq. 2.18-2.20), a
        :class:`cosim.sysid.RLS` used as the template of one identifier per subsystem (its ``lam``, ``P0``, ``n_a``,
        ``n_b``; n_a = n_b = 1, the thesis optimum, gives Sy = diag(a), Su^+ = B directly; higher orders go through
        the Gilbert realization of each unit's model, Sy = C Φ_A C^+, Su^- = 0, Su^+ = C Φ_B, spec 6.3/6.4), a dict ``{name: RLS}`` of identifiers sized
        for each subsystem (their current parameters are the initial ones), a :class:`cosim.sysid.MOESPWindow`
        used as the template of one recursive MOESP window per subsystem (its ``window`` W, ``order`` n,
        ``block_rows`` r, ``threshold``, ``method``, ``refactor_every``; n_u, n_y are taken from each subsystem) or a
        dict ``{name: MOESPWindow}`` sized per subsystem, or a dict ``{name: (dSdy, dSdu, dSdud)}`` of given IJs.
        MOESP (spec 6.1): every step pushes the aligned sample (u^k, y^k) (u^k the input held over (T^{k-1}, T^k])
        and re-fits the window; the standard-form model x_{j+1} = Φ_A x_j + Φ_B u_j, y_j = C x_j + D u_j of one
        window gives Sy = C Φ_A C^+, Su^- = C Φ_B − Sy D, Su^+ = D (spec 2.2 [EXT]; the time shift of 2.18-2.20
        is in the pairing of the samples, C^{k-1} = C^k within one window's LTI model, so no state bases of two
        fits are mixed). The log's ``params[name]`` then holds ``order``, ``Sy``, ``Su_minus``, ``Su_plus``.
    use_error_ode : solve Step 1 (default False for "continuous", True for "discrete", Tables 3.5 / 3.12).
    error_ode_method, error_ode_steps : "exact" (default) or "ex. euler" with that many sub-steps (continuous).
    extrapolation_method, extrapolation_steps : "exact" (default) or "ex. euler" with that many sub-steps
        (continuous).
    discretization_steps : None (exact φ_A, φ_B, φ_C + φ_D) or the number of trapezoidal intervals.
    learning_time : learning phase [s] with signal-based coupling (default 0 with exact IJs, 0.22 s identified).
    switch_time : tanh switch phase [s] after learning (default 0 exact, 0.005 s identified).
    threshold_sbc, threshold_mod : th_SBC and th_mod of the phase check on ε_SI,global (defaults 3.54, 0.21,
        Table 3.12); th_mod ≤ th_SBC (3.13).
    input_semantics : "ramp" (default continuous) or "hold" (default discrete; continuous: the energy-equivalent
        constant u_0 + s ΔT/2).
    sbc_method : "zoh" (default) or "foh": the signal-based coupling of the learning and SBC phases.
    rtol : singular-value cut-off of the pseudo-inverses.
    intermediate_correction : discrete version only (ValueError otherwise; default False): the intermediate-value
        correction of Step 1 (2.58-2.60 with the spec's [FIX]): ε_cor = (1/ΔT) ∫ ε dt − (ε^{k-1} + ε^k)/2 over the
        last step, ε(t) = L y(t) + r − u(t), ε^{k-1} and ε^k both shifted by ε_cor in (2.57). ∫ y dt is the
        trapezoidal rule on each unit's micro-step outputs (its trace; the macro points for a unit without one),
        ∫ u dt is exact for the HOLD/RAMP input the unit received. The log then has ``eps_cor`` (steps, n_u) and
        ``traced_steps`` / ``macro_point_steps``.

    The parameters also take the names of genser2020's reference implementation, as aliases (the attributes too):
    ``useErrDiffEqu``, ``optionErrDiffEqu``, ``stepsErrDiffEqu``, ``optionExtrapolation``, ``stepsExtrapolation``,
    ``stepsDiscreteSystemMatrices``, ``timeLearning``, ``timeSwitchphase``, ``thresholdMbc2sbcCoupling``,
    ``thresholdMbcNoInputOpt``, ``inputSemantics``, ``sbcMethod`` (:data:`THESIS_NAMES`).
    """

    def __init__(self, variant="continuous", jacobians="exact", *, use_error_ode=None, error_ode_method=None,
                 error_ode_steps=None, extrapolation_method=None, extrapolation_steps=None, discretization_steps=None,
                 learning_time=None, switch_time=None, threshold_sbc=None, threshold_mod=None, input_semantics=None,
                 sbc_method=None, rtol=1e-12, intermediate_correction=False, **thesis_names):
        o = dict(use_error_ode=use_error_ode, error_ode_method=error_ode_method, error_ode_steps=error_ode_steps,
                 extrapolation_method=extrapolation_method, extrapolation_steps=extrapolation_steps,
                 discretization_steps=discretization_steps, learning_time=learning_time, switch_time=switch_time,
                 threshold_sbc=threshold_sbc, threshold_mod=threshold_mod, input_semantics=input_semantics,
                 sbc_method=sbc_method)
        arg = {k: k for k in o}   # the name the caller used, for the messages
        for old, value in thesis_names.items():
            if old not in THESIS_NAMES:
                raise TypeError(f"PreStep() got an unexpected keyword argument {old!r}")
            new = THESIS_NAMES[old]
            o[new] = _check.renamed(o[new], value, new, old, None, deprecated=False)
            arg[new] = old if value is not None else new
        if not isinstance(variant, str) or variant.lower() not in _VARIANTS:
            raise ValueError(f"variant: must be one of {sorted(_VARIANTS)}, got {variant!r}")
        self.variant = variant.lower()
        identified = not (isinstance(jacobians, str) or (isinstance(jacobians, dict) and all(
            isinstance(v, (tuple, list, _sysid.ContinuousIJ, _sysid.DiscreteIJ)) for v in jacobians.values())))
        if isinstance(jacobians, str) and jacobians != "exact":
            raise ValueError(f"jacobians: must be 'exact', a cosim.sysid.RLS or a dict of them, got {jacobians!r}")
        if identified:
            ids = list(jacobians.values()) if isinstance(jacobians, dict) else [jacobians]
            kinds = {type(v) for v in ids}
            if len(kinds) > 1:
                raise TypeError("jacobians: the identifiers must all be cosim.sysid.RLS or all cosim.sysid.MOESPWindow")
            for v in ids:
                if isinstance(v, _sysid.MOESPWindow):
                    continue
                if not isinstance(v, _sysid.RLS):
                    raise TypeError(f"jacobians: expected 'exact', a cosim.sysid.RLS, a cosim.sysid.MOESPWindow or a "
                                    f"dict, got {v!r}")
                if v.n_b < 1 or v.n_a > 64 or v.n_b > 64:
                    raise ValueError(f"jacobians: the pre-step needs 1 <= n_b <= 64 and n_a <= 64 (the input must act "
                                     f"on the output); got n_a = {v.n_a}, n_b = {v.n_b}")
                if np.ndim(v._P0) != 0:
                    raise ValueError("jacobians: the RLS must have a scalar P0 (P(0) = P0 I)")
            if self.variant == "continuous":
                raise ValueError("variant: identified IJs are discrete; use variant='discrete' or 'modified'")
        self.jacobians = jacobians
        self.identified = identified
        self._moesp = identified and isinstance(ids[0], _sysid.MOESPWindow)
        use_ede = o["use_error_ode"]
        if use_ede is None:
            use_ede = self.variant == "discrete" or (self.variant == "modified" and identified)
        if not isinstance(use_ede, (bool, np.bool_)):
            raise TypeError(f"{arg['use_error_ode']}: expected True or False, got {use_ede!r}")
        self.use_error_ode = bool(use_ede)
        self.error_ode_method = _choice(_given(o["error_ode_method"], "exact"), arg["error_ode_method"], _SOLVE)
        self.error_ode_steps = _check.integer(_given(o["error_ode_steps"], 1), arg["error_ode_steps"], 1)
        self.extrapolation_method = _choice(_given(o["extrapolation_method"], "exact"), arg["extrapolation_method"],
                                            _SOLVE)
        self.extrapolation_steps = _check.integer(_given(o["extrapolation_steps"], 1), arg["extrapolation_steps"], 1)
        self.discretization_steps = (0 if o["discretization_steps"] is None
                                     else _check.integer(o["discretization_steps"], arg["discretization_steps"], 1))
        self.learning_time = _check.real(_given(o["learning_time"], 0.22 if identified else 0.0), arg["learning_time"],
                                         minimum=0.0)
        self.switch_time = _check.real(_given(o["switch_time"], 0.005 if identified else 0.0), arg["switch_time"],
                                       minimum=0.0)
        self.threshold_sbc = _check.real(_given(o["threshold_sbc"], 3.54), arg["threshold_sbc"], minimum=0.0,
                                         allow_inf=True)
        self.threshold_mod = _check.real(_given(o["threshold_mod"], 0.21), arg["threshold_mod"], minimum=0.0,
                                         allow_inf=True)
        if self.threshold_mod > self.threshold_sbc:
            raise ValueError(f"{arg['threshold_mod']}: th_mod = {self.threshold_mod} must be <= "
                             f"{arg['threshold_sbc']} = th_SBC = {self.threshold_sbc} (genser eq. 3.13)")
        semantics = o["input_semantics"]
        if semantics is None:
            semantics = "hold" if self.variant == "discrete" or identified else "ramp"
        self.input_semantics = semantics
        self._hold = _choice(semantics, arg["input_semantics"], _SEMANTICS)
        if self._discrete and not self._hold:
            raise ValueError(f"{arg['input_semantics']}: the discrete version uses HOLD inputs (its IJs assume a held "
                             "input)")
        self.sbc_method = _given(o["sbc_method"], "zoh")
        self._foh = _choice(self.sbc_method, arg["sbc_method"], _SBC)
        self.rtol = _check.real(rtol, "rtol", positive=True)
        if not isinstance(intermediate_correction, (bool, np.bool_)):
            raise TypeError(f"intermediate_correction: expected True or False, got {intermediate_correction!r}")
        if intermediate_correction and not self._discrete:
            raise ValueError("intermediate_correction: the intermediate-value correction (genser 2.58-2.60) belongs to "
                             "the discrete version; use variant='discrete' (or 'modified' with identified IJs)")
        self.intermediate_correction = bool(intermediate_correction)

    @property
    def _discrete(self):
        return self.variant == "discrete" or (self.variant == "modified" and self.identified)

    def __getattr__(self, name):
        """The attributes under the reference implementation's names (THESIS_NAMES)."""
        if name in THESIS_NAMES:
            return getattr(self, THESIS_NAMES[name])
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self):
        return f"PreStep(variant={self.variant!r}, jacobians={self.jacobians!r})"

    # ------------------------------------------------------------------------------------------------ IJs
    @staticmethod
    def _linear(s):
        """(A, B, C, D) of a subsystem whose exact IJs are known, else None."""
        from .system import LTI
        if isinstance(s, LTI):
            return s.A, s.B, s.C, s.D
        return getattr(s, "linearization", None)

    def _given_ijs(self, system, H):
        blocks = []
        given = self.jacobians if isinstance(self.jacobians, dict) else {}
        unknown = set(given) - set(system.names)
        if unknown:
            raise ValueError(f"jacobians: unknown subsystem names {sorted(unknown)}")
        for s in system.subsystems:
            if s.name in given:
                v = given[s.name]
                if isinstance(v, _sysid.ContinuousIJ):
                    v = (v.dSdy, v.dSdu, v.dSdud)
                elif isinstance(v, _sysid.DiscreteIJ):
                    v = (v.Sy, v.Su_minus, v.Su_plus)
                if len(v) != 3:
                    raise ValueError(f"jacobians[{s.name!r}]: expected (dS/dy, dS/du, dS/du')")
                mats = []
                for nm, M, shape in zip(("dS/dy", "dS/du", "dS/du'"), v, ((s.ny, s.ny), (s.ny, s.nu), (s.ny, s.nu))):
                    M = np.asarray(M, dtype=float).reshape(shape) if np.size(M) == shape[0] * shape[1] else None
                    if M is None or not np.all(np.isfinite(M)):
                        raise ValueError(f"jacobians[{s.name!r}]: {nm} must be a finite {shape[0]}x{shape[1]} matrix")
                    mats.append(M)
                blocks.append(tuple(mats))
                continue
            lin = self._linear(s)
            if lin is None:
                raise ValueError(f"jacobians: subsystem {s.name!r} ({type(s).__name__}) has no known exact interface "
                                 "Jacobians; give them as jacobians={name: (dSdy, dSdu, dSdud)} or identify them "
                                 "(jacobians=cosim.sysid.RLS(...), variant='discrete')")
            A, B, C, D = (np.asarray(M, dtype=float) for M in lin)
            if self._discrete:
                PhiA, PhiB = _sysid.discretize(A, B, H)
                ij = _sysid.ij_discrete(PhiA, PhiB, C, D, form="thesis", rtol=self.rtol)
                blocks.append((ij.Sy, ij.Su_minus, ij.Su_plus))
            else:
                ij = _sysid.ij_continuous(A, B, C, D, rtol=self.rtol)
                blocks.append((ij.dSdy, ij.dSdu, ij.dSdud))
        return [np.concatenate([b[q].reshape(-1) for b in blocks]) for q in range(3)]

    def _identifiers(self, system, what):
        """The per-subsystem identifiers of ``jacobians={name: identifier}``, checked against the subsystems."""
        unknown = set(self.jacobians) - set(system.names)
        missing = set(system.names) - set(self.jacobians)
        if unknown or missing:
            raise ValueError(f"jacobians: need one identifier per subsystem {system.names}; unknown "
                             f"{sorted(unknown)}, missing {sorted(missing)}")
        ids = [self.jacobians[n] for n in system.names]
        for s, r in zip(system.subsystems, ids):
            if r.n_y != s.ny or r.n_u != s.nu:
                raise ValueError(f"jacobians[{s.name!r}]: the {what} has n_y = {r.n_y}, n_u = {r.n_u}; "
                                 f"subsystem {s.name!r} has {s.ny} outputs and {s.nu} inputs")
        return ids

    def _rls_init(self, system):
        if isinstance(self.jacobians, dict):
            ids = self._identifiers(system, "identifier")
            lams = {r.lam for r in ids}
            P0s = {float(r._P0) for r in ids}
            if len(lams) > 1 or len(P0s) > 1:
                raise ValueError("jacobians: the identifiers must share lam and P0")
            if len({(r.n_a, r.n_b) for r in ids}) > 1:
                raise ValueError("jacobians: the identifiers must share n_a and n_b")
            a0 = np.concatenate([r.parameters[0].reshape(-1) for r in ids])
            b0 = np.concatenate([r.parameters[1].reshape(-1) for r in ids])
            return ids[0].lam, float(ids[0]._P0), a0, b0
        r = self.jacobians
        return r.lam, float(r._P0), None, None

    def _moesp_init(self, system):
        """Per unit (window, block_rows, order, method) of the MOESP windows; threshold and refactor period."""
        if isinstance(self.jacobians, dict):
            ws = self._identifiers(system, "MOESP window")
            if len({w.threshold for w in ws}) > 1 or len({w.refactor_every for w in ws}) > 1:
                raise ValueError("jacobians: the MOESP windows must share threshold and refactor_every")
        else:
            ws = [self.jacobians] * len(system.subsystems)
        cfg = []
        for s, w in zip(system.subsystems, ws):
            r = w.block_rows
            if w._order >= 0 and w._order > min((r - 1) * s.ny, r * s.ny - 1):
                raise ValueError(f"jacobians: order {w._order} exceeds the largest order identifiable for subsystem "
                                 f"{s.name!r} ({s.ny} outputs) with block_rows = {r}; increase block_rows")
            rows = (2 if w.method == "po-moesp" else 1) * r * (s.nu + s.ny)
            if w.window < rows:
                raise ValueError(f"jacobians: window = {w.window} is below the {rows} Hankel rows of subsystem "
                                 f"{s.name!r} ({s.nu} inputs, {s.ny} outputs, block_rows = {r})")
            _sysid._moesp_caps(rows, w.window, "window")
            cfg += [w.window, r, w._order, _sysid._MOESP_METHODS[w.method]]
        return np.asarray(cfg, dtype=float), ws[0].threshold, ws[0].refactor_every

    def _options(self, system, H, t_end):
        discrete = self._discrete
        cap = math.floor(t_end / H * (1 + 1e-9)) + 2
        d = dict(kind="prestep", variant=_PRESTEP_VARIANT["discrete" if discrete else "continuous"],
                 ij_source=_IJ_SOURCE["rls" if self.identified else "given"],
                 modified=int(self.variant == "modified"), hold=self._hold, sbc_foh=self._foh,
                 use_ede=int(self.use_error_ode), ede_exact=self.error_ode_method, ede_steps=self.error_ode_steps,
                 extrap_exact=self.extrapolation_method, extrap_steps=self.extrapolation_steps,
                 dsm_steps=self.discretization_steps, time_learning=self.learning_time,
                 time_switch=self.switch_time, th_sbc=self.threshold_sbc,
                 th_mod=self.threshold_mod, rls_lambda=1.0, rls_P0=1e4, rtol=self.rtol,
                 log_capacity=int(cap) if 0 < cap < 1e12 else 0, Sy=None, Su=None, Sd=None, a0=None, b0=None)
        if self.intermediate_correction:
            d["intermediate_correction"] = 1
        if self._moesp:
            d["ij_source"] = _IJ_SOURCE["moesp"]
            d["moesp_cfg"], d["moesp_threshold"], d["moesp_refresh"] = self._moesp_init(system)
        elif self.identified:
            d["rls_lambda"], d["rls_P0"], d["a0"], d["b0"] = self._rls_init(system)
            r0 = next(iter(self.jacobians.values())) if isinstance(self.jacobians, dict) else self.jacobians
            d["rls_na"], d["rls_nb"] = r0.n_a, r0.n_b
        else:
            d["Sy"], d["Su"], d["Sd"] = self._given_ijs(system, H)
        return d

    def _log(self, system, raw, t):
        if raw is None:
            return None
        out = _phase_log(raw, t, PHASES)
        n = len(out["t"])
        out.update(reason=np.array([REASONS[p] for p in np.asarray(raw["phase"])], dtype=object),
                   eps_si=raw["eps_si"], delta=raw["delta"], u=raw["u"], rank=raw["rank"])
        for key in ("eps_cor", "traced_steps", "macro_point_steps"):
            if key in raw:
                out[key] = raw[key]
        if self._moesp:
            params, off = {}, 0
            P = raw["params"]
            for s in system.subsystems:
                ny, nu = s.ny, s.nu
                o = off + 1
                params[s.name] = dict(order=P[:, off].astype(int),
                                      Sy=P[:, o:o + ny * ny].reshape(n, ny, ny),
                                      Su_minus=P[:, o + ny * ny:o + ny * ny + ny * nu].reshape(n, ny, nu),
                                      Su_plus=P[:, o + ny * ny + ny * nu:o + ny * ny + 2 * ny * nu].reshape(n, ny, nu))
                off = o + ny * ny + 2 * ny * nu
            out["params"] = params
        elif self.identified:
            params, off = {}, 0
            P = raw["params"]
            r0 = next(iter(self.jacobians.values())) if isinstance(self.jacobians, dict) else self.jacobians
            na, nb = r0.n_a, r0.n_b
            for s in system.subsystems:
                a = P[:, off:off + s.ny * na]
                b = P[:, off + s.ny * na:off + s.ny * na + s.ny * s.nu * nb]
                if na == 1 and nb == 1:      # the thesis optimum: a (steps, n_y), b (steps, n_y, n_u)
                    a, b = a, b.reshape(n, s.ny, s.nu)
                else:                        # a (steps, n_y, n_a), b (steps, n_y, n_u, n_b)
                    a, b = a.reshape(n, s.ny, na), b.reshape(n, s.ny, s.nu, nb)
                params[s.name] = dict(a=a, b=b)
                off += s.ny * na + s.ny * s.nu * nb
            out["params"] = params
        return out


_SURROGATES = ("continuous", "discrete")
_SHAPES = _core.codes["mbcorr_shape"]
#: MBCorr's log phase codes -> names
MBCORR_PHASES = {code: name for name, code in _core.codes["mbcorr_phase"].items()}


class MBCorr(Coupling):
    """The model-based corrector MBCorr (Haid, Stettinger, Watzenig, Benedikt et al. 2022; genser2020's third
    baseline) as a **reconstruction**: the paper's equations could not be read, so this is the self-consistent
    reference formulation of the MBCorr specification (mbcorr.md §2), which satisfies what the sources state (polynomial
    extrapolation of order p = 0, 1, 2, an exact or identified surrogate of the coupled system, no access to unit
    states, and an additive correction that makes each input's integral over the macro step match the model's).

    On [T^k, T^{k+1}], s = (t − T^k)/ΔT, the predictor ū(s) = L P_p(s) + r (``Lagrange(p)``) is corrected,

        u(s) = ū(s) + Δ^k w(s),   Δ^k = L (Ŷ^k − m_p),   m_p = ∫_0^1 P_p ds,   ∫_0^1 w ds = 1,

    so that ∫_{T^k}^{T^{k+1}} u dt = ΔT (L Ŷ^k + r) (the integral condition), with Ŷ^k the mean over the step of the
    ideally coupled surrogate started from the measured y^k:

    * ``surrogate="continuous"`` (B1, exact continuous IJs, the pre-step's Step-2 model):
      (I − Sd L) ŷ' = (Sy + Su L) ŷ + Su r,  Ŷ^k = φ_1(MΔT) y^k + ΔT φ_2(MΔT) g;
    * ``surrogate="discrete"`` (B2, discrete IJs, exact or identified online by RLS/MOESP like :class:`PreStep`):
      (I − Su^+ L) ŷ^{k+1} = Sy y^k + Su^- u^k + Su^+ r,  Ŷ^k = (y^k + ŷ^{k+1})/2, u^k the mean of the input
      applied over the last step.

    Parameters
    ----------
    order : p, the order of the polynomial extrapolation (0, 1 or 2).
    surrogate : "continuous" (B1; exact IJs only) or "discrete" (B2).
    jacobians : "exact", a dict of given IJs, a :class:`cosim.sysid.RLS` or :class:`cosim.sysid.MOESPWindow`
        (discrete surrogate only), as in :class:`PreStep`.
    shape : "constant" (w = 1, the default: shifts the level, keeps the extrapolated slope) or "end"
        (w = (p_k + 1) s^{p_k}: keeps u(T^k) = L y^k + r).
    learning_time, switch_time : [s] plain ``Lagrange(p)`` while learning, then the tanh switch phase (Δ scaled by
        fac(T^k)); defaults 0 with exact IJs, 0.22 s and 0.005 s identified (the pre-step's).
    rtol : singular-value cut-off of the IJ conversions.

    After a run, ``res.coupling_log`` holds per step ``phase`` ("learning", "corrected", "fallback": the
    identification was not ready or failed, or Ŷ was not finite; Δ = 0 there), ``yhat`` (Ŷ^k, NaN where not
    corrected), ``u_coef`` (steps, 3, n_u: the applied input's coefficients of s^0, s^1, s^2), ``delta`` (Δ^k) and
    the counts ``learning_steps``, ``corrected_steps``, ``fallback_steps``. Jacobi scheduling and a constant ΔT.
    """

    def __init__(self, order=0, surrogate="continuous", jacobians="exact", *, shape="constant", learning_time=None,
                 switch_time=None, rtol=1e-12):
        self.order = _check.integer(order, "order", 0)
        if self.order > 2:
            raise ValueError(f"order: MBCorr is derived for orders 0, 1 and 2, got {order!r}")
        if not isinstance(surrogate, str) or surrogate.lower() not in _SURROGATES:
            raise ValueError(f"surrogate: must be one of {list(_SURROGATES)}, got {surrogate!r}")
        self.surrogate = surrogate.lower()
        self.shape = shape.lower() if isinstance(shape, str) else shape
        self._shape = _choice(shape, "shape", _SHAPES)
        identified = not (isinstance(jacobians, str) or isinstance(jacobians, dict) and all(
            isinstance(v, (tuple, list, _sysid.ContinuousIJ, _sysid.DiscreteIJ)) for v in jacobians.values()))
        if identified and self.surrogate == "continuous":
            raise ValueError("surrogate: identified IJs are discrete; use surrogate='discrete'")
        # the IJ source and its checks are the pre-step's (the same information, genser2020 §3.3)
        self._ij = PreStep("continuous" if self.surrogate == "continuous" else "discrete", jacobians,
                           use_error_ode=False, learning_time=learning_time, switch_time=switch_time, rtol=rtol)
        self.jacobians = jacobians
        self.learning_time, self.switch_time, self.rtol = (self._ij.learning_time, self._ij.switch_time,
                                                           self._ij.rtol)

    def approximation(self):
        return ZOH() if self.order == 0 else Lagrange(self.order)

    def _options(self, system, H, t_end):
        ps = self._ij._options(system, H, t_end)
        keep = set(_core.kinds["coupling"]["mbcorr"])
        d = {k: v for k, v in ps.items() if k in keep}
        d.update(kind="mbcorr", shape=self._shape)
        return d

    def _log(self, system, raw, t):
        if raw is None:
            return None
        out = _phase_log(raw, t, MBCORR_PHASES)
        n = len(out["t"])
        out.update(yhat=raw["yhat"], u_coef=np.asarray(raw["u_coef"]).reshape(n, 3, -1), delta=raw["delta"])
        for key in ("learning_steps", "corrected_steps", "fallback_steps"):
            out[key] = raw[key]
        return out

    def __repr__(self):
        return (f"MBCorr(order={self.order!r}, surrogate={self.surrogate!r}, jacobians={self.jacobians!r}, "
                f"shape={self.shape!r})")


class PythonCoupling(Coupling):
    """Base class of coupling methods written in Python (a slow path for prototyping, like the Python models of
    :class:`cosim.ODE`). The engine calls the methods below through the same interface as its C couplings
    (``csrc/coupling/coupling.h``): one Python call per operation with the GIL taken, so a step costs microseconds
    instead of nanoseconds. An exception raised in a method stops the run: ``KeyboardInterrupt`` and ``SystemExit``
    as themselves, any other as the ``__cause__`` of the :class:`cosim.SolverError`. Ctrl-C works as in any run.

    Override:

    ``start(system, H)``
        once before the run (``system`` the :class:`cosim.CoupledSystem`, with ``L``, ``r``, ``in_offset``,
        ``out_offset``; ``H`` the macro step). Reset the coupling's state here: one object may serve several runs.
    ``predict(T, H)`` (required)
        the inputs of every unit on [T, T + H] as polynomial coefficients in s = (t − T)/H: an array of shape
        (deg + 1, n_u), row q the coefficients of s^q (deg ≤ 5; a vector of n_u values is deg = 0).
    ``accept(T1, y)`` (required)
        the step to T1 is accepted with the consistent outputs y (n_y); the first call, at t0, gives the initial
        outputs.
    ``on_unit_done(i, T1, y_i)``
        unit i reached T1 with outputs y_i (Gauss-Seidel: the units stepped later may get new inputs); return
        None (default: no change) or a new coefficient array as from ``predict``.
    ``save()`` / ``restore(state)``
        a copy of the coupling's state and the way back to it, for rejected steps (step control); only called when
        the run can reject a step. The default raises NotImplementedError.
    """

    def start(self, system, H):
        """Called once before the run; the default does nothing."""

    def predict(self, T, H):
        raise NotImplementedError(f"{type(self).__name__}.predict: a PythonCoupling must define predict(T, H)")

    def accept(self, T1, y):
        raise NotImplementedError(f"{type(self).__name__}.accept: a PythonCoupling must define accept(T1, y)")

    def on_unit_done(self, i, T1, y_i):
        return None

    def save(self):
        raise NotImplementedError(f"{type(self).__name__}.save: needed when the run may reject steps")

    def restore(self, state):
        raise NotImplementedError(f"{type(self).__name__}.restore: needed when the run may reject steps")

    def _options(self, system, H, t_end):
        self.start(system, H)
        return dict(kind="callback", object=self)

    def __repr__(self):
        return f"{type(self).__name__}()"


def as_coupling(obj) -> Coupling:
    if not isinstance(obj, Coupling):
        raise TypeError(f"coupling: expected cosim.PreStep(...), cosim.MBCorr(...), a cosim.PythonCoupling, cosim.NEPCE(...), cosim.FOH(), cosim.Quadratic() or "
                        f"cosim.BalanceCorrection(...), "
                        f"got {obj!r}")
    return obj


def _matrix(M, name, shape=None):
    try:
        A = np.asarray(M, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a real matrix") from None
    if A.ndim == 1 and shape is not None:
        A = A.reshape(shape[0], -1) if shape[0] > 0 else A
    if A.ndim != 2 or (shape is not None and any(s >= 0 and a != s for a, s in zip(A.shape, shape))):
        raise ValueError(f"{name}: expected a matrix of shape {shape}, got {np.shape(M)}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name}: must be finite")
    return A


def prestep_phi(dSdy, dSdu, dSdud, H, discretization_steps=None, *, stepsDiscreteSystemMatrices=None):
    """φ_A = e^{Sy ΔT}, φ_B = ∫_0^ΔT e^{Sy(ΔT−τ)} dτ Su, φ_C + φ_D = ∫_0^ΔT e^{Sy(ΔT−τ)} τ dτ Su +
    ∫_0^ΔT e^{Sy(ΔT−τ)} dτ Sd of one subsystem's continuous IJs (genser eq. 2.44-2.47, with the relative time of
    erratum E3), exact (``discretization_steps=None``; alias ``stepsDiscreteSystemMatrices``) or by the trapezoidal
    rule with that many intervals — the matrices the pre-step's Step 3 uses (the same C function)."""
    arg = "discretization_steps" if stepsDiscreteSystemMatrices is None else "stepsDiscreteSystemMatrices"
    steps = _check.renamed(discretization_steps, stepsDiscreteSystemMatrices, "discretization_steps",
                           "stepsDiscreteSystemMatrices", None, deprecated=False)
    Sy = _matrix(dSdy, "dSdy")
    if Sy.shape[0] != Sy.shape[1] or Sy.shape[0] == 0:
        raise ValueError(f"dSdy: must be square and non-empty, got {Sy.shape}")
    Su = _matrix(dSdu, "dSdu", (Sy.shape[0], -1))
    Sd = _matrix(dSdud, "dSdud", Su.shape)
    H = _check.real(H, "H", positive=True)
    q = 0 if steps is None else _check.integer(steps, arg, 1)
    from . import _core
    return _core.prestep_phi(Sy, Su, Sd, H, q)


def input_optimization(A, rhs, target, rtol=1e-12):
    """Step 3 of one subsystem (genser §5.3): x = target + A^+ (rhs − A target). More outputs than inputs: the
    least-squares solution of A x = rhs; more inputs than outputs: the solution of A x = rhs closest to ``target``
    (Lagrange minimum extrapolation error, eq. 2.66-2.71 with erratum E5); rank-deficient A: the pseudo-inverse.
    Returns (x, rank)."""
    A = _matrix(A, "A")
    rhs = np.asarray(rhs, dtype=float).reshape(-1)
    target = np.asarray(target, dtype=float).reshape(-1)
    if rhs.size != A.shape[0]:
        raise ValueError(f"rhs: expected {A.shape[0]} values, got {rhs.size}")
    if target.size != A.shape[1]:
        raise ValueError(f"target: expected {A.shape[1]} values, got {target.size}")
    from . import _core
    return _core.prestep_step3(A, rhs, target, _check.real(rtol, "rtol", positive=True))
