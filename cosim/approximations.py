"""Approximations of the coupling variables between macro points (how a subsystem sees its inputs).

All are polynomials on each macro step [T_N, T_{N+1}] built from the exchanged outputs y at past macro points
(busch2016.md §2, kraft2021.md §4, moshagen.md §2.2). Non-equidistant macro grids are supported; while the history
is shorter than the degree needs (start-up), the degree is reduced.
"""
from __future__ import annotations

_KIND_LAGRANGE, _KIND_C0, _KIND_C1, _KIND_HERMITE = 0, 1, 2, 3
MAXDEG = 5


def _check_degree(k, kmax, what):
    if isinstance(k, bool) or not isinstance(k, int):
        raise TypeError(f"{what}: k must be an int, got {type(k).__name__}")
    if not 0 <= k <= kmax:
        raise ValueError(f"{what}: k must be in 0..{kmax}, got {k}")
    return k


class Approximation:
    """Base class. ``spec()`` returns the (kind, k) pair the C core understands."""

    kind = _KIND_LAGRANGE
    k = 0

    def spec(self):
        return (self.kind, self.k)

    def __eq__(self, other):
        return type(self) is type(other) and self.spec() == other.spec() and vars(self) == vars(other)

    def __hash__(self):
        return hash((type(self).__name__, self.spec()))


class Lagrange(Approximation):
    """Lagrange polynomial of degree ``k`` (κ in kraft2021, k in busch2016 eq. 11), k = 0..5.

    Extrapolation through y(T_N), y(T_{N-1}), ..., y(T_{N-k}); under Gauss-Seidel, a subsystem stepped after the
    source of a signal *interpolates* through y(T_{N+1}), ..., y(T_{N+1-k}) (busch2016 eq. 13). Local
    approximation error O(H^{k+1}); global convergence order k+1 (kraft2021 §4.1, moshagen Thm 3.6).
    """

    def __init__(self, k: int = 1):
        self.k = _check_degree(k, MAXDEG, "Lagrange")

    def __repr__(self):
        return f"Lagrange(k={self.k})"


class ZOH(Lagrange):
    """Zero-order hold: the input stays at its value from the last macro point (Lagrange with k = 0)."""

    def __init__(self):
        super().__init__(0)

    def __repr__(self):
        return "ZOH()"


class ExtrapolatedInterpolation(Approximation):
    """EXTRIPOL (busch2016 §2, eq. 12): continuous "extrapolated interpolation" of degree ``k``.

    Φ_N = P_prev(T_N) and Φ_{N+1} = P_cur(T_{N+1}) are the values of the degree-k Lagrange extrapolants of the
    previous and the current window. ``continuity=0`` (EXTRIPOL-C0) joins them linearly; ``continuity=1``
    (EXTRIPOL-C1) uses the cubic Hermite polynomial through (Φ_N, Φ̇_N, Φ_{N+1}, Φ̇_{N+1}), so the input is
    continuously differentiable across macro points. Uses the outputs at k+2 macro points. Signals that a
    Gauss-Seidel subsystem interpolates use classical Lagrange interpolation of degree k (busch2016 eq. 13).
    """

    def __init__(self, k: int = 1, continuity: int = 1):
        self.k = _check_degree(k, MAXDEG, "ExtrapolatedInterpolation")
        if continuity not in (0, 1) or isinstance(continuity, bool):
            raise ValueError(f"ExtrapolatedInterpolation: continuity must be 0 or 1, got {continuity!r}")
        self.continuity = continuity
        self.kind = _KIND_C1 if continuity == 1 else _KIND_C0

    def __repr__(self):
        return f"ExtrapolatedInterpolation(k={self.k}, continuity={self.continuity})"


class Hermite(Approximation):
    """Hermite extrapolation of degree ``k`` from output values *and* time derivatives (moshagen.md §2.2).

    k = 1 is the Taylor polynomial y(T_N) + ẏ(T_N)(t - T_N) of moshagen eq. (90); k = 2, 3 add the value (and
    derivative) at T_{N-1}. ``mode`` says how the exchanged derivative ẏ(T_N) is computed:

    * ``"consistent"``: after the values at T_N have been exchanged, from the new inputs u(T_N).
    * ``"lagged"``: with the input the subsystem saw at T_N⁻, i.e. the previous interval's approximation at T_N
      (moshagen eq. 90, the paper's own experiments).

    Derivatives come from the model's exact output derivative (LTI: ẏ = C(Ax + Bu) + D u̇) or, for user models,
    from a finite-difference directional derivative.
    """

    def __init__(self, k: int = 1, mode: str = "consistent"):
        self.k = _check_degree(k, MAXDEG, "Hermite")
        if mode not in ("consistent", "lagged"):
            raise ValueError(f"Hermite: mode must be 'consistent' or 'lagged', got {mode!r}")
        self.mode = mode
        self.kind = _KIND_HERMITE

    def __repr__(self):
        return f"Hermite(k={self.k}, mode={self.mode!r})"


def as_approximation(obj, name="approximation") -> Approximation:
    if isinstance(obj, Approximation):
        return obj
    if isinstance(obj, str):
        table = {"zoh": ZOH, "constant": ZOH}
        if obj.lower() in table:
            return table[obj.lower()]()
        raise ValueError(f"{name}: unknown approximation {obj!r}; use cosim.ZOH(), cosim.Lagrange(k), "
                         "cosim.ExtrapolatedInterpolation(k, continuity) or cosim.Hermite(k)")
    raise TypeError(f"{name}: expected a cosim approximation object, got {type(obj).__name__}")
