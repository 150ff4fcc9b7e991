"""``cosim.simulate`` (co-simulation) and ``cosim.simulate_monolithic`` (the strongly coupled reference)."""
from __future__ import annotations

import contextlib
import functools
import math
import os
import threading
import time
import warnings

import numpy as np

from . import _cancel, _check, _core, defaults, metrics
from . import energy as _energy
from . import control as _control
from . import coupling as _coupling
from . import distributed as _distributed
from . import timing as _timing
from .approximations import Approximation, Hermite, IntegratedAcceleration, Lagrange, as_approximation
from .errors import CosimError, CouplingInstabilityWarning, DivergenceError, SolverError, StepSizeError, name_signals
from .result import Result
from .schemes import IterativeScheme
from .solvers import CVODE, Exact, Solver, as_solver
from .system import CoupledSystem
from .fmu import FMU, flush_logs
from . import _experiment

_CODES = _core.codes   # the C enums' codes (csrc/py/codes.c): the only copy

SCHEMES = {n: _CODES["scheme"][n] for n in ("jacobi", "gauss-seidel")}
_ALIASES = {"gauss_seidel": "gauss-seidel", "gs": "gauss-seidel", "gaussseidel": "gauss-seidel", "parallel": "jacobi",
            "sequential": "gauss-seidel"}
UPDATES = dict(_CODES["update"])
STARTUPS = {None: _CODES["startup"]["none"], **_CODES["startup"]}

_ERR_DIVERGED, _STOPPED = _CODES["status"]["diverged"], _CODES["status"]["stopped"]
_INTERRUPTED = _CODES["status"]["interrupted"]
_MAX_STEPS = 2**63 - 1   # step counts are C longs
_TERMINATED = _CODES["status"]["terminated"]   # an FMU asked to end the simulation: a normal end
_EPS = float(np.finfo(float).eps)


