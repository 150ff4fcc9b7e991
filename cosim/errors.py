"""Exceptions raised by cosim."""


class CosimError(RuntimeError):
    """Base class of run-time failures of a co-simulation. ``result`` holds the partial result up to the failure."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class DivergenceError(CosimError):
    """The co-simulation produced non-finite values or grew past the divergence bound (numerically unstable).

    ``result`` carries the macro-step history up to the last finite step."""


class SolverError(CosimError):
    """A subsystem integrator (e.g. CVODE) or a user callback failed. ``result`` carries the partial result."""
