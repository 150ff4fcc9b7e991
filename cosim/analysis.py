"""Analysis of co-simulations: everything :mod:`cosim` offers to judge a coupling, in one namespace.

* linear stability and local error of explicit schemes for LTI systems (busch2016 §3-4, kraft2021 §15):
  :func:`amplification_matrix`, :func:`recurrence`, :func:`spectral_radius`, :func:`stability_map`,
  :func:`two_mass_stability_map`, :func:`local_error`, :func:`fit_order`, :func:`result_spectral_radius`
  (defined in :mod:`cosim.stability`); :func:`spectral_radius` and :func:`amplification_matrix` also take Kraft's
  acc/accRel predictors (:class:`cosim.IntegratedAcceleration`, :class:`cosim.RelaxedAcceleration`; kraft2021 App. C),
  whose recurrence carries the accelerations (``cosim.stability_acc``);
* genser2020's stability theory of the pre-step method (§13): :func:`extrapolation_matrix`, :func:`coupele`,
  :func:`coupele_matrix`, :func:`prestep_closed_loop`, :func:`bohl_exponent`, :func:`boundedness`
  (:mod:`cosim.stability_theory`);
* genser2020 §11.4: the stability region of a coupling method found by simulation, and its area
  (:func:`stability_region_area`, :mod:`cosim.stability_region`).

Defaults (scheme, approximation, update) are those of :func:`cosim.simulate`, from :mod:`cosim.defaults`. Plots:
:mod:`cosim.plot`.
"""
from __future__ import annotations

from .stability import (LocalError, Recurrence, StabilityMap, amplification_matrix, fit_order,  # noqa: F401
                        local_error, recurrence, result_spectral_radius, spectral_radius, stability_map,
                        two_mass_stability_map)
from . import stability
from .stability_theory import (extrapolation_matrix, coupele, coupele_matrix, prestep_closed_loop,  # noqa: E402,F401
                               bohl_exponent, boundedness, CoupEle, CombinedSystem, Boundedness)
__all__ = stability.__all__ + ["extrapolation_matrix", "coupele", "coupele_matrix", "prestep_closed_loop", "bohl_exponent", "boundedness"]


# genser2020 §11.4: stability region of a coupling method and its area (cosim/stability_region.py)
from .stability_region import StabilityRegion, stability_region_area  # noqa: E402,F401