def _check_time(t_end, H):
    for name, v in (("t_end", t_end), ("H", H)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
            raise TypeError(f"{name}: expected a real number, got {v!r}")
    try:
        t_end, H = float(t_end), float(H)
    except OverflowError:
        raise ValueError(f"t_end/H: {t_end!r}, {H!r} are beyond the range of floating-point numbers") from None
    if not math.isfinite(t_end) or t_end < 0:
        raise ValueError(f"t_end: must be finite and >= 0, got {t_end}")
    if not math.isfinite(H) or H <= 0:
        raise ValueError(f"H: macro step size must be positive and finite, got {H}")
    if t_end / H > 1e8:
        raise ValueError(f"H: t_end/H = {t_end / H:.3g} macro steps is more than 1e8")
    return t_end, H


def _solvers(system, solver):
    if isinstance(solver, dict):
        unknown = set(solver) - set(system.names)
        if unknown:
            raise ValueError(f"solver: unknown subsystem names {sorted(unknown)}")
        missing = set(system.names) - set(solver)
        if missing:
            raise ValueError(f"solver: no solver given for {sorted(missing)}")
        out = [as_solver(solver[n], f"solver[{n!r}]") for n in system.names]
    else:
        out = [as_solver(solver)] * len(system.subsystems)
    for s, so in zip(system.subsystems, out):
        if isinstance(so, Exact) and not s.is_lti:
            raise ValueError(f"solver: Exact() integrates LTI subsystems only; {s.name!r} is {type(s).__name__}")
    return out


def _connections(system):
    return system.connection_arrays()


def _check_steps(t_end, H, last_step):
    """H ≤ t_end, and t_end = n H unless ``last_step="shorten"`` (the engine then shortens the last macro step)."""
    if last_step not in defaults.LAST_STEPS:
        raise ValueError(f"last_step: must be 'error' or 'shorten', got {last_step!r}")
    if t_end == 0.0:
        return
    if H > t_end * (1 + 1e-12):
        raise ValueError(f"H: the macro step size H = {H!r} is larger than t_end = {t_end!r}; the run would be one "
                         "truncated macro step. Use H <= t_end")
    m = t_end / H
    frac = m - math.floor(m)
    tol = max(1e-9, 8 * _EPS * m)
    if tol < frac < 1 - tol and last_step == "error":
        raise ValueError(f"t_end: t_end = {t_end!r} is not a multiple of H = {H!r} (t_end/H = {m:.10g}); the last "
                         f"macro step would be shortened to {frac * H:.6g}. Choose H = t_end/n, or pass "
                         "last_step='shorten' to accept the shortened last step")


def _own_x0(s, t_start):
    """A subsystem's own initial state for a run from t_start (a model-exchange FMU's after its initialisation
    there)."""
    return s.initial_states(t_start) if isinstance(s, FMU) else s.x0


def _x0(system, x0, start_values=None, t_start=0.0):
    """Stacked initial state from ``x0`` (None, stacked array or dict by subsystem name) and ``start_values``
    (dict by state name, applied last); the subsystems' own at ``t_start`` where not given."""
    if x0 is None:
        v = np.concatenate([_own_x0(s, t_start) for s in system.subsystems]) if system.subsystems else np.zeros(0)
    elif isinstance(x0, dict):
        unknown = [k for k in x0 if k not in system.names]
        if unknown:
            raise ValueError(f"x0: unknown subsystem names {unknown} (known: {system.names}); for single states "
                             "use start_values={'S1.x[0]': value}")
        parts = []
        for s in system.subsystems:
            try:
                v = _check.real_array(x0[s.name] if s.name in x0 else _own_x0(s, t_start), f"x0[{s.name!r}]",
                                      "vector").reshape(-1)
            except (TypeError, ValueError):
                raise TypeError(f"x0[{s.name!r}]: expected {s.nx} real numbers") from None
            if v.size != s.nx or not np.all(np.isfinite(v)):
                raise ValueError(f"x0[{s.name!r}]: expected {s.nx} finite values, got {v.size}")
            parts.append(v)
        v = np.concatenate(parts)
    else:
        try:
            v = _check.real_array(x0, "x0", "vector").reshape(-1)
        except (TypeError, ValueError):
            raise TypeError("x0: expected an array of real numbers or a dict {subsystem name: array}") from None
        n = int(system.state_offset[-1])
        if v.size != n or not np.all(np.isfinite(v)):
            raise ValueError(f"x0: expected {n} finite values (all states stacked), got {v.size}")
    if start_values is None:
        return v
    if not isinstance(start_values, dict):
        raise TypeError(f"start_values: expected a dict {{'S1.x[0]': value}}, got {type(start_values).__name__}")
    v = v.copy()
    names = system.signal_names("x")
    index = {n: i for i, n in enumerate(names)}
    for s, a in zip(system.subsystems, system.state_offset[:-1]):
        index.update({f"{s.name}.x[{i}]": int(a) + i for i in range(s.nx)})
    unknown = [k for k in start_values if k not in index]
    if unknown:
        known = names if len(names) <= 20 else names[:20] + ["..."]
        raise ValueError(f"start_values: unknown states {unknown} (known: {known})")
    for k, val in start_values.items():
        if isinstance(val, bool) or not isinstance(val, (int, float, np.integer, np.floating)) \
                or not math.isfinite(val):
            raise ValueError(f"start_values[{k!r}]: expected a finite number, got {val!r}")
        v[index[k]] = float(val)
    return v


def _default_bound(x0, bound):
    if bound is None:
        return 1e10 * max(1.0, float(np.max(np.abs(x0))) if x0.size else 1.0)
    if isinstance(bound, bool) or not isinstance(bound, (int, float)) or not bound > 0:
        raise ValueError(f"divergence_bound: must be a positive number or math.inf, got {bound!r}")
    return float(bound) if math.isfinite(bound) else 0.0


def _growth_limit(divergence_growth):
    if divergence_growth is None:
        g = float(defaults.DIVERGENCE_GROWTH)
        return g if math.isfinite(g) else None
    if isinstance(divergence_growth, bool) or not isinstance(divergence_growth, (int, float, np.integer, np.floating)):
        raise TypeError(f"divergence_growth: expected a number > 1 or math.inf, got {divergence_growth!r}")
    g = float(divergence_growth)
    if not g > 1:  # also rejects NaN
        raise ValueError(f"divergence_growth: must be > 1 (a growth factor) or math.inf, got {divergence_growth!r}")
    return g if math.isfinite(g) else None


def _diverged(system, raw, limit):
    """The relative divergence criterion after a run that reached its end or was stopped
    (:func:`cosim.metrics.divergence`): the worst offender, or None."""
    if limit is None or raw["status"] not in (0, _STOPPED, _TERMINATED):
        return None
    t = np.asarray(raw["t"])
    return metrics._divergence(t, [(raw["x"], lambda: system.signal_names("x")),
                                   (raw["y"], lambda: system.signal_names("y"))], limit, defaults.DIVERGENCE_WINDOW)


def _grid(grid, t_end, name):
    """Validated explicit macro grid 0 = T_0 < T_1 < ... < T_n = t_end (a last point within 1e-12 of t_end is set
    to t_end exactly, which the engine requires)."""
    try:
        g = _check.real_array(grid, name, "array of time points").reshape(-1)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: expected a 1-D array of time points") from None
    if g.size < 2 or not np.all(np.isfinite(g)):
        raise ValueError(f"{name}: need at least two finite time points")
    if g[0] != 0.0 or not np.all(np.diff(g) > 0):
        raise ValueError(f"{name}: must start at 0 and be strictly increasing")
    if t_end is not None:
        if abs(g[-1] - t_end) > 1e-12 * max(1.0, abs(t_end)):
            raise ValueError(f"{name}: must end at t_end = {t_end!r}, ends at {float(g[-1])!r}")
        g[-1] = t_end
        if not g[-1] > g[-2]:
            raise ValueError(f"{name}: must be strictly increasing up to t_end = {t_end!r}")
    return g


def _output_grid(output_interval, t_eval, t_end, t_start=0.0):
    """The dense-output grid t_start = t_0 < t_1 < ... <= t_end, or None for records at the macro points
    (``t_end``: the run's length t_end - t_start; ``t_eval`` in absolute times)."""
    if output_interval is not None and t_eval is not None:
        raise TypeError("output_interval: give either output_interval or t_eval, not both")
    if output_interval is not None:
        if isinstance(output_interval, bool) or not isinstance(output_interval, (int, float, np.floating, np.integer)):
            raise TypeError(f"output_interval: expected a real number, got {output_interval!r}")
        dt = float(output_interval)
        if not (math.isfinite(dt) and dt > 0):
            raise ValueError(f"output_interval: must be positive and finite, got {output_interval!r}")
        ratio = t_end / dt * (1 + 1e-12)
        if not ratio <= 1e8:   # also inf (a subnormal interval): never convert it to an int
            raise ValueError(f"output_interval: {output_interval!r} gives {ratio:.3g} output points over "
                             f"t_end = {t_end!r}, more than 1e8; use a larger output_interval")
        n = int(math.floor(ratio))
        g = np.arange(n + 1) * dt
        if t_end - g[-1] > 1e-9 * dt:
            g = np.append(g, t_end)
        g[-1] = min(g[-1], t_end) if t_end - g[-1] <= 1e-9 * dt else g[-1]
        return g if t_start == 0.0 else g + t_start
    if t_eval is None:
        return None
    try:
        g = _check.real_array(t_eval, "t_eval", "array of output times").reshape(-1)
    except (TypeError, ValueError):
        raise TypeError("t_eval: expected a 1-D array of output times") from None
    if g.size < 1 or not np.all(np.isfinite(g)):
        raise ValueError("t_eval: need finite output times")
    if g[0] != t_start or not np.all(np.diff(g) > 0):
        raise ValueError(f"t_eval: must start at t_start = {t_start!r} and be strictly increasing")
    if t_start != 0.0:
        t_last = t_start + t_end
        if g[-1] > t_last + 1e-12 * abs(t_last):
            raise ValueError(f"t_eval: ends at {float(g[-1])!r}, after t_end = {t_last!r}")
        g[-1] = min(g[-1], t_last)
        return g
    if g[-1] > t_end * (1 + 1e-12):
        raise ValueError(f"t_eval: ends at {float(g[-1])!r}, after t_end = {t_end!r}")
    g[-1] = min(g[-1], t_end)
    return g


_record_limit_cache = [-1.0, 0.0]   # (monotonic time read, bytes)


def _record_limit():
    """Largest record buffer one run may reserve: half of the memory available now (MemAvailable of
    /proc/meminfo; half the physical memory where it is not known): an error beats swapping. Read at most once a
    second (a read per run costs short runs time)."""
    now = time.monotonic()
    if now - _record_limit_cache[0] < 1.0:
        return _record_limit_cache[1]
    limit = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    limit = 0.5 * 1024 * float(line.split()[1])
                    break
    except (OSError, ValueError, IndexError):
        pass
    if limit is None:
        try:
            limit = 0.5 * os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            limit = 8e9
    _record_limit_cache[:] = [now, limit]
    return limit


_in_flight = 0                     # engine runs of this process under way (threads of a study)
_in_flight_lock = threading.Lock()
_parallel = threading.local()      # .runs: how many runs this thread's pool runs at once (parallel_runs)
_quiet = threading.local()         # .on: this thread's runs do not warn of an unstable coupling (verdicts_recorded)


@contextlib.contextmanager
def parallel_runs(n):
    """The runs this thread starts inside the ``with`` block are one of ``n`` runs of this process that run at once
    (a study's thread pool): each reserves at most 1/n of the record limit even while the others are still
    starting."""
    before = getattr(_parallel, "runs", 1)
    _parallel.runs = n
    try:
        yield
    finally:
        _parallel.runs = before


@contextlib.contextmanager
def verdicts_recorded():
    """The runs this thread starts inside the ``with`` block issue no :class:`CouplingInstabilityWarning`: their
    caller records each verdict (``res.status``, ``res.message``) itself, as a study does in its ``status`` column,
    and warns once. Per thread, unlike ``warnings.catch_warnings`` (whose filters are global)."""
    before = getattr(_quiet, "on", False)
    _quiet.on = True
    try:
        yield
    finally:
        _quiet.on = before


def concurrent_runs(in_flight=None):
    """The number of runs that share the record limit with a run of this thread: the runs of this process in flight
    (at least the :func:`parallel_runs` of its pool) times ``COSIM_CONCURRENT_RUNS`` (the processes that run at
    once, e.g. a process pool's workers: set by cosim.doe in its workers)."""
    n = max(_in_flight if in_flight is None else in_flight, getattr(_parallel, "runs", 1))
    try:
        others = int(os.environ.get("COSIM_CONCURRENT_RUNS", "1"))
    except ValueError:
        others = 1
    return n * max(1, others)


def _engine_run(models, solvers, x0, ci, co, cg, r, opts, monolithic):
    """``_core.run`` with the record limit shared by the runs that run at once: each of n reserves at most 1/n of
    :func:`_record_limit` (:func:`concurrent_runs`)."""
    global _in_flight
    with _in_flight_lock:
        _in_flight += 1
        n = _in_flight
    opts["max_record_bytes"] = _record_limit() / concurrent_runs(n)
    try:
        return _core.run(models, solvers, x0, ci, co, cg, r, opts, monolithic)
    finally:
        with _in_flight_lock:
            _in_flight -= 1


def _interrupt_interval():
    """Seconds of wall time between Ctrl-C checks of a C run. Only the main thread receives SIGINT; a run in another
    thread (a thread-pool study) does not check, because each check takes the GIL and would wait for the threads
    running Python (a switch interval) and so serialise parallel runs."""
    return 0.05 if threading.current_thread() is threading.main_thread() else 0.0


def _run_options(**kw):
    opts = dict(order=None, approx_kind=0, approx_k=0, approx_nsp=0, rates_lagged=0, update=0, t0=0.0, startup=0,
                startup_factor=1e-5, grid=None, reject=None, timing=0, t_out=None, step_finished=None, step_finished_every=1,
                record_every=1, interrupt_interval=_interrupt_interval(), max_record_bytes=_record_limit(),
                cancel=_cancel.current_flag())
    opts.update(kw)
    return opts


def _hook(system, user_hook, options):
    """step_finished(t, partial_result) -> False stops; the C side passes the record arrays and their fill."""
    if user_hook is None:
        return None
    if not callable(user_hook):
        raise TypeError(f"step_finished: must be callable f(t, result), got {type(user_hook).__name__}")

    def call(t, n, T, X, Y, U):
        views = [a[:n] for a in (T, X, Y, U)]
        for v in views:    # only the run writes its records: a hook that writes would change the result
            v.flags.writeable = False
        partial = Result(system, *views, {}, 0, "", options)
        return user_hook(t, partial)
    return call


def _check_threads(threads, scheme):
    """Validated thread count of simulate(threads=...): an int in 1..1024; more than one only for Jacobi."""
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads: expected an int >= 1, got {threads!r}")
    threads = int(threads)
    if not 1 <= threads <= 1024:
        raise ValueError(f"threads: must be in 1..1024, got {threads}")
    if threads > 1 and scheme != "jacobi":
        raise ValueError(f"threads: parallel units need scheme='jacobi' (Gauss-Seidel steps the units one after "
                         f"another), got scheme={scheme!r} with threads={threads}")
    return threads


def _kappa(approx):
    """Degree κ of a fixed approximation (for the κ histogram), or None."""
    k = getattr(approx, "k", None)
    if k is None and type(approx).__name__ == "ZOH":
        k = 0
    return k if isinstance(k, (int, np.integer)) else None


def _finish(system, raw, t_wall, options, names_for_stats, fields=None, growth_limit=None):
    """The Result of a run from the engine's raw output, with every field set here; raises the run's error (or
    :class:`DivergenceError` when a state or output grew by more than ``growth_limit``) with the result attached."""
    stats = dict(macro_steps=raw["macro_steps"], rejected_steps=raw["rejected_steps"],
                 newton_iterations=raw["newton_iterations"], wall_time=t_wall,
                 subsystems={n: st for n, st in zip(names_for_stats, raw["stats"] or [])})
    stats.update(raw.get("extra_stats") or {})   # cosim/timing.py: §16 counters and timing breakdown
    if "iterations" in raw:  # iterative schemes: per accepted macro step, and the total
        stats.update(iterations=raw["iterations"], iterations_per_step=raw["iterations_per_step"])
    control_fields, control_stats = _control.result_fields(raw)
    stats.update(control_stats)
    fields = {**(fields or {}), **control_fields}
    code, message = raw["status"], raw["message"]
    worst = _diverged(system, raw, growth_limit)
    if worst is not None:
        code, message = _ERR_DIVERGED, worst.message()
    res = Result(system, raw["t"], raw["x"], raw["y"], raw["u"], stats, code, message, options, **fields)
    if message and worst is None:
        res.message = name_signals(message, res)
    if worst is not None:
        raise DivergenceError(message, res, worst.signal, worst.factor, worst.t)
    if code in (0, _STOPPED, _TERMINATED):
        if not options.get("monolithic") and not res.verdict.stable:   # cosim/verdict.py
            res.status, res.message = Result.UNSTABLE, res.verdict.message
            if not getattr(_quiet, "on", False):
                warnings.warn(res.verdict.message, CouplingInstabilityWarning, stacklevel=4)
        return res
    msg, cause = raw["message"], raw.get("cause")
    if code == _INTERRUPTED and isinstance(cause, KeyboardInterrupt):
        cause.result = res      # Ctrl-C: the run so far goes out with the KeyboardInterrupt
        raise cause
    kind = _core.error_type(code)              # the one C -> Python mapping (csrc/py/pyutil.c)
    if raw.get("step_control") and raw["step_control"]["h_min_failed"]:
        kind = StepSizeError
    exc = kind(msg, res) if issubclass(kind, CosimError) else kind(msg)
    if cause is not None:
        raise exc from cause
    raise exc


def simulate(system: CoupledSystem, t_end: float | None = None, H: float | None = None, *, grid=None,
             scheme: str | None = None, approximation: Approximation | str | None = None,
             solver: Solver | dict | str | None = None,
             order=None, update: str | None = None, startup: str | None = None, x0=None, start_values=None,
             last_step: str | None = None, divergence_bound: float | None = None,
             divergence_growth: float | None = None, step_finished=None, step_finished_every: int = 1,
             timing: bool = False, output_interval: float | None = None, t_eval=None,
             coupling=None, step_control=None, threads: int = 1, t_start: float | None = None,
             parallel=None) -> Result:
    """Co-simulate ``system`` from ``t_start`` (default 0) to ``t_end`` with macro step size ``H`` (T_{N+1} = T_N + H).

    ``t_start``, ``t_end``, ``H`` not given come from the DefaultExperiment of the system's SSP or of its FMUs
    (startTime, stopTime, stepSize; docs/fmu.md "DefaultExperiment"): an argument given wins, then the SSP's, then
    the FMUs' where they agree; a missing ``t_end`` or ``H`` that none declares is an error.

    Defaults (``None``) come from :mod:`cosim.defaults`, the same as :mod:`cosim.analysis` uses: Jacobi, ZOH,
    consistent update.

    Parameters
    ----------
    H : macro step size; t_end must be a multiple of H (t_end = n H) and H <= t_end. Or give ``grid`` instead.
    grid : explicit macro time points 0 = T_0 < T_1 < ... < T_n = t_end (instead of H).
    scheme : "jacobi" (all subsystems integrate in parallel with extrapolated inputs) or "gauss-seidel"
        (sequential; a subsystem integrated later *interpolates* the outputs already computed at T_{N+1};
        busch2016 §2 eq. 13-14, kraft2021 §5).
    approximation : how inputs are formed between macro points: :class:`ZOH`, :class:`Lagrange` (degree k = κ),
        :class:`ExtrapolatedInterpolation` (EXTRIPOL-C0/C1), :class:`Hermite` (with output derivatives).
    solver : integrator for every subsystem, or a dict ``{name: solver}``: :class:`CVODE`, :class:`RK4`,
        :class:`Euler`, :class:`Exact` (LTI only). Default: ``CVODE()``, for a model-exchange FMU whose
        DefaultExperiment declares a tolerance ``CVODE(rtol=tolerance)``.
    order : Gauss-Seidel order as a list of subsystem names (default: the system's order).
    update : "consistent" solves the coupling conditions u_{N+1} = φ(y(x_{N+1}, u_{N+1})) at every macro point
        (kraft2021 eq. 2.22); "simplified" evaluates outputs with the predicted inputs ũ(T_{N+1}) (black-box
        tools; with feed-through the global order drops by one, kraft2021 App. B).
    startup : None (uniform grid, degree reduced while the history is short) or "kraft" (kraft2021 §4.3,
        Listing 5.1: steps 1e-5·H·2^n until T = 2H, then H; recovers the full order for k ≥ 2).
    start_values : dict of single initial states by name, ``{"S1.x[0]": 0.2}`` (or the subsystem's state names),
        applied after ``x0``. Unknown names (here and among the subsystem names of an ``x0`` dict) raise
        ValueError.
    last_step : "error" (default): a t_end that is not a multiple of H raises ValueError; "shorten": the last
        macro step is shortened to end at t_end.
    divergence_growth : after the run, raise :class:`DivergenceError` (with the whole result attached) if a state
        or output grew, after the first 20 % of the run, to more than this factor times its amplitude in the first
        20 % (default :data:`cosim.defaults.DIVERGENCE_GROWTH` = 1e3; :func:`cosim.metrics.divergence`);
        ``math.inf`` turns the check off (e.g. for a system whose exact solution grows). Slower growth is
        reported by ``Result.growth`` / ``Result.stable``; ``Result.spectral_radius()`` gives ρ(Ω) of the run's
        settings (LTI). Runs with fewer than 5 macro points in the first 20 % are not checked.
    x0 : initial states (stacked array or dict by name); default: the subsystems' own ``x0``.
    divergence_bound : stop with :class:`DivergenceError` when a state exceeds it in magnitude (default
        1e10·max(1, |x0|)); ``math.inf`` stops only on non-finite values.
    step_finished : ``f(t, partial_result)`` called after each accepted macro step (every ``step_finished_every``-th);
        returning ``False`` stops the run, which then returns the partial result with
        ``res.status == cosim.Result.STOPPED`` (``res.success`` is True, ``res.state == "stopped"``).
        Exceptions raised in it propagate (KeyboardInterrupt/SystemExit as themselves, others as the ``__cause__``
        of a :class:`SolverError`).
    timing : measure the wall time of every unit step (``res.stats["subsystems"][name]["wall_time"]``); off by
        default because two clock reads per unit step cost a quarter of a cheap step.

    t_start : the time the run starts at (default 0): the subsystems' x0 hold at t_start, the macro points run from
        t_start to t_end, ``t_eval`` starts at t_start; time-varying subsystems and FMUs see the absolute time (a
        model-exchange FMU starts from its own states after its initialisation at t_start). Not with ``grid=`` (an
        explicit grid starts at 0).

    output_interval, t_eval : record on this grid instead of at the macro points (dense output): every
        ``output_interval`` from t_start to t_end, or the given increasing times from t_start to at most t_end.
        Between macro points every unit re-integrates from T_N with the input function it used on [T_N, T_{N+1}]
        (exact for :class:`Exact` units); outputs are evaluated with the input values at t.
        ``res.stats["macro_steps"]`` still counts the macro steps.

    coupling : a coupling method instead of the plain signal-based one:
        :class:`cosim.BalanceCorrection` (moshagen eqs. 77-79): wraps the approximation; the result gets
        ``balance_t`` and ``balance_error`` (cumulative imbalance per connected input);
        :class:`cosim.PreStep` (Genser's model-based pre-step; Jacobi, constant H; ``res.coupling_log``),
        :class:`cosim.NEPCE` (deferred energy correction of its ``base`` approximation), :class:`cosim.FOH`,
        :class:`cosim.Quadratic` (Lagrange k = 1, 2); with these ``approximation`` must be left at None.
    step_control : None (fixed H), :class:`cosim.StepControl` (kraft2021 §8-§11): adaptive macro steps and
        polynomial degrees κ; ``H`` is then the initial step H_init (t_end need not be a multiple of it). The result
        carries ``res.step_sizes`` (accepted step sizes; ``res.H`` is the older name), ``res.k`` (κ per step),
        ``res.error_estimate`` (the local error test's WRMS value per step), ``res.stats["rejected_steps"]`` and
        ``res.stats["rejected_times"]``. A failed test at H_min raises :class:`cosim.StepSizeError` with the partial result.
        Or :class:`cosim.ECCO` (energy residual of power bonds and a PI controller; ``H`` is the first step); the
        result gets ``energy_t``, ``energy_residual`` (per step and bond, |P_a − P_b|·H) and ``step_sizes``.
    threads : Jacobi: the subsystems of one macro step integrate concurrently on this many threads (kraft2021
        §16; one pool per run, a barrier at every macro point). Results are bit-identical for every ``threads``.
        Subsystems given as Python callables (:class:`ODE`) serialise on the GIL: use C models for speed-ups.
    parallel : None (this process), or :class:`cosim.MPI` (``"mpi"``: on ``COMM_WORLD``): under
        ``mpiexec -n P`` every process calls ``simulate`` with the same arguments and integrates its block of
        subsystems; one collective per macro step exchanges the states, and every process returns the same result,
        bit-identical to ``threads=1`` (``cosim.distributed``; docs/chains.md "Beyond one machine: MPI").
    timing : measure where the time goes (kraft2021 §16.3, Fig. 4.5): per subsystem ``solver_time``,
        ``idle_time`` (eq. 4.5), ``save_time``, ``interface_time`` in ``res.stats["subsystems"][name]``, and
        ``res.stats["timing"]`` for the run (see :mod:`cosim.timing`); ``cosim.plot.timing(res)`` draws them.

    Ctrl-C stops a run within a fraction of a second with ``KeyboardInterrupt``.

    Returns
    -------
    :class:`Result`. Raises :class:`DivergenceError` or :class:`SolverError` carrying the partial result.

    Examples
    --------
    >>> import cosim
    >>> system = cosim.models.two_mass_oscillator(ck=2e5, dk=200)
    >>> res = cosim.simulate(system, t_end=0.1, H=1e-3, approximation=cosim.Lagrange(k=1))
    >>> len(res.t), res.success
    (101, True)
    >>> ref = cosim.simulate_monolithic(system, t_end=0.1, t_eval=res.t)
    >>> print(f"max. relative error {res.error_to(ref)['max_rel']:.3f}")
    max. relative error 0.058
    """
    return _simulate(**locals())


def _simulate(system, t_end=None, H=None, *, reject_steps=None, grid=None, scheme=None, approximation=None,
              solver=None, order=None, update=None, startup=None, x0=None, start_values=None, last_step=None,
              divergence_bound=None, divergence_growth=None, step_finished=None, step_finished_every=1, timing=False,
              output_interval=None, t_eval=None, coupling=None, step_control=None, threads=1, t_start=None,
              parallel=None):
    """:func:`simulate` with the test-only ``reject_steps``: macro step numbers whose first attempt the engine
    rejects and repeats (exercises the save/restore path of units and couplings without a step controller)."""
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"system: expected a cosim.CoupledSystem, got {type(system).__name__}")
    t_start, t_end, H, h_source = _experiment.run_times(system, t_start, t_end, H, grid)
    if solver is None:
        solver = dict(zip(system.names, _experiment.solvers(system)))
    t_start = _check.real(t_start, "t_start")
    t_final = t_end
    if t_start != 0.0:
        if grid is not None:
            raise ValueError("t_start: not with an explicit grid= (the grid starts at 0)")
        t_end = _check.real(t_end, "t_end") - t_start      # checks below are on the run's length
        if t_end < 0:
            raise ValueError(f"t_end: must be >= t_start = {t_start!r}, got {t_final!r}")
    if H is None and grid is None:
        raise TypeError("H: missing the macro step size H (or give an explicit grid=[0, T_1, ..., t_end])")
    if H is not None and grid is not None:
        raise TypeError("H: give either the macro step size H or an explicit grid, not both")
    cpl = None
    if coupling is not None and not isinstance(coupling, _energy.BalanceCorrection):
        cpl = _coupling.as_coupling(coupling)
        if approximation is not None:
            raise ValueError(f"approximation: not used with coupling={cpl!r} (it forms the inputs itself)")
        approximation = cpl.approximation()
        if isinstance(cpl, (_coupling.PreStep, _coupling.MBCorr)):
            what = "the pre-step method" if isinstance(cpl, _coupling.PreStep) else "MBCorr"
            if grid is not None or startup is not None:
                raise ValueError(f"coupling: {what} needs a constant macro step H (no grid, no startup)")
            if scheme is not None and str(scheme).lower() not in ("jacobi", "parallel"):
                raise ValueError(f"scheme: {what} is derived for Jacobi (parallel) scheduling")
            if reject_steps is not None:
                raise ValueError(f"coupling: {what} runs with a fixed macro step")
        if isinstance(cpl, _coupling.PreStep):
            if update is None:
                update = "simplified"   # genser's units report y^{k+1} with their own end-of-step input (§B.1)
    scheme = defaults.SCHEME if scheme is None else scheme
    approximation = defaults.approximation() if approximation is None else approximation
    update = defaults.UPDATE if update is None else update
    last_step = defaults.LAST_STEP if last_step is None else last_step
    if grid is not None:
        t_end, _ = _check_time(t_end, 1.0)
        grid = _grid(grid, t_end, "grid")
        H = float(np.max(np.diff(grid)))
        if startup is not None:
            raise ValueError("startup: not used with an explicit grid (put the start-up steps into the grid)")
    t_end, H = _check_time(t_end, H)
    kraft_control = None
    if step_control is not None:
        from .control import StepControl
        if not isinstance(step_control, (StepControl, _energy.ECCO)):
            raise TypeError(f"step_control: expected cosim.StepControl(...) or cosim.ECCO(...), "
                            f"got {type(step_control).__name__}")
        if grid is not None or startup is not None or reject_steps is not None:
            raise ValueError("step_control: not with grid=, startup= (the controller chooses the macro grid and has "
                             "its own initial phase)")
        if H > t_end > 0:
            raise ValueError(f"H: the initial step H = {H!r} is larger than t_end = {t_end!r}")
        if isinstance(step_control, StepControl):
            kraft_control = step_control
            if coupling is not None:
                raise ValueError("step_control: cosim.StepControl varies the degree of the signal-based coupling; "
                                 "it does not combine with coupling=")
    elif grid is None:
        try:
            _check_steps(t_end, H, last_step)
        except ValueError as e:
            if h_source is None:
                raise
            raise ValueError(f"{e} (H = {H!r} is the stepSize of {h_source}; give H=)") from None
    elif last_step not in defaults.LAST_STEPS:
        raise ValueError(f"last_step: must be 'error' or 'shorten', got {last_step!r}")
    iterative = None
    if isinstance(scheme, IterativeScheme):  # cosim.Implicit / cosim.WaveformRelaxation (cosim/schemes.py)
        iterative, scheme = scheme, scheme.base
    if not isinstance(scheme, str):
        raise TypeError(f"scheme: expected 'jacobi', 'gauss-seidel', cosim.Implicit(...) or "
                        f"cosim.WaveformRelaxation(...), got {scheme!r}")
    sname = _ALIASES.get(scheme.lower(), scheme.lower())
    if sname not in SCHEMES:
        raise ValueError(f"scheme: unknown scheme {scheme!r}; use 'jacobi' or 'gauss-seidel'")
    approx = as_approximation(approximation)
    if iterative is not None and not isinstance(approx, Lagrange):
        raise ValueError(f"approximation: {type(iterative).__name__} iterates the end value of a Lagrange polynomial "
                         f"(kraft2021 eq. 2.24); use cosim.Lagrange(k) or cosim.ZOH(), got {approx!r}")
    solvers = _solvers(system, solver)
    if update not in UPDATES:
        raise ValueError(f"update: must be 'consistent' or 'simplified', got {update!r}")
    if startup not in STARTUPS:
        raise ValueError(f"startup: must be None or 'kraft', got {startup!r}")
    order_idx = None
    if order is not None:
        if sname != "gauss-seidel":
            raise ValueError("order: only meaningful with scheme='gauss-seidel'")
        if isinstance(order, str):
            raise TypeError(f"order: expected a list of subsystem names, got the string {order!r}")
        order = list(order)
        if sorted(map(str, order)) != sorted(system.names) or len(set(order)) != len(order):
            raise ValueError(f"order: must list every subsystem name exactly once, got {order} "
                             f"(subsystems: {system.names})")
        order_idx = np.array([system.index(n) for n in order], dtype=np.int64)
    x0v = _x0(system, x0, start_values, t_start)
    bound = _default_bound(x0v, divergence_bound)
    growth_limit = _growth_limit(divergence_growth)
    ci, co, cg = _connections(system)
    kind, k, nsp = approx.spec()
    deriv = 1 if isinstance(approx, Hermite) and approx.mode == "lagged" else 0
    options = dict(scheme=iterative if iterative is not None else sname, approximation=approx, solver=solvers, H=H, t_end=t_end, update=update,
                   startup=startup, order=order, grid=grid)
    if isinstance(step_finished_every, bool) or not isinstance(step_finished_every, (int, np.integer)) \
            or not 1 <= step_finished_every <= _MAX_STEPS:
        raise ValueError(f"step_finished_every: must be an int in 1..2**63-1, got {_check.shown(step_finished_every)}")
    t_out = _output_grid(output_interval, t_eval, t_end, t_start)
    t_end = t_end if t_start == 0.0 else _check.real(t_final, "t_end")
    options.update(t_end=t_end, t_start=t_start)
    options.update(t_eval=t_out)
    opts = _run_options(t_out=t_out, scheme=dict(kind=sname), order=order_idx, approx_kind=kind, approx_k=k, approx_nsp=nsp, rates_lagged=deriv,
                        update=UPDATES[update], t0=t_start, t_end=t_end, H=H, startup=STARTUPS[startup], divergence_bound=bound,
                        grid=grid, timing=int(bool(timing)), step_finished=_hook(system, step_finished, options),
                        step_finished_every=int(step_finished_every),
                        reject=None if reject_steps is None else np.asarray(reject_steps, dtype=np.int64))
    if isinstance(approx, IntegratedAcceleration):   # acc / accRel (kraft2021 App. C): explicit predictors
        if iterative is not None or kraft_control is not None or cpl is not None:
            raise ValueError(f"approximation: {approx!r} is an explicit Jacobi/Gauss-Seidel predictor (kraft2021 "
                             "App. C); not with iterative schemes, Kraft's step/order control or a coupling method")
        opts.update(approx._run_options(system))
    balance = None if cpl is not None else coupling
    ecco = None if kraft_control is not None else step_control
    opts.update(_energy.run_options(system, balance, ecco, H))
    opts["smooth"] = _energy.smooth_option(approx, cpl, kraft_control, iterative)
    options.update(coupling=coupling, step_control=step_control)
    if cpl is not None:
        opts["coupling"] = cpl._options(system, H, t_end - t_start)
    opts["threads"] = _check_threads(threads, sname)
    parallel = _distributed.as_parallel(parallel, opts["threads"])
    if parallel is not None:
        opts.update(parallel.run_options(len(system.subsystems)))
    if iterative is not None:
        opts["scheme"] = iterative.spec(approx.spec()[1])
    if kraft_control is not None:
        opts["step_control"] = kraft_control._options(system, approx, iterative or sname, t_end - t_start, H)
        if iterative is not None:  # imMD/imCV/waCV: the iteration keeps the controller's degree κ (kraft2021 §19)
            opts["scheme"]["kappa"] = -1
    t0 = time.perf_counter()
    try:
        raw = _engine_run([s.spec() for s in system.subsystems], [s.spec() for s in solvers], x0v, ci, co, cg,
                        system.r, opts, False)
    finally:
        flush_logs(system)  # FMU log messages -> Python logging (also when the run failed)
    names = system.names
    if parallel is not None:   # each unit's counters from the process that integrated it
        raw = dict(raw)
        raw["stats"] = parallel.gather_stats(raw["stats"], opts["share_first"])
    _timing.augment(raw, names, t_end - t_start, _kappa(approx))
    options.update(last_step=last_step, divergence_growth=growth_limit)
    fields = _energy.result_fields(raw, system, balance, ecco)
    if cpl is not None:   # res.coupling_log is built on first access
        fields["coupling_log"] = functools.partial(cpl._log, system, raw.get("coupling_log"), H)
    return _finish(system, raw, time.perf_counter() - t0, options, names, fields, growth_limit)


