"""Exceptions raised by cosim."""
import math
import re


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
    non-finite values, None if unknown), ``t`` the time it was detected. The engine reports signals by global
    index ("state 3", "output 2"); with a ``result`` attached, the message names them ("state S2.x[1]")."""

    def __init__(self, message, result=None, signal=None, growth=None, t=None):
        message = str(message)
        if result is not None and signal is None:
            message, signal, growth, t = _engine_message(message, result, growth, t)
            if signal is not None and "divergence bound" in message:
                message += ("; the result up to the macro point before is attached as .result (pass "
                            "divergence_bound=math.inf to stop only on non-finite values)")
        super().__init__(message, result)
        self.signal = signal
        self.growth = growth
        self.t = t


def _engine_message(msg, result, growth, t):
    """The C engine's 'state 3 = ...' / 'output 2 is not finite' with signal names, plus what to do."""
    system = getattr(result, "system", None)
    if system is None or not hasattr(system, "signal_names"):
        return msg, None, growth, t
    x_names = system.signal_names("x")
    opts = getattr(result, "options", None) or {}
    # the exact monolithic reference runs one composite LTI unit whose outputs are the stacked states
    states_out = bool(opts.get("monolithic")) and type(opts.get("solver")).__name__ == "Exact"
    y_names = x_names if states_out else system.signal_names("y")
    found = []
    names = {"state": x_names, "output": y_names}
    offsets = {"state": system.state_offset, "output": system.out_offset}

    def by_global(m):  # "state 3"
        word, i = m.group(1), int(m.group(2))
        if not 0 <= i < len(names[word]):
            return m.group(0)
        found.append(names[word][i])
        return f"{word} {found[-1]}"

    def by_local(m):  # "state S2.x[1]" (the engine's own naming): the signal's name where it has one
        word, sub, i = m.group(1), m.group(2), int(m.group(4))
        if sub in system.names:
            g = int(offsets[word][system.names.index(sub)]) + i
        elif opts.get("monolithic"):
            g = i  # the composite unit of the monolithic reference stacks all states (outputs)
        else:
            return m.group(0)
        if not 0 <= g < len(names[word]):
            return m.group(0)
        found.append(names[word][g])
        return f"{word} {found[-1]}"

    new = re.sub(r"\b(state|output) (\d+)\b", by_global, msg)
    if not found:
        new = re.sub(r"\b(state|output) ([A-Za-z_]\w*)\.([xy])\[(\d+)\]", by_local, msg)
    if not found:
        return msg, None, growth, t
    if growth is None and ("not finite" in new or re.search(r"= -?(nan|inf)\b", new)):
        growth = math.inf
    if t is None:
        m = re.search(r"at t = ([-+0-9.eE]+)", new)
        t = float(m.group(1)) if m else None
    return new, found[0], growth, t


def name_signals(message, result):
    """The engine's message with the signals named as the user declared them ("state S1.v1", not "state 3" or
    "S1.x[1]"): the one naming of Result.message and the exception's message."""
    return _engine_message(str(message), result, None, None)[0]


class CouplingInstabilityWarning(UserWarning):
    """The run finished, but the verdict (:func:`cosim.verdict.judge`) finds the coupling numerically unstable:
    ``res.status == Result.UNSTABLE`` and ``res.message`` says why (the spectral radius of the macro step, or an
    output growing geometrically to the end of the run)."""


class SolverError(CosimError):
    """A subsystem integrator (e.g. CVODE) or a user callback failed. ``result`` carries the partial result."""


class ConvergenceError(SolverError):
    """An iterative scheme (:class:`cosim.Implicit`, :class:`cosim.WaveformRelaxation`) did not converge within
    ``max_iter`` iterations in a macro step (kraft2021 §6.4; the corrector-failure path), and the step controller
    could not retry with a smaller step. ``result`` carries the partial result up to the last accepted macro step."""
class StepSizeError(SolverError):
    """The adaptive macro-step controller (:class:`cosim.StepControl`) failed the local error test at the smallest
    allowed step H_min. ``result`` carries the partial result up to the last accepted macro step."""
