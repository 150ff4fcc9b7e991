"""The error of a study that cannot run (a bad factor, a build function or responses that raise, a checkpoint of
another study). Runs that fail numerically (:class:`cosim.DivergenceError`, :class:`cosim.SolverError`) are not
errors of the study: they are rows with their status and message."""


class StudyError(ValueError):
    """A study that cannot be run or resumed; the message names the argument, factor or run."""
