"""Exceptions raised by cosim."""


class CosimError(RuntimeError):
    """Base class of run-time failures of a co-simulation. ``result`` holds the partial result up to the failure."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class DivergenceError(CosimError):
    """The co-simulation diverged (numerically unstable coupling).

    Raised by :func:`cosim.simulate` when

    * the engine met a non-finite value or a state beyond the absolute ``divergence_bound``: ``result`` carries the
      macro-step history up to the last recorded step; or
    * after the run, a state or output grew to more than ``divergence_growth`` times its amplitude in the first
      20 % of the run (:func:`cosim.metrics.divergence`): ``result`` carries the whole run.

    ``signal`` names the offending signal (``"S2.x[1]"`` or its name), ``growth`` is its growth factor (inf for
    non-finite values, None if unknown), ``t`` the time it was detected."""

    def __init__(self, message, result=None, signal=None, growth=None, t=None):
        super().__init__(message, result)
        self.signal = signal
        self.growth = growth
        self.t = t


class SolverError(CosimError):
    """A subsystem integrator (e.g. CVODE) or a user callback failed. ``result`` carries the partial result."""
