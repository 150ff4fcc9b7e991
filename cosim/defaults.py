"""Defaults shared by :func:`cosim.simulate` and :mod:`cosim.analysis` (one place, so that the same call pattern
means the same co-simulation in both).

* ``SCHEME = "jacobi"``: all subsystems integrate in parallel with extrapolated inputs (genser2020 §1.1, the
  FMI-style baseline).
* ``approximation()`` = :class:`cosim.ZOH`: inputs held constant over each macro step [T_N, T_{N+1}].
* ``UPDATE = "consistent"``: the coupling conditions u = L y + r are solved at every macro point T_N
  (kraft2021 eq. 2.22).
* ``DIVERGENCE_GROWTH = math.inf`` and ``DIVERGENCE_WINDOW = 0.2``: by default a run raises
  :class:`cosim.DivergenceError` only for a non-finite value or a state beyond the absolute ``divergence_bound``;
  whether the coupling was stable is the run's verdict (:mod:`cosim.verdict`: ``res.status``, ``res.message``, a
  :class:`cosim.CouplingInstabilityWarning`). A finite factor (``cosim.defaults.DIVERGENCE_GROWTH = 1e3``, or
  ``divergence_growth=1e3`` for one run) also raises when a state or output grows, after the first 20 % of the
  run, to more than that factor times its amplitude in the first 20 % (:func:`cosim.metrics.divergence`; a
  forced response that grows physically trips it too).
* ``STABILITY_WINDOW = 0.2``: the windows of genser2020's amplitude rule (§11.3): a run is unstable if, for a
  coupled output, max |y| over the last 20 % of the run exceeds max |y| over the first 20 %.
* ``LAST_STEP = "error"``: :func:`cosim.simulate` refuses a t_end that is not a multiple of H (pass
  ``last_step="shorten"`` to accept a shortened last macro step).
"""
from __future__ import annotations

import math

SCHEME = "jacobi"
UPDATE = "consistent"
DIVERGENCE_GROWTH = math.inf
DIVERGENCE_WINDOW = 0.2
STABILITY_WINDOW = 0.2
LAST_STEP = "error"
LAST_STEPS = ("error", "shorten")


def approximation():
    """A fresh default approximation object (ZOH, i.e. Lagrange with k = 0)."""
    from .approximations import ZOH
    return ZOH()
