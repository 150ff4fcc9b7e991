"""Oscillator chains: chain-structured multibody systems of kraft2021 §3 (thesis Sec. 2.2-2.3), cut into
subsystems by force/force decomposition.

n_K point masses m_i on a line, element i (i = 1 … n_K+1) between body i−1 and body i (body 0 and body n_K+1 are
the walls). Element law (2.9)::

    F_SD,i = c_i Δx + d_i Δv + C_i sgn(Δx)|Δx|^{e_x,i} + D_i sgn(Δv)|Δv|^{e_v,i},   Δx = x_i − x_{i−1}

and m_i v̇_i = −F_SD,i + F_SD,i+1 + F_EXT,i (2.15) with the external forces (2.11)-(2.14): harmonic, modified sine
(integer power A_S), contact A_C exp(B_C x_i) (overflow-safe), impulses.

Force/force decomposition (§3.2): the chain is cut through n_s − 1 elements; the forces λ_L of the cut elements are
the coupling variables (inputs), the coupling bodies' states y_L = (x_1, x_n, v_1, v_n) the outputs (no
feed-through). A linear cut element is the linear coupling condition u = L y (connections); a nonlinear one is a
zero-state coupling-element subsystem ``K<L>`` (inputs: the two coupling bodies' x and v; output λ_L), so the
consistent update evaluates λ_{N+1} = φ(y_{N+1}) (2.26) exactly and the approximation extrapolates λ itself.

Each subsystem is one C model (``chain_segment``, csrc/models/chain.c) with interleaved states
(x_i, v_i) per body, named by global body number: ``res["S2.x7"]``.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import _check
from ..system import BuiltinModel, CoupledSystem, connect

_FORCE_KINDS = ("harmonic", "sine", "contact", "impulse")


class Uniform:
    """Random values uniform in [low, high] (kraft2021 §18 "[a, b]"), drawn from the chain's ``seed``; with
    ``signed=True`` each value gets a random sign (the thesis' "±[a, b]")."""

    def __init__(self, low, high, signed=False):
        low, high = _check.real(low, "Uniform.low"), _check.real(high, "Uniform.high")
        if not low <= high:
            raise ValueError(f"Uniform: need low <= high, got [{low}, {high}]")
        self.low, self.high, self.signed = low, high, bool(signed)

    def draw(self, rng, n):
        v = rng.uniform(self.low, self.high, n)
        if self.signed:
            v = v * rng.choice((-1.0, 1.0), n)
        return v

    def __repr__(self):
        return f"Uniform({self.low}, {self.high}{', signed=True' if self.signed else ''})"


def _per(name, value, n, rng, first=1, positive=False, nonneg=False):
    """A per-body/per-element parameter: a number, an array of n values, a callable f(i) of the 1-based index
    (vectorised over an index array, or called per index) or a :class:`Uniform`."""
    idx = np.arange(first, first + n)
    if isinstance(value, Uniform):
        a = value.draw(rng, n)
    elif callable(value):
        try:
            a = np.asarray(value(idx), dtype=float)
            if a.shape != (n,):
                a = np.broadcast_to(a, (n,)).astype(float) if a.ndim == 0 else None
        except Exception:
            a = None
        if a is None:
            try:
                a = np.array([float(value(int(i))) for i in idx])
            except Exception as e:
                raise TypeError(f"{name}: the callable failed for index arrays and single indices: {e}") from None
    else:
        if isinstance(value, (str, bytes, bool, np.bool_)) or value is None:
            raise TypeError(f"{name}: expected a number, an array, a callable or cosim.models.Uniform, got {value!r}")
        if isinstance(value, numbers.Real):
            value = _check.real(value, name)
        try:
            a = np.asarray(value, dtype=float)
        except OverflowError:
            raise ValueError(f"{name}: must be finite (an integer beyond the double range)") from None
        except (TypeError, ValueError):
            raise TypeError(f"{name}: expected real numbers, got {value!r}") from None
        if a.ndim == 0:
            a = np.full(n, float(a))
        elif a.shape != (n,):
            raise ValueError(f"{name}: expected one value or {n} values, got shape {a.shape}")
    a = np.array(a, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    if positive and not np.all(a > 0):
        raise ValueError(f"{name}: must be positive (index {int(idx[np.argmin(a > 0)])} is {a[np.argmin(a > 0)]})")
    if nonneg and not np.all(a >= 0):
        raise ValueError(f"{name}: must be non-negative")
    return a


def _sizes(n, n_s, cuts, sizes):
    if cuts is not None and sizes is not None:
        raise TypeError("cuts: give either cuts or sizes, not both")
    if sizes is not None:
        s = np.asarray(sizes)
        if s.ndim != 1 or s.size < 1 or s.dtype.kind not in "iu":
            raise ValueError(f"sizes: expected a list of positive ints, got {sizes!r}")
        if np.any(s < 1) or int(s.sum()) != n:
            raise ValueError(f"sizes: must be positive and sum to n_bodies = {n}, got {list(map(int, s))}")
        return [int(v) for v in s]
    if cuts is not None:
        c = np.asarray(cuts)
        if c.ndim != 1 or (c.size and c.dtype.kind not in "iu"):
            raise ValueError(f"cuts: expected a list of element indices (ints), got {cuts!r}")
        c = np.sort(c.astype(np.int64))
        if c.size and (c[0] < 2 or c[-1] > n):
            raise ValueError(f"cuts: element indices must be in 2..n_bodies = 2..{n} (element i connects bodies i-1 "
                             f"and i), got {list(map(int, c))}")
        if np.any(np.diff(c) == 0):
            raise ValueError("cuts: repeated element index")
        b = np.concatenate([[1], c, [n + 1]])
        return [int(v) for v in np.diff(b)]
    base, rem = divmod(n, n_s)
    return [base + (1 if L < rem else 0) for L in range(n_s)]


def _forces(forces, n, rng):
    """Expand the force specs into per-kind lists of (body, params...) rows (bodies 1-based)."""
    out = {k: [] for k in _FORCE_KINDS}
    if forces is None:
        return out
    if isinstance(forces, dict):
        forces = [forces]
    for q, f in enumerate(forces):
        name = f"forces[{q}]"
        if not isinstance(f, dict):
            raise TypeError(f"{name}: expected a dict like {{'kind': 'harmonic', 'bodies': [50], ...}}")
        kind = f.get("kind")
        if kind not in _FORCE_KINDS:
            raise ValueError(f"{name}: kind must be one of {_FORCE_KINDS}, got {kind!r}")
        allowed = {"kind", "bodies", "fraction"} | {
            "harmonic": {"amplitude", "omega", "phase"}, "sine": {"amplitude", "omega", "phase", "power"},
            "contact": {"A", "B"}, "impulse": {"amplitude", "times", "duration", "width"}}[kind]
        unknown = set(f) - allowed
        if unknown:
            raise ValueError(f"{name}: unknown keys {sorted(unknown)} for a {kind} force (allowed: {sorted(allowed)})")
        if "bodies" in f and "fraction" in f:
            raise ValueError(f"{name}: give bodies or fraction, not both")
        if "fraction" in f:
            fr = _check.real(f["fraction"], f"{name}.fraction")
            if not 0 < fr <= 1:
                raise ValueError(f"{name}.fraction: must be in (0, 1], got {fr}")
            k = max(1, int(round(fr * n)))
            bodies = np.sort(rng.choice(np.arange(1, n + 1), size=k, replace=False))
        else:
            b = f.get("bodies", "all")
            bodies = np.arange(1, n + 1) if isinstance(b, str) and b == "all" else np.atleast_1d(np.asarray(b))
            if bodies.dtype.kind not in "iu" or bodies.ndim != 1:
                raise ValueError(f"{name}.bodies: expected body numbers 1..{n} (ints) or 'all', got {b!r}")
            if bodies.size and (bodies.min() < 1 or bodies.max() > n):
                raise ValueError(f"{name}.bodies: body numbers must be in 1..{n}, got {list(map(int, bodies))}")
        nb = bodies.size

        def par(key, default=None, **kw):
            if key not in f:
                if default is None:
                    raise ValueError(f"{name}: missing {key!r} for a {kind} force")
                return np.full(nb, float(default))
            return _per(f"{name}.{key}", f[key], nb, rng, **kw)

        if kind == "harmonic":
            rows = np.column_stack([bodies, par("amplitude"), par("omega"), par("phase", 0.0)])
        elif kind == "sine":
            p = f.get("power", 95)
            if isinstance(p, bool) or not isinstance(p, numbers.Integral) or not 0 <= p <= 10**6:
                raise ValueError(f"{name}.power: the exponent A_S must be an int in 0..1e6 (integer power, "
                                 f"kraft2021 eq. 2.14), got {p!r}")
            rows = np.column_stack([bodies, par("amplitude"), par("omega"), par("phase", 0.0), np.full(nb, float(p))])
        elif kind == "contact":
            rows = np.column_stack([bodies, par("A"), par("B")])
        else:
            times = np.atleast_1d(np.asarray(f.get("times", None), dtype=float)) if "times" in f else None
            if times is None or times.ndim != 1 or times.size < 1 or not np.all(np.isfinite(times)):
                raise ValueError(f"{name}.times: expected a list of impulse start times t_I")
            amp = par("amplitude")
            dur = _check.real(f.get("duration", np.nan), f"{name}.duration") if "duration" in f else None
            wid = _check.real(f["width"], f"{name}.width") if "width" in f else None
            if dur is None or wid is None or dur <= 0 or wid <= 0:
                raise ValueError(f"{name}: impulses need positive 'duration' (Δt_I) and 'width' (δ_I)")
            rows = np.array([[b, a, t, dur, wid] for b, a in zip(bodies, amp) for t in times]).reshape(-1, 5)
        out[kind].append(rows)
    return out


def _chain_arrays(forces):
    return {k: (np.concatenate(v) if v else np.zeros((0, {"harmonic": 4, "sine": 5, "contact": 3,
                                                          "impulse": 5}[k]))) for k, v in forces.items()}


def oscillator_chain(n_bodies=None, n_subsystems=None, *, masses=1.0, stiffness=1.0, damping=0.0, cubic=(0.0, 0.0),
                     exponents=(3.0, 3.0), forces=None, contact=None, ends=("fixed", "fixed"), cuts=None,
                     sizes=None, x0=0.0, v0=0.0, seed=None, preset=None, **preset_options) -> CoupledSystem:
    """Oscillator chain of ``n_bodies`` = n_K masses cut into ``n_subsystems`` = n_s subsystems (kraft2021 §3).

    Parameters (per body: n_K values; per element: n_K + 1 values, element i between bodies i−1 and i; each a number,
    an array, a callable f(i) of the 1-based index, or :class:`Uniform` for random values from ``seed``):

    masses : m_i [kg] (per body).   stiffness : c_i [N/m],  damping : d_i [Ns/m] (per element).
    cubic : (C_i, D_i), the nonlinear coefficients of (2.9) (per element each).
    exponents : (e_x, e_v) of (2.9), per element each (default 3, 3: the cubic law 2.10).

    forces : list of dicts, ``{"kind": "harmonic", "bodies": [50], "amplitude": ΔF_H, "omega": Ω_H, "phase": φ_H}``,
        ``{"kind": "sine", ..., "power": A_S}`` (2.14), ``{"kind": "contact", "A": A_C, "B": B_C}`` (2.12),
        ``{"kind": "impulse", "amplitude": ΔF_I, "times": [t_I, ...], "duration": Δt_I, "width": δ_I}`` (2.13);
        ``"bodies"`` (1-based, or ``"all"``) or ``"fraction"`` (random bodies) selects where they act; amplitude,
        omega, phase, A, B accept the per-body forms above.

    contact : shortcut for one contact force dict (without ``kind``).
    ends : ("fixed" | "free", "fixed" | "free"): a free end zeroes the end element (c = d = C = D = 0, §3.1).

    cuts : element indices 2 … n_K at which the chain is cut, or ``sizes``: bodies per subsystem (unequal sizes
        allowed); default: n_s subsystems of (almost) equal size.

    x0, v0 : initial positions [m] and velocities [m/s] (per body). Positions of bodies with a contact force are
        clipped to ≤ 0 (the admissible side of the wall for A_C < 0: exp(B_C x) would overflow, §3.1).

    seed : seed of the random generator for Uniform parameters and ``fraction`` selections.
    preset : a parameter set of kraft2021 §18 (:data:`PRESETS`); the other arguments override it.

    Returns a :class:`cosim.CoupledSystem` with subsystems ``S1`` … ``S<n_s>`` (one C chain-segment model each) and,
    for nonlinear cut elements, coupling-element subsystems ``K1`` … ``K<n_s−1>``. ``system.params`` holds the
    expanded arrays (m, c, d, C, D, e_x, e_v, x0, v0, sizes, cut elements, forces) and the preset's ``t_end``;
    ``system.monitor`` the variables Kraft's estimators monitor (positions "pos" and velocities "vel" of the coupling
    bodies, the cut forces λ "u"), the default of :class:`cosim.StepControl`.
    """
    explicit = dict(n_bodies=n_bodies, n_subsystems=n_subsystems)
    t_end = None
    if preset is not None:
        if preset in PRESETS:   # sizes the preset derives its forces from (e.g. "table5.9"): give them to it
            import inspect
            accepted = inspect.signature(PRESETS[preset]).parameters
            for k, v in explicit.items():
                if v is not None and k in accepted and k not in preset_options:
                    preset_options[k] = v
        cfg = preset_config(preset, **preset_options)
        t_end = cfg.pop("t_end", None)
        given = dict(masses=masses, stiffness=stiffness, damping=damping, cubic=cubic, exponents=exponents,
                     forces=forces, contact=contact, ends=ends, cuts=cuts, sizes=sizes, x0=x0, v0=v0, seed=seed)
        defaults = dict(masses=1.0, stiffness=1.0, damping=0.0, cubic=(0.0, 0.0), exponents=(3.0, 3.0), forces=None,
                        contact=None, ends=("fixed", "fixed"), cuts=None, sizes=None, x0=0.0, v0=0.0, seed=None)
        for k, v in given.items():
            if not _same(v, defaults[k]):
                cfg[k] = v
        for k, v in explicit.items():
            if v is not None:
                cfg[k] = v
        if cfg.get("sizes") is not None and (n_subsystems is not None or cuts is not None):
            cfg.pop("sizes")
        return _build(t_end=t_end, **cfg)
    if preset_options:
        raise TypeError(f"oscillator_chain: unexpected arguments {sorted(preset_options)} (preset options need "
                        "preset=...)")
    return _build(n_bodies=n_bodies, n_subsystems=n_subsystems, masses=masses, stiffness=stiffness, damping=damping,
                  cubic=cubic, exponents=exponents, forces=forces, contact=contact, ends=ends, cuts=cuts, sizes=sizes,
                  x0=x0, v0=v0, seed=seed, t_end=None)


def _same(a, b):
    try:
        return type(a) is type(b) and bool(np.all(np.asarray(a, dtype=object) == np.asarray(b, dtype=object)))
    except Exception:
        return False


def _pair(name, v):
    if isinstance(v, (tuple, list)) and len(v) == 2:
        return v
    raise ValueError(f"{name}: expected a pair ({'C, D' if name == 'cubic' else 'e_x, e_v'}), got {v!r}")


def _build(n_bodies=None, n_subsystems=None, masses=1.0, stiffness=1.0, damping=0.0, cubic=(0.0, 0.0),
           exponents=(3.0, 3.0), forces=None, contact=None, ends=("fixed", "fixed"), cuts=None, sizes=None, x0=0.0,
           v0=0.0, seed=None, t_end=None):
    if n_bodies is None:
        raise TypeError("n_bodies: missing the number of bodies n_K (or give preset=...)")
    n = _check.integer(n_bodies, "n_bodies", 1, 1 << 22)
    if n_subsystems is None:
        n_s = len(sizes) if sizes is not None else (len(cuts) + 1 if cuts is not None else 1)
    else:
        n_s = _check.integer(n_subsystems, "n_subsystems", 1)
        if n_s > n:
            raise ValueError(f"n_subsystems: n_s = {n_s} is more than n_bodies = {n} (at least one body per subsystem)")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
    rng = np.random.default_rng(seed)
    sz = _sizes(n, n_s, cuts, sizes)
    if n_subsystems is not None and len(sz) != n_s:
        raise ValueError(f"n_subsystems: {n_s} does not match the {len(sz)} subsystems that cuts/sizes define")
    n_s = len(sz)
    m = _per("masses", masses, n, rng, positive=True)
    c = _per("stiffness", stiffness, n + 1, rng)
    d = _per("damping", damping, n + 1, rng)
    C, D = (_per(f"cubic[{k}]", v, n + 1, rng) for k, v in enumerate(_pair("cubic", cubic)))
    ex, ev = (_per(f"exponents[{k}]", v, n + 1, rng, positive=True) for k, v in enumerate(_pair("exponents",
                                                                                                 exponents)))
    if not (isinstance(ends, (tuple, list)) and len(ends) == 2 and all(e in ("fixed", "free") for e in ends)):
        raise ValueError(f"ends: expected a pair of 'fixed'/'free', got {ends!r}")
    for side, e in zip((0, n), ends):
        if e == "free":
            c[side] = d[side] = C[side] = D[side] = 0.0
    xs = _per("x0", x0, n, rng)
    vs = _per("v0", v0, n, rng)
    flist = list(forces) if isinstance(forces, (list, tuple)) else ([] if forces is None else [forces])
    if contact is not None:
        if not isinstance(contact, dict):
            raise TypeError(f"contact: expected a dict {{'bodies': [...], 'A': A_C, 'B': B_C}}, got {contact!r}")
        flist.append(dict(contact, kind="contact"))
    F = _chain_arrays(_forces(flist, n, rng))
    if F["contact"].size:
        cb = F["contact"][:, 0].astype(int) - 1
        xs[cb] = np.minimum(xs[cb], 0.0)
    starts = np.concatenate([[0], np.cumsum(sz)])       # 0-based first body of each subsystem
    cut_elements = [int(s) + 1 for s in starts[1:-1]]   # element index (1-based) of each cut
    subs, conns = [], []
    for L in range(n_s):
        a, b = int(starts[L]), int(starts[L + 1])       # bodies a+1 .. b (1-based)
        nl = b - a
        lcut, rcut = int(L > 0), int(L < n_s - 1)
        parts = [[nl, lcut, rcut]]
        rows = {}
        for k in _FORCE_KINDS:
            r = F[k]
            sel = r[(r[:, 0] > a) & (r[:, 0] <= b)].copy() if r.size else r
            if sel.size:
                sel[:, 0] -= a
            rows[k] = sel
        parts[0] += [len(rows[k]) for k in _FORCE_KINDS]
        el = slice(a, b + 1)                             # elements a+1 .. b+1 (0-based a .. b)
        parts += [m[a:b], c[el], d[el], C[el], D[el], ex[el], ev[el]] + [rows[k].reshape(-1) for k in _FORCE_KINDS]
        params = np.concatenate([np.asarray(p, dtype=float).reshape(-1) for p in parts])
        states = [f"{q}{i}" for i in range(a + 1, b + 1) for q in ("x", "v")]
        inputs = (["lam_left"] if lcut else []) + (["lam_right"] if rcut else [])
        z0 = np.column_stack([xs[a:b], vs[a:b]]).reshape(-1)
        subs.append(BuiltinModel("chain_segment", params, nx=2 * nl, nu=lcut + rcut, ny=4, x0=z0, name=f"S{L + 1}",
                                 feedthrough=False, inputs=inputs, outputs=["xl", "xr", "vl", "vr"], states=states,
                                 units=_units(states + inputs + ["xl", "xr", "vl", "vr"])))
    elements = []
    for L in range(n_s - 1):
        e = cut_elements[L] - 1                          # 0-based element index
        left, right = f"S{L + 1}", f"S{L + 2}"
        if C[e] == 0.0 and D[e] == 0.0:
            # linear cut element: λ_L = c_c (x_R − x_L) + d_c (v_R − v_L), a linear coupling condition
            for dst in (f"{left}.lam_right", f"{right}.lam_left"):
                conns += [connect(f"{right}.xl", dst, c[e]), connect(f"{left}.xr", dst, -c[e]),
                          connect(f"{right}.vl", dst, d[e]), connect(f"{left}.vr", dst, -d[e])]
        else:
            k = f"K{L + 1}"
            elements.append(BuiltinModel("chain_element", [c[e], d[e], C[e], D[e], ex[e], ev[e]], nx=0, nu=4, ny=1,
                                         name=k, feedthrough=True, inputs=["xL", "vL", "xR", "vR"], outputs=["lam"],
                                         units=_units(["xL", "vL", "xR", "vR", "lam"])))
            conns += [connect(f"{left}.xr", f"{k}.xL"), connect(f"{left}.vr", f"{k}.vL"),
                      connect(f"{right}.xl", f"{k}.xR"), connect(f"{right}.vl", f"{k}.vR"),
                      connect(f"{k}.lam", f"{left}.lam_right"), connect(f"{k}.lam", f"{right}.lam_left")]
    system = CoupledSystem(subs + elements, conns)
    system.params = dict(n_bodies=n, n_subsystems=n_s, sizes=list(sz), cut_elements=cut_elements, m=m, c=c, d=d,
                         C=C, D=D, e_x=ex, e_v=ev, x0=xs, v0=vs, forces=F, ends=tuple(ends), seed=seed, t_end=t_end)
    # Kraft's monitored variables (§9, §17 Z^coup): positions and velocities of the coupling bodies, and λ
    mon = {"pos": [], "vel": [], "u": []}
    for L in range(n_s):
        a, b = int(starts[L]), int(starts[L + 1])
        for body in sorted({a + 1, b} if n_s > 1 else set()):
            if (body == a + 1 and L > 0) or (body == b and L < n_s - 1):
                mon["pos"].append(f"S{L + 1}.x{body}")
                mon["vel"].append(f"S{L + 1}.v{body}")
        mon["u"] += [f"S{L + 1}.{i}" for i in (["lam_left"] if L > 0 else []) + (["lam_right"] if L < n_s - 1
                                                                               else [])]
    system.monitor = mon
    return system


def _units(names):
    """Units of chain signal names: positions x… [m], velocities v… [m/s], cut forces lam… [N]."""
    return {n: "N" if n.startswith("lam") else "m/s" if n.startswith("v") else "m" for n in names}


def chain_states(system, X):
    """Positions and velocities (n_t x n_K each) of all bodies from the stacked states X of a chain result (the
    segments' interleaved (x_i, v_i) states in chain order; coupling elements have none)."""
    X = np.asarray(X)
    n = system.params["n_bodies"]
    Z = X[..., : 2 * n].reshape(X.shape[:-1] + (n, 2))
    return Z[..., 0], Z[..., 1]


def coupling_bodies(system):
    """1-based numbers of the coupling bodies (the two bodies at each cut, in chain order): Z^coup of §17."""
    out = []
    for e in system.params["cut_elements"]:
        out += [e - 1, e]
    return out


# --------------------------------------------------------------------------------------------------------------
# Parameter sets of kraft2021 §18 (thesis Tables 4.2, 5.1, 5.3, 5.4, 5.5, 5.7, 5.8, 5.9) and §13.3 (Table A.4)

def _c_table54(i):
    return 2.0e11 * (1.0 + 9.0 * np.sin(0.3142 * ((np.asarray(i) - 1) % 10)))


def _alternating_sizes(n_large, n_small, count=11):
    return [n_large if L % 2 == 0 else n_small for L in range(count)]


def preset_config(name, **options):
    """The keyword arguments of :func:`oscillator_chain` for a §18 parameter set (see :data:`PRESETS`), plus the
    thesis' simulated time ``t_end``. ``options`` are the preset's own options (e.g. ``linear=True``,
    ``n_subsystems`` for "table5.4", ``scale`` for "table5.5")."""
    if name not in PRESETS:
        raise ValueError(f"preset: unknown preset {name!r}; known: {sorted(PRESETS)}")
    return PRESETS[name](**options)


def _t51(linear=False):
    """Table 5.1 (Sec. 5.1, convergence analysis): n_K = 50, n_s = 10, e_x = 6, free right end, harmonic force on
    m_50. ``linear=True``: C_i = D_i = 0. ICs zero (unspecified in the thesis)."""
    return dict(n_bodies=50, n_subsystems=10, masses=10.0, stiffness=1e6, damping=1e2,
                cubic=(0.0, 0.0) if linear else (1e12, 1.0), exponents=(6.0, 3.0), ends=("fixed", "free"),
                forces=[dict(kind="harmonic", bodies=[50], amplitude=5e7, omega=5e2, phase=0.0)], t_end=0.25)


def _t53(seed=1):
    """Table 5.3 (Sec. 5.3, safety factor): n_K = 150, n_s = 15, modified sine (A_S = 95) on 50 % of the bodies,
    ΔF_S = ±[1e6, 1e7] N, Ω_S ∈ [5e2, 5e3] 1/s. ICs zero (unspecified)."""
    return dict(n_bodies=150, n_subsystems=15, masses=5e-2, stiffness=2.5e6, damping=2.5e1, cubic=(1e10, 1e-4),
                forces=[dict(kind="sine", fraction=0.5, amplitude=Uniform(1e6, 1e7, signed=True),
                             omega=Uniform(5e2, 5e3), phase=0.0, power=95)], seed=seed, t_end=0.1)


def _t54(n_subsystems=100):
    """Table 5.4 (Sec. 5.4(1)): linear chain n_K = 1000 with the half-sine stiffness pattern
    c_i = 2e11 (1 + 9 sin(0.3142 ((i − 1) mod 10))) N/m, m_i = 7.5e-4 kg, d_i = 2.5e4 Ns/m, free right end,
    x_i0 = i·3e-7 m, cut at the softest elements (n_s = 5 or 100: equal sizes, cuts at elements 10k + 1)."""
    return dict(n_bodies=1000, n_subsystems=n_subsystems, masses=7.5e-4, stiffness=_c_table54, damping=2.5e4,
                ends=("fixed", "free"), x0=lambda i: 3.0e-7 * np.asarray(i, dtype=float), v0=0.0, t_end=1e-3)


def _t55(scale=1, repartitioned=False, seed=1):
    """Table 5.5 (Sec. 5.4(2)): n_K = 290·scale in 11 subsystems, 40·scale bodies of 10 kg (odd subsystems) and
    10·scale of 0.1 kg (even); c = 1e7, d = 1e3, C = 1e14, D = 1e4; x0 ∈ [−1e-4, 1e-4] m, v0 ∈ [−1e-2, 1e-2] m/s;
    modified sine on a random 20 % of the bodies, ΔF_S = ±[1e5, 1e6] N, Ω_S ∈ [7.5e2, 1e3] 1/s, A_S = 95.
    ``repartitioned=True``: one 10-kg body from each large subsystem moved into each neighbouring small one
    (coupling-body mass ratio 1 instead of 100)."""
    big, small = 40 * scale, 10 * scale
    sizes = _alternating_sizes(big, small)
    masses = np.concatenate([np.full(s, 10.0 if L % 2 == 0 else 0.1) for L, s in enumerate(sizes)])
    if repartitioned:
        sizes = [big - 1 if L in (0, 10) else (big - 2 if L % 2 == 0 else small + 2) for L in range(11)]
    return dict(n_bodies=int(sum(sizes)), sizes=sizes, masses=masses, stiffness=1e7, damping=1e3,
                cubic=(1e14, 1e4), x0=Uniform(-1e-4, 1e-4), v0=Uniform(-1e-2, 1e-2),
                forces=[dict(kind="sine", fraction=0.2, amplitude=Uniform(1e5, 1e6, signed=True),
                             omega=Uniform(7.5e2, 1e3), phase=0.0, power=95)], seed=seed, t_end=1.0)


def _t58(n_bodies=100, seed=1):
    """Table 5.8 (Sec. 5.7, scaling order): n_s = 10, m = 10 kg, c = 1e5, d = 1, C = 1e9, D = 1e4;
    x0 ∈ [−1, 1] m, v0 ∈ [−1e2, 1e2] m/s; modified sine on a random 10 %: ΔF_S = ±[1e7, 1e8] N, Ω_S = 50 1/s."""
    return dict(n_bodies=n_bodies, n_subsystems=10, masses=10.0, stiffness=1e5, damping=1.0, cubic=(1e9, 1e4),
                x0=Uniform(-1.0, 1.0), v0=Uniform(-1e2, 1e2),
                forces=[dict(kind="sine", fraction=0.1, amplitude=Uniform(1e7, 1e8, signed=True), omega=50.0,
                             power=95)], seed=seed, t_end=1.0)


def _t57(n_bodies=100_000, n_subsystems=100, contacts=False, seed=1):
    """Sec. 5.6 (Table 5.7, number of subsystems and large models). The thesis keeps n_K ∈ {1e5, 1e6, 1e7},
    harmonic forces (2.11) on every body with random ΔF_H,i, Ω_H,i, and, with ``contacts=True``, contacts (2.12)
    A_C = −1.0e-2 N, B_C = 2.5e4 1/m on a random 0.3 % of the bodies; Table 5.7 itself is lost (kraft2021 §22
    item 8). Chosen here: the element and mass parameters of the thesis' other large homogeneous chain (Table 4.2:
    m = 5e-2 kg, c = 2.5e9 N/m, d = 2.5e2 Ns/m, C = 1e17 N/m³, D = 1e-1 Ns³/m³), ΔF_H,i = ±[3e3, 3e4] N,
    Ω_H,i ∈ [1e3, 1e4] 1/s, φ_H = 0, the chain at rest at t = 0 and t_sim = 1e-3 s (Table 4.2's). With these the
    monolithic CVODE-BDF (rtol 1e-6, atol 1e-9) takes a mean step of ≈ 6e-7 s (thesis: h̄ = 1.34e-6 s at
    n_K = 1e6) and the contact bodies reach x ≈ 5e-4 m, where the contact force A_C exp(B_C x) ≈ 1e4 N is of the
    order of the harmonic forces. ``n_subsystems`` was varied in the thesis (e.g. 383 and 1007)."""
    forces = [dict(kind="harmonic", bodies="all", amplitude=Uniform(3e3, 3e4, signed=True), omega=Uniform(1e3, 1e4),
                   phase=0.0)]
    if contacts:
        forces.append(dict(kind="contact", fraction=0.003, A=-1.0e-2, B=2.5e4))
    return dict(n_bodies=n_bodies, n_subsystems=n_subsystems, masses=5e-2, stiffness=2.5e9, damping=2.5e2,
                cubic=(1e17, 1e-1), x0=0.0, v0=0.0, forces=forces, seed=seed, t_end=1e-3)


def _t42(n_bodies=20000, contacts=False, seed=1):
    """Sec. 4.5 (Table 4.2): homogeneous chain n_K = 20 000, n_s = 10, m = 5e-2 kg, c = 2.5e9, d = 2.5e2,
    C = 1e17, D = 1e-1; x0 ∈ [−1e-4, 1e-4] m, v0 ∈ [−1, 1] m/s. ``contacts=True``: contacts (A_C = −1e-2 N,
    B_C = 1e7 1/m) on every body of subsystems 4 and 8 (which bodies is unspecified in the thesis)."""
    cfg = dict(n_bodies=n_bodies, n_subsystems=10, masses=5e-2, stiffness=2.5e9, damping=2.5e2, cubic=(1e17, 1e-1),
               x0=Uniform(-1e-4, 1e-4), v0=Uniform(-1.0, 1.0), seed=seed, t_end=1e-3)
    if contacts:
        base, rem = divmod(n_bodies, 10)
        starts = np.cumsum([0] + [base + (1 if L < rem else 0) for L in range(10)])
        bodies = np.concatenate([np.arange(starts[L] + 1, starts[L + 1] + 1) for L in (3, 7)])
        cfg["contact"] = dict(bodies=bodies, A=-1e-2, B=1e7)
    return cfg


def _t59(n_bodies=1000, n_subsystems=10, seed=1):
    """Sec. 5.8 (Table 5.9), scaled down (T21): m = 0.05 kg, c = 2.5e9 N/m, d = 250 Ns/m, C = 1e19 N/m³,
    D = 5e4 Ns³/m³; x0 ∈ [−1e-5, 1e-5] m, v0 ∈ [−0.1, 0.1] m/s; impulses ΔF_I = (−1)^{i+1} 1e6 N on the coupling
    bodies (i in chain order: every cut element is compressed) at t_I = 1e-4, 0.1, …, 0.9 s, Δt_I = 1e-3 s,
    δ_I = 1e-6 s."""
    base, rem = divmod(n_bodies, n_subsystems)
    starts = np.cumsum([0] + [base + (1 if L < rem else 0) for L in range(n_subsystems)])
    cb = [b for s in starts[1:-1] for b in (int(s), int(s) + 1)]
    amp = np.array([(-1.0) ** k for k in range(len(cb))]) * 1e6
    times = [1e-4] + [0.1 * k for k in range(1, 10)]
    return dict(n_bodies=n_bodies, n_subsystems=n_subsystems, masses=0.05, stiffness=2.5e9, damping=250.0,
                cubic=(1e19, 5e4), x0=Uniform(-1e-5, 1e-5), v0=Uniform(-0.1, 0.1),
                forces=[dict(kind="impulse", bodies=cb, amplitude=amp, times=times, duration=1e-3, width=1e-6)]
                if cb else None, seed=seed, t_end=1.0)


def _tA4(n_bodies=15_000, n_subsystems=15, masses=1e-2, seed=1):
    """App. A Ex. 3 (Table A.4, kraft2021 §13.3; sap against fd): n_K = 15 000, n_s = 15, c = 1e6 N/m,
    d = 1e4 Ns/m, C = 1e11 N/m³, D = 1e-2 Ns³/m³, one mass for all bodies (the thesis varies it from 1e-2 down to
    1e-4 kg); x0 ∈ [−0.1, 0.1] m, v0 ∈ [−1e3, 1e3] m/s; a random half of the bodies carries a modified sine
    (A_S = 95) of ±1e8 N with Ω_S ∈ [5e3, 1e4] 1/s, the other half one impulse of ±1e8 N at a random
    t_I ∈ [0, t_sim], Δt_I = 1e-3 s, δ_I = 1e-6 s; t_sim = 0.1 s."""
    n = _check.integer(n_bodies, "n_bodies", 1, 1 << 22)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise ValueError(f"seed: expected a non-negative int or None, got {seed!r}")
    rng = np.random.default_rng(None if seed is None else [seed, 4])   # the split of the bodies and the t_I
    order = rng.permutation(np.arange(1, n + 1))
    sine, impulse = np.sort(order[: n // 2]), np.sort(order[n // 2:])
    t_end = 0.1
    forces = [dict(kind="sine", bodies=sine, amplitude=Uniform(1e8, 1e8, signed=True), omega=Uniform(5e3, 1e4),
                   phase=0.0, power=95)] if sine.size else []
    forces += [dict(kind="impulse", bodies=[int(b)], amplitude=Uniform(1e8, 1e8, signed=True), times=[t_I],
                    duration=1e-3, width=1e-6) for b, t_I in zip(impulse, rng.uniform(0.0, t_end, impulse.size))]
    return dict(n_bodies=n, n_subsystems=n_subsystems, masses=masses, stiffness=1e6, damping=1e4,
                cubic=(1e11, 1e-2), x0=Uniform(-0.1, 0.1), v0=Uniform(-1e3, 1e3), forces=forces, seed=seed,
                t_end=t_end)


def _tA3(n_bodies=100, n_subsystems=20, damping_ratio=1e-3):
    """App. A Ex. 1 (Table A.3, kraft2021 §13.4; sap against fd): a steel rod of length 0.20 m, radius 0.01 m,
    density 7.85e3 kg/m³ (mass 4.93e-1 kg), Young's modulus 2.10e11 N/m², lumped into n_K equal masses
    m_i = ρπr²L/n_K joined by n_K elements of length L/n_K, c_i = Eπr²n_K/L (n_K = 100: 4.93e-3 kg, 3.30e10 N/m),
    d_i = 2 D √(c_i m_i) with the damping ratio D (thesis 1.00e-3; the damping sweep of Fig. A.13 varies it), cut
    into 20 equal subsystems. Fixed at body 0, free after body n_K, at rest at t = 0; the impulse
    ΔF_I = −5.0e5 N, t_I = 5.0e-7 s, Δt_I = 5.0e-5 s, δ_I = 1.0e-7 s acts on the last mass. The thesis leaves the
    boundary conditions and t_sim open: fixed/free as chosen, t_sim = 1e-4 s (the impulse and the return of the
    compression wave, L/√(E/ρ) = 3.9e-5 s)."""
    n = _check.integer(n_bodies, "n_bodies", 1, 1 << 22)
    D = _check.real(damping_ratio, "damping_ratio", nonneg=True)
    length, radius, rho, young = 0.20, 0.01, 7.85e3, 2.10e11
    area = np.pi * radius ** 2
    m = rho * area * length / n
    c = young * area * n / length
    return dict(n_bodies=n, n_subsystems=n_subsystems, masses=m, stiffness=c, damping=2.0 * D * np.sqrt(c * m),
                ends=("fixed", "free"), x0=0.0, v0=0.0, t_end=1e-4,
                forces=[dict(kind="impulse", bodies=[n], amplitude=-5.0e5, times=[5.0e-7], duration=5.0e-5,
                             width=1.0e-7)])


#: The §18 parameter sets by name: "table5.1" (options: linear), "table5.3" (seed), "table5.4" (n_subsystems),
#: "table5.5" (scale, repartitioned, seed), "table5.7" (n_bodies, n_subsystems, contacts, seed; Sec. 5.6, the
#: lost table's values chosen), "table5.8" (n_bodies, seed), "table4.2" (n_bodies, contacts, seed), "table5.9"
#: (n_bodies, n_subsystems, seed), "tableA.3" (n_bodies, n_subsystems, damping_ratio; App. A Ex. 1, the steel
#: rod), "tableA.4" (n_bodies, n_subsystems, masses, seed; App. A Ex. 3).
PRESETS = {"table5.1": _t51, "table5.3": _t53, "table5.4": _t54, "table5.5": _t55, "table5.7": _t57,
           "table5.8": _t58, "table4.2": _t42, "table5.9": _t59, "tableA.3": _tA3,
           "tableA.4": _tA4}
