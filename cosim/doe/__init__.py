"""Design-of-experiments and sensitivity studies over co-simulation runs (genser2020 §12).

:class:`Study` (designs: :mod:`~cosim.doe.designs`; runner: threads, processes or Dask, e.g. a
:func:`local_cluster`; SQLite checkpoint and resume; tqdm progress), analysis: :func:`anova` (main and two-factor effects through statsmodels' ``anova_lm``, or
genser2020 eq. 3.11–3.12; eta squared and Table 3.10's normalised %), :func:`sobol` (SALib), :func:`optimum` (ascending sorting, ≤ 1.1·min or the best N) and
:func:`histogram_optimum`; plots in :mod:`cosim.doe.plots`.
"""
from .._extras import require

require("doe", "cosim.doe")  # before any submodule: a missing extra is one clear ImportError

from .checkpoint import load
from .dask_cluster import DASK_SETTINGS, local_cluster
from .designs import explicit, full_factorial, latin_hypercube, saltelli, table_hash
from .errors import StudyError
from .factors import Range
from .responses import amplitude_stable, eps_mono
from .study import Study
from .analysis import anova, histogram_optimum, normalised_percent, optimum, sobol
from . import plots

__all__ = ["Study", "Range", "StudyError", "full_factorial", "latin_hypercube", "saltelli", "explicit", "table_hash",
           "load", "eps_mono", "amplitude_stable", "anova", "sobol", "optimum", "histogram_optimum",
           "normalised_percent", "plots", "local_cluster", "DASK_SETTINGS"]
