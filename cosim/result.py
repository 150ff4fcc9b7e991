"""Result of a (co-)simulation: arrays at the macro points, by subsystem name (like scipy's OdeResult)."""
from __future__ import annotations

import numpy as np


class Result:
    """Macro-point history of a run.

    Attributes
    ----------
    t : (n,) macro time points T_N.
    x, y, u : dict name -> (n, nx) / (n, ny) / (n, nu) arrays of states, outputs and inputs at T_N (inputs and
        outputs after the update step, i.e. the exchanged coupling values).
    stats : dict with ``macro_steps``, ``newton_iterations`` (algebraic loop), ``wall_time`` and per subsystem
        ``subsystems[name]`` = {steps, failures, rhs_calls, output_calls, jac_evals, wall_time}.
    status, message : 0 and "" on success; the partial result of a failed run carries the error.
    """

    def __init__(self, system, t, X, Y, U, stats, status=0, message="", options=None):
        self.system = system
        self.t = np.asarray(t)
        self.X, self.Y, self.U = X, Y, U  # stacked arrays
        self.x = {s.name: X[:, a:b] for s, a, b in zip(system.subsystems, system.state_offset[:-1],
                                                        system.state_offset[1:])}
        self.y = {s.name: Y[:, a:b] for s, a, b in zip(system.subsystems, system.out_offset[:-1],
                                                        system.out_offset[1:])}
        self.u = {s.name: U[:, a:b] for s, a, b in zip(system.subsystems, system.in_offset[:-1],
                                                        system.in_offset[1:])}
        self.stats = stats
        self.status = status
        self.message = message
        self.options = options or {}

    @property
    def success(self):
        return self.status == 0

    @property
    def growth(self) -> float:
        """Largest amplitude growth of a coupled output: max |y| over the last 20 % of the run divided by max |y|
        over the first 20 % (genser2020 §11.3; per signal: :func:`cosim.metrics.growth`)."""
        from . import metrics
        return metrics.max_growth(self)

    @property
    def stable(self) -> bool:
        """genser2020's 20 % amplitude rule: False if a coupled output's amplitude in the last 20 % of the run
        exceeds its amplitude in the first 20 %, if a value is not finite, or if the run diverged (the result of a
        :class:`cosim.DivergenceError`); see :func:`cosim.metrics.is_stable`."""
        from . import metrics
        return metrics.is_stable(self)

    def spectral_radius(self) -> float:
        """ρ(Ω) of one macro step (busch2016 eq. 25) with this run's scheme, approximation, update, order and H
        (:func:`cosim.analysis.spectral_radius`; all-LTI systems, exact subsystem integration assumed)."""
        from . import analysis
        return analysis.result_spectral_radius(self)

    def __repr__(self):
        return (f"Result({len(self.t)} macro points, t_end={self.t[-1] if len(self.t) else None}, "
                f"status={self.status})")

    def _reference_states(self, ref):
        """Reference states on this result's time grid (exact match of the grids, else cubic interpolation)."""
        if not isinstance(ref, Result):
            raise TypeError(f"ref: expected a cosim Result, got {type(ref).__name__}")
        if ref.X.shape[1] != self.X.shape[1]:
            raise ValueError("ref: has a different number of states (not the same system?)")
        if len(ref.t) == len(self.t) and np.allclose(ref.t, self.t, rtol=0, atol=1e-12 * max(1.0, abs(self.t[-1]))):
            return ref.X
        idx = np.searchsorted(ref.t, self.t)
        idx = np.clip(idx, 0, len(ref.t) - 1)
        tol = 1e-9 * max(1.0, abs(ref.t[-1]))
        near = np.abs(ref.t[idx] - self.t) <= tol
        idx2 = np.clip(idx - 1, 0, len(ref.t) - 1)
        near2 = np.abs(ref.t[idx2] - self.t) <= tol
        if np.all(near | near2):
            return ref.X[np.where(near, idx, idx2)]
        if self.t[0] < ref.t[0] - tol or self.t[-1] > ref.t[-1] + tol:
            raise ValueError("ref: does not cover this result's time span")
        from scipy.interpolate import CubicSpline
        return CubicSpline(ref.t, ref.X, axis=0)(self.t)

    def error_to(self, ref):
        """Error of this run against a reference (usually :func:`cosim.simulate_monolithic`), over all states.

        Returns a dict:
        ``max_abs`` (max over time and states of |x − x_ref|), ``max_rel`` (max_abs / max |x_ref|),
        ``final_abs`` (max-norm at the last macro point; moshagen.md §5), ``nrmse`` (kraft2021 eq. 5.1-5.2:
        2-norm over the states of sqrt(Σ_i (x_ref − x)² / Σ_i (x_ref − mean x_ref)²)) and ``per_subsystem``
        max_abs by name. Where the time grids differ, the reference is interpolated (cubic spline), which adds an
        interpolation error: for exact comparisons compute the reference with
        ``simulate_monolithic(system, t_end, t_eval=res.t)``."""
        Xr = self._reference_states(ref)
        E = self.X - Xr
        max_abs = float(np.max(np.abs(E))) if E.size else 0.0
        scale = float(np.max(np.abs(Xr))) if Xr.size else 0.0
        dev = np.sum((Xr - Xr.mean(axis=0)) ** 2, axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            per = np.sqrt(np.sum(E ** 2, axis=0) / dev)
        per = per[np.isfinite(per)]
        per_sub = {}
        for s, a, b in zip(self.system.subsystems, self.system.state_offset[:-1], self.system.state_offset[1:]):
            per_sub[s.name] = float(np.max(np.abs(E[:, a:b]))) if b > a and E.size else 0.0
        return dict(max_abs=max_abs, max_rel=max_abs / scale if scale > 0 else max_abs,
                    final_abs=float(np.max(np.abs(E[-1]))) if E.size else 0.0,
                    nrmse=float(np.linalg.norm(per)), per_subsystem=per_sub)
