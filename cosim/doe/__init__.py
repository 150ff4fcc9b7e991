"""Design-of-experiments and sensitivity studies over co-simulation runs (genser2020 §12).

:class:`Study` (designs: :mod:`~cosim.doe.designs`; runner: threads, processes or Dask, e.g. a
:func:`local_cluster`; SQLite checkpoint and resume; tqdm progress), analysis: :func:`anova` (main and two-factor effects through statsmodels' ``anova_lm``, or
genser2020 eq. 3.11–3.12; eta squared and Table 3.10's normalised %), :func:`sobol` (SALib), :func:`optimum` (ascending sorting, ≤ 1.1·min or the best N) and
:func:`histogram_optimum`; plots in :mod:`cosim.doe.plots`.
"""
from .._extras import require

require("doe", "cosim.doe")  # before any submodule: a missing extra is one clear ImportError

from .checkpoint import load
from . import dask_cluster
from .dask_cluster import local_cluster
from .designs import explicit, full_factorial, latin_hypercube, saltelli, table_hash
from .errors import StudyError
from .factors import Range
from .responses import amplitude_stable, eps_mono
from .study import Study
from .analysis import anova, histogram_optimum, normalised_percent, optimum, sobol
from . import plots

#: The ``dask.config`` settings under which :func:`local_cluster` starts its scheduler, nannies and workers: Dask's
#: sampling profiler off (every 10 ms in each worker), the event-loop check every 1 s (20 ms), the memory monitor every
#: 1 s (100 ms) and the system monitor every 2 s (0.5 s). They change no result and keep the workers' cores for the
#: runs: 11 instead of 86 ms of CPU per second for an idle two-worker cluster. Apply them to a cluster of your own
#: with ``dask.config.set(DASK_SETTINGS)`` around its creation (user guide: "Dask's own work").
DASK_SETTINGS = dask_cluster.DASK_SETTINGS

__all__ = ["Study", "Range", "StudyError", "full_factorial", "latin_hypercube", "saltelli", "explicit", "table_hash",
           "load", "eps_mono", "amplitude_stable", "anova", "sobol", "optimum", "histogram_optimum",
           "normalised_percent", "plots", "local_cluster", "DASK_SETTINGS"]
