"""Conservation in the coupling: Moshagen's balance correction (a coupling wrapper) and Sadjina's energy-based step
control ECCO (an error estimator plus a PI step-size controller), both in the C core (csrc/coupling/balance.c,
csrc/control/ecco.c).

* :class:`BalanceCorrection` (moshagen §2.2.6-2.2.7, §4 eqs. 77-79; moshagen.md §2.6): the receiver of a corrected
  input adds, on the next ``spread`` = M macro intervals, the raw balance error of the last interval
  e^k = Q^k − ∫ U^k dt, where Q^k = ∫_{T_{k-1}}^{T_k} y_j dt is the sender's exact integral of its output (a
  quadrature state q̇ = y integrated by the sender's own solver) and U^k the receiver's uncorrected hold function
  (integrated analytically), spread by a kernel with unit integral. One order of convergence is gained (P + 2).
* :class:`ECCO`: power bonds (effort × flow on both sides), the energy residual ΔE = |P_a − P_b|·H per bond, its WRMS
  ε = sqrt(mean_b (ΔE_b / (atol + rtol·E_b))²) and the PI controller
  H_new = clamp(H·clamp(safety·ε^(−kI−kP)·ε_prev^(kP), r_min, r_max), H_min, H_max) of libcosim's ecco_algorithm;
  non-rejecting by default, optionally with rejection and rollback (``reject=True``).
"""
from __future__ import annotations


import numpy as np

from . import _check, _core

KERNELS = dict(_core.codes["balance_kernel"])
VARIANTS = dict(_core.codes["balance_variant"])


class BalanceCorrection:
    """Balance correction of coupling signals (moshagen eqs. 77-79, the recommended algorithm of moshagen.md §2.6).

    Parameters
    ----------
    kernel : ``"constant"`` (φ = 1/(M H)) or ``"smooth"`` (the bump g = 30 σ²(1−σ)²/(M H), σ = (t − T_m)/(M H),
        vanishing smoothly at both ends); both integrate to 1.
    spread : M, the number of macro intervals (1..4) a correction is spread over (moshagen §2.2.7).
    connections : None (every connected input) or a list of receiving input names (``"mass.F"``, ``"S2.u[0]"``) to
        correct; an empty list corrects nothing but still reports the cumulative imbalance.
    variant : ``"telescoping"`` (eq. 78: the error against the *uncorrected* hold function; the cumulative imbalance
        telescopes to the last raw error) or ``"literal"`` (eq. 11 read with the corrected input: only every other
        error is compensated, the order gain is lost; for comparison).

    The result's ``balance_error`` holds, per connected input, the cumulative imbalance ∫_0^{T_N} (y_j − u_i) dt
    at every macro point (``balance_t``). Wraps whichever approximation ``simulate`` is given.
    """

    def __init__(self, kernel: str = "constant", spread: int = 1, connections=None, variant: str = "telescoping"):
        if not isinstance(kernel, str) or kernel not in KERNELS:
            raise ValueError(f"kernel: must be 'constant' or 'smooth', got {kernel!r}")
        _check.integer(spread, "spread", 1, 4)   # macro intervals
        if not isinstance(variant, str) or variant not in VARIANTS:
            raise ValueError(f"variant: must be 'telescoping' or 'literal', got {variant!r}")
        if connections is not None:
            if isinstance(connections, str):
                raise TypeError(f"connections: expected a list of input names, got the string {connections!r}")
            connections = list(connections)
            for c in connections:
                if not isinstance(c, str):
                    raise TypeError(f"connections: expected input names (strings), got {c!r}")
        self.kernel, self.spread, self.connections, self.variant = kernel, int(spread), connections, variant

    def __repr__(self):
        return (f"BalanceCorrection(kernel={self.kernel!r}, spread={self.spread}, connections={self.connections!r}, "
                f"variant={self.variant!r})")

    def _tracked(self, system):
        """Global indices of the connected inputs (the imbalance is tracked for all of them)."""
        ci, _, _ = system.coupling
        return sorted(set(int(a) for a in ci))

    def _spec(self):
        return dict(kernel=KERNELS[self.kernel], spread=self.spread, variant=VARIANTS[self.variant])

    def _corrected(self, system):
        """Per input 1 if corrected (None: every connected input)."""
        tracked = self._tracked(system)
        flags = None
        if self.connections is not None:
            names = system.signal_names("u")
            flags = np.zeros(len(names), dtype=np.int64)
            for c in self.connections:
                try:
                    a = system._global_index(c, "u")
                except ValueError as e:
                    raise ValueError(f"connections: {e}") from None
                if a not in tracked:
                    raise ValueError(f"connections: input {c!r} is not connected to an output")
                flags[a] = 1
        return flags