def simulate_monolithic(system: CoupledSystem, t_end: float, H: float | None = None, *, t_eval=None,
                        solver: Solver | str | None = None, x0=None, start_values=None,
                        divergence_bound: float | None = None) -> Result:
    """The strongly coupled reference: all subsystems integrated together as one ODE, the coupling conditions
    u = L y + r solved exactly at every evaluation (no approximation of coupling variables).

    ``H`` is the output interval (default t_end/1000); ``t_eval`` gives the output times instead (e.g. the
    ``t`` of a co-simulation result, so that :meth:`Result.error_to` compares at identical points). ``solver`` defaults to :class:`Exact` for all-LTI
    systems (one matrix exponential of the monolithic system matrix; exact to rounding) and to
    ``CVODE(rtol=1e-10, atol=1e-12)`` otherwise; CVODE runs continuously without restarts across output points.
    ``x0``, ``start_values`` and ``divergence_bound`` as in :func:`simulate` (the reference is not checked for
    relative growth: a physically growing solution is not a numerical instability of the coupling).

    Examples
    --------
    >>> import cosim
    >>> ref = cosim.simulate_monolithic(cosim.models.two_mass_oscillator(ck=2e5, dk=200), t_end=0.1)
    >>> print(f"F(0.1 s) = {ref['S2.F'][-1]:.0f} N")
    F(0.1 s) = 7427 N
    """
    if not isinstance(system, CoupledSystem):
        raise TypeError(f"system: expected a cosim.CoupledSystem, got {type(system).__name__}")
    grid = None
    if t_eval is not None:
        if H is not None:
            raise TypeError("H: give either the output interval H or t_eval, not both")
        t_end, _ = _check_time(t_end, 1.0)
        grid = _grid(t_eval, t_end, "t_eval")
        H = float(np.max(np.diff(grid)))
    if H is None:
        t_end, _ = _check_time(t_end, 1.0)
        H = t_end / 1000 if t_end > 0 else 1.0
    t_end, H = _check_time(t_end, H)
    if solver is None:
        solver = Exact() if system.is_lti else CVODE(rtol=1e-10, atol=1e-12)
    solver = as_solver(solver)
    x0v = _x0(system, x0, start_values)
    bound = _default_bound(x0v, divergence_bound)
    opts = _run_options(t_end=t_end, H=H, divergence_bound=bound, grid=grid)
    options = dict(monolithic=True, solver=solver, H=H, t_end=t_end, t_eval=grid)
    t0 = time.perf_counter()
    if isinstance(solver, Exact):
        if not system.is_lti:
            raise ValueError("solver: Exact() needs an all-LTI system; use CVODE for nonlinear subsystems")
        A, b, _ = system.monolithic_lti()
        n = A.shape[0]
        spec = ("lti", "monolithic", A, b.reshape(n, 1), np.eye(n), np.zeros((n, 1)))
        e = np.zeros(0, dtype=np.int64)
        raw = _engine_run([spec], [solver.spec()], x0v, e, e, np.zeros(0), np.ones(1), opts, False)
        # outputs/inputs of the subsystems from the states: y = (I − D L)^{-1}(C z + D r), u = L y + r
        raw = dict(raw)
        raw["y"], raw["u"] = _coupled_outputs(system, raw["x"])
    else:
        raw = _engine_run([s.spec() for s in system.subsystems], [solver.spec()], x0v, *_connections(system),
                        system.r, opts, True)
        raw = dict(raw)
        raw["u"] = _coupled_inputs(system, raw["y"])
    return _finish(system, raw, time.perf_counter() - t0, options, ["monolithic"])


def _coupled_inputs(system, Y):
    """u = L y + r for every row of Y, with L applied as the sparse list of connections."""
    ci, co, cg = _connections(system)
    U = np.tile(system.r, (Y.shape[0], 1))
    np.add.at(U, (slice(None), ci), Y[:, co] * cg)
    return U


def _coupled_outputs(system, X):
    from scipy.linalg import block_diag, lu_factor, lu_solve
    C = block_diag(*[s.C for s in system.subsystems])
    D = block_diag(*[s.D for s in system.subsystems])
    M = np.eye(C.shape[0]) - D @ system.L   # invertible: monolithic_lti() checked it
    # one factorisation for all rows (np.linalg.solve with many right-hand sides: 2-3x slower for 600 001 rows);
    # non-finite states (a diverged reference) pass through as NaN/inf, as they would through solve
    Y = lu_solve(lu_factor(M), (X @ C.T + D @ system.r).T, check_finite=False).T
    U = Y @ system.L.T + system.r
    return Y, U
