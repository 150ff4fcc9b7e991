"""Optional dependencies: which modules each extra of ``pip install "cosim[...]"`` brings.

The core (simulate, results, analysis, plots) needs numpy, scipy, matplotlib and pandas only. A feature that
needs an extra calls :func:`require` first, so that a missing extra is one ImportError naming the install command
rather than an error from deep inside the feature.
"""
import importlib.util

EXTRAS = {
    "doe": ("dask", "distributed", "statsmodels", "SALib", "tqdm"),
    "fmu": ("fmpy", "defusedxml"),
    "jupyter": ("ipywidgets",),
    "mpi": ("mpi4py",),
}


def require(extra, feature):
    """Raise ImportError naming the extra when any module of ``extra`` is not installed.

    Parameters
    ----------
    extra : str
        A key of :data:`EXTRAS` (the name in ``cosim[extra]``).
    feature : str
        What needs it, for the message (e.g. ``"cosim.doe"``).

    Raises
    ------
    ImportError
        ``name`` is the first missing module; the message lists all missing ones and the pip command.
    """
    missing = [m for m in EXTRAS[extra] if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(f"{feature} needs the optional dependencies {', '.join(missing)}: "
                          f"pip install \"cosim[{extra}]\"", name=missing[0])