def _number(name, v, lo=None, lo_open=False, allow_zero=True):
    f = _check.real(v, name)
    if lo is not None and (f < lo or (lo_open and f == lo)):
        raise ValueError(f"{name}: must be {'>' if lo_open else '>='} {lo}, got {v!r}")
    return f


class ECCO:
    """Energy-conservation-based step-size control (Sadjina et al.; libcosim's ``ecco_algorithm``).

    Parameters
    ----------
    power_bonds : list of bonds ``(effort_a, flow_a, effort_b, flow_b)``: the signals whose products are the power
        leaving side a and entering side b, e.g. ``("chassis.v", "chassis.F", "wheel.F", "wheel.v")``. Each signal
        is an output or an input of a subsystem (an output counts with its value after the step, an input with the
        value its subsystem applied at the end of the step). Multidimensional bonds: give lists of equal length
        for the four entries, P = Σ_d e_d f_d.
    rtol, atol : tolerances of the energy residual: ε = sqrt(mean_b (ΔE_b / (atol + rtol·E_b))²),
        ΔE_b = |P_a − P_b|·H, E_b = max(|P_a|, |P_b|)·H.
    safety, kP, kI : PI controller, gain = safety·ε^(−kI−kP)·ε_prev^(kP) (kP, kI ≥ 0).
    H_min, H_max : bounds of the macro step; the ``H`` given to :func:`cosim.simulate` is the first step.
    r_min, r_max : bounds of the step change ratio per step.
    reject : False (default, as libcosim: every step is accepted) or True (a step with ε > 1 and H > H_min is
        rolled back and retried with a smaller H).
    """

    def __init__(self, power_bonds, rtol=1e-4, atol=1e-4, safety=0.9, kP=0.2, kI=0.15, H_min=1e-5, H_max=1e-2,
                 r_min=0.2, r_max=1.5, reject=False):
        if isinstance(power_bonds, (str, tuple)) and len(power_bonds) == 4 and all(
                isinstance(s, str) for s in power_bonds):
            power_bonds = [tuple(power_bonds)]
        if isinstance(power_bonds, str) or not hasattr(power_bonds, "__iter__"):
            raise TypeError("power_bonds: expected a list of (effort_a, flow_a, effort_b, flow_b) tuples")
        bonds = []
        for b in power_bonds:
            if isinstance(b, str) or not hasattr(b, "__len__") or len(b) != 4:
                raise ValueError(f"power_bonds: each bond is (effort_a, flow_a, effort_b, flow_b), got {b!r}")
            parts = [[p] if isinstance(p, str) else list(p) for p in b]
            n = len(parts[0])
            if n == 0 or any(len(p) != n for p in parts):
                raise ValueError(f"power_bonds: the four entries of bond {b!r} must have the same (non-zero) number "
                                 "of signals")
            for p in parts:
                for s in p:
                    if not isinstance(s, str):
                        raise TypeError(f"power_bonds: signal names must be strings, got {s!r}")
            bonds.append(parts)
        if not bonds:
            raise ValueError("power_bonds: need at least one bond")
        self.power_bonds = bonds
        self.rtol = _number("rtol", rtol, 0.0)
        self.atol = _number("atol", atol, 0.0)
        if self.rtol == 0 and self.atol == 0:
            raise ValueError("rtol/atol: not both 0")
        self.safety = _number("safety", safety, 0.0, lo_open=True)
        self.kP = _number("kP", kP, 0.0)
        self.kI = _number("kI", kI, 0.0)
        self.H_min = _number("H_min", H_min, 0.0, lo_open=True)
        self.H_max = _number("H_max", H_max, 0.0, lo_open=True)
        if self.H_min > self.H_max:
            raise ValueError(f"H_min: H_min = {H_min!r} is larger than H_max = {H_max!r}")
        self.r_min = _number("r_min", r_min, 0.0, lo_open=True)
        self.r_max = _number("r_max", r_max, 0.0, lo_open=True)
        if self.r_min > self.r_max:
            raise ValueError(f"r_min: r_min = {r_min!r} is larger than r_max = {r_max!r}")
        if not isinstance(reject, bool):
            raise TypeError(f"reject: expected True or False, got {reject!r}")
        self.reject = reject

    def __repr__(self):
        return (f"ECCO({len(self.power_bonds)} bonds, rtol={self.rtol}, atol={self.atol}, H_min={self.H_min}, "
                f"H_max={self.H_max}, reject={self.reject})")

    @staticmethod
    def _resolve(system, name):
        """(code, subsystem) of a signal: code >= 0 is a global output index, code < 0 an input -(a+1)."""
        if "." not in name:
            raise ValueError(f"power_bonds: {name!r} is not 'subsystem.signal'")
        sub, sig = name.split(".", 1)
        if sub not in system.names:
            raise ValueError(f"power_bonds: unknown subsystem in {name!r} (known: {system.names})")
        s = system[sub]
        hits = []
        for kind in ("y", "u"):
            try:
                hits.append((kind, s.signal_index(kind, sig)))
            except ValueError:
                pass
        if not hits:
            raise ValueError(f"power_bonds: unknown signal {name!r}; {sub} has outputs {s.signal_names('y')} and "
                             f"inputs {s.signal_names('u')}")
        if len(hits) > 1:
            raise ValueError(f"power_bonds: {name!r} names both an output and an input; use {sub}.y[j] or {sub}.u[a]")
        kind, j = hits[0]
        i = system.index(sub)
        if kind == "y":
            return int(system.out_offset[i] + j), sub
        return -int(system.in_offset[i] + j) - 1, sub

    def _spec(self, system):
        off, sig = [0], []
        for parts in self.power_bonds:
            subs = [set(), set(), set(), set()]
            for d in range(len(parts[0])):
                for q in range(4):
                    code, sub = self._resolve(system, parts[q][d])
                    sig.append(code)
                    subs[q].add(sub)
            side_a, side_b = subs[0] | subs[1], subs[2] | subs[3]
            if len(side_a) != 1 or len(side_b) != 1:
                raise ValueError(f"power_bonds: each side of a bond must belong to one subsystem, got "
                                 f"{sorted(side_a)} and {sorted(side_b)}")
            if side_a == side_b:
                raise ValueError(f"power_bonds: both sides of a bond are {sorted(side_a)[0]!r}; a bond couples two "
                                 "subsystems")
            off.append(len(sig) // 4)
        return dict(kind="ecco", bond_off=np.array(off, dtype=np.int64), sig=np.array(sig, dtype=np.int64),
                    rtol=self.rtol, atol=self.atol, safety=self.safety, kP=self.kP, kI=self.kI, H_min=self.H_min,
                    H_max=self.H_max, r_min=self.r_min, r_max=self.r_max, reject=int(self.reject))

    def bond_names(self):
        return [" * ".join(p[0]) + " | " + " * ".join(p[2]) if len(p[0]) == 1 else f"bond{k}"
                for k, p in enumerate(self.power_bonds)]


def run_options(system, coupling, step_control, H):
    """Engine options of the balance correction / ECCO (validated; raises ValueError/TypeError naming the
    argument)."""
    opts = {"balance": None}
    if coupling is not None:
        if not isinstance(coupling, BalanceCorrection):
            raise TypeError(f"coupling: expected None or cosim.BalanceCorrection(...), got {type(coupling).__name__}")
        opts["balance"], opts["balance_corrected"] = coupling._spec(), coupling._corrected(system)
    if step_control is not None:
        if not isinstance(step_control, ECCO):
            raise TypeError(f"step_control: expected None or cosim.ECCO(...), got {type(step_control).__name__}")
        if not step_control.H_min <= H <= step_control.H_max:
            raise ValueError(f"H: the first step H = {H!r} must lie in [H_min, H_max] = "
                             f"[{step_control.H_min!r}, {step_control.H_max!r}]")
        opts["step_control"] = step_control._spec(system)
    return opts


def result_fields(raw, system, coupling=None, step_control=None):
    """What a run with a balance correction or ECCO adds to its :class:`cosim.Result`: ``balance_t`` and
    ``balance_error`` (dict input name -> cumulative imbalance), ``energy_t``, ``energy_residual`` and
    ``step_sizes`` (the accepted macro steps), as a dict of the fields present."""
    fields = {}
    bt, bv = raw.get("balance_t"), raw.get("balance")
    if bt is not None and coupling is not None:
        names = system.signal_names("u")
        fields.update(balance_t=np.asarray(bt),
                      balance_error={names[a]: np.asarray(bv)[:, a] for a in coupling._tracked(system)})
    et, ev = raw.get("ecco_t"), raw.get("ecco")
    if et is not None and step_control is not None:
        et = np.asarray(et)
        fields.update(energy_t=et[1:], step_sizes=np.diff(et), energy_residual=np.asarray(ev)[1:])
    return fields


def smooth_option(approx, coupling=None, step_control=None, iterative=None):
    """Engine flag of the quintic switch smoothing (moshagen §2.2.5; ``approximation=cosim.ZOH(smooth=True)``,
    ``Lagrange(k, smooth=True)``, ``Hermite(k, smooth=True)``); raises ValueError naming the argument where it does
    not combine."""
    if not getattr(approx, "smooth", False):
        return 0
    if coupling is not None:
        raise ValueError(f"approximation: smoothing wraps the signal-based coupling; not with coupling={coupling!r} "
                         "(cosim.BalanceCorrection combines)")
    if step_control is not None:
        raise ValueError("approximation: smoothing does not combine with cosim.StepControl (it varies the degree of "
                         "the unsmoothed polynomials)")
    if iterative is not None:
        raise ValueError(f"approximation: smoothing does not combine with {type(iterative).__name__}")
    return 1
