"""Timing instrumentation and the counters of kraft2021 §16 (``simulate(..., timing=True)``).

Per subsystem L (``res.stats["subsystems"][name]``), with timing on:

* ``solver_time``: wall time of its integrations, Σ_N T^solv_{L,N} (also ``wall_time``);
* ``idle_time``: its wait at the macro barrier, Σ_N (max_L' T^solv_{L',N} − T^solv_{L,N}) (thesis eq. 4.5 with one
  core per subsystem);
* ``save_time``: save/restore of its state for rejected macro steps (the "solver workspace dump");
* ``interface_time``: the interface work of the master (predict, update, divergence check, accept), during which
  every subsystem waits: the same value for every subsystem.

Counters (always): ``mean_micro_step`` per subsystem (simulated time / micro steps), ``mean_H`` and
``kappa_histogram`` (fraction of the simulated time spent with approximation degree κ; from the accepted
steps' H and κ when ``step_control`` adapts them) for the run. With timing:
``stats["timing"]`` holds ``scheme_time`` (the units' stepping, including waits), ``interface_time``,
``save_time``, ``threads``, ``thread_idle_time`` (each thread's wait at the barrier), ``solver_time`` =
T^solv = max_L Σ_N T^solv_{L,N} and ``idle_time`` = T^idle = Σ_N max_L T^solv_{L,N} − T^solv (eq. 4.5), and
``idle_fraction`` = T^idle / (T^solv + T^idle).

Threads (kraft2021 §16; docs/chains.md "Threads"): ``run_time`` is the wall time of all macro steps, ``serial_time``
= ``run_time`` − ``scheme_time`` the master's serial part (predict, update, divergence check, accept, step control,
recording) and ``serial_fraction`` = ``serial_time`` / ``run_time``: with serial fraction s of a threads = 1 run,
Amdahl's law bounds the speed-up on n cores by n / (1 + (n − 1) s). Jacobi runs also give per thread
``thread_busy_time`` (wall seconds it ran units), ``thread_units`` (units on its list, balanced by their measured
CPU cost) and ``thread_stolen_units`` (units it took from other threads' lists when done with its own), and
``cpu_critical_time`` = Σ_N max_thread (CPU seconds of the units on that thread's list in step N): the units'
stepping time were every thread alone on a core; ``cpu_parallelism`` = Σ_L CPU_L / ``cpu_critical_time`` (at most
the number of threads) is the speed-up of the units' stepping that the distribution over threads allows,
independent of the machine's load.

Jacobi runs also measure each unit's steps with the CPU clock of the thread that ran it (CLOCK_THREAD_CPUTIME_ID):
per subsystem ``cpu_time`` and ``cpu_idle_time`` (eq. 4.5 with CPU clocks) and in ``stats["timing"]``
``cpu_solver_time``, ``cpu_idle_time``, ``cpu_idle_fraction``. On a shared machine wall clocks charge a preemption
to the unit that was running (and show it as idle time of all others); CPU clocks do not, so the CPU idle fraction
is the load imbalance of the units' own work. The same imbalance counted in right-hand sides (the units' work, the
same on every machine and in every run): per subsystem ``rhs_idle`` = Σ_N (max_L' r_{L',N} − r_{L,N}) with r_{L,N}
the right-hand sides unit L evaluated in macro step N, and ``rhs_idle_fraction`` (eq. 4.5 with r for T^solv).

The time model of kraft2021 §16.2 (thesis eqs. 4.1-4.4): :func:`scaling_order` fits the scaling order P of a
solver's time T ≈ a n^P from measured (n, T), :func:`cosim_time_estimate` is eq. (4.2) / (4.4), the ideal time of
a co-simulation with one core per subsystem.
"""
from __future__ import annotations

import numpy as np

from . import _check


def scaling_order(n, t):
    """Scaling order P of a computation time T ≈ a n^P (kraft2021 §16.2; thesis Sec. 5.7: P ≈ 1.2 with a sparse,
    P = 3 with a dense linear solver), fitted by least squares to log T = log a + P log n.

    Parameters
    ----------
    n : array_like
        Problem sizes (e.g. the number of bodies n_K), at least two different positive values.
    t : array_like
        Computation times T [s] at these sizes, positive.

    Returns
    -------
    (P, a) : tuple of float
        The exponent P and the factor a [s] of the fit.
    """
    n = _check.real_array(n, "n", "array of problem sizes").ravel()
    t = _check.real_array(t, "t", "array of times").ravel()
    if n.shape != t.shape:
        raise ValueError(f"t: expected one time per size ({n.size}), got {t.size}")
    for name, a in (("n", n), ("t", t)):
        if not np.all(np.isfinite(a) & (a > 0)):
            raise ValueError(f"{name}: must be finite and positive")
    if np.unique(n).size < 2:
        raise ValueError("n: need at least two different sizes to fit a scaling order")
    P, log_a = np.polyfit(np.log(n), np.log(t), 1)
    return float(P), float(np.exp(log_a))


def cosim_time_estimate(t_monolith, n_subsystems, P, corrector_iterations=0.0):
    """Ideal co-simulation time with one core per subsystem (kraft2021 eqs. 4.2 and 4.4):
    T_cosim ≈ (1 + n̄_cor) T_monolith / n_s^P, all overhead (F_solv, workspace dump, interface, communication)
    neglected; it predicts the solver time T^solv of the slowest subsystem.

    Parameters
    ----------
    t_monolith : float
        T_monolith [s], the monolithic solve's time.
    n_subsystems : int
        n_s, subsystems of equal size.
    P : float
        The solver's scaling order (:func:`scaling_order`).
    corrector_iterations : float
        n̄_cor, mean corrector iterations per macro step of an implicit scheme (0: explicit, eq. 4.2).
    """
    t_monolith = _check.real(t_monolith, "t_monolith", nonneg=True)
    n_s = _check.integer(n_subsystems, "n_subsystems", 1)
    P = _check.real(P, "P", nonneg=True)
    n_cor = _check.real(corrector_iterations, "corrector_iterations", nonneg=True)
    return (1.0 + n_cor) * t_monolith / n_s ** P


def augment(raw, names, t_end, kappa):
    """Add the §16 counters and the timing breakdown to a raw result of ``_core.run`` (in place; returns raw)."""
    stats = raw.get("stats") or []
    timing = raw.get("timing")
    extra = {}
    steps = raw.get("macro_steps", 0)
    extra["mean_H"] = t_end / steps if steps else None
    if kappa is not None and steps:
        extra["kappa_histogram"] = {int(kappa): 1.0}
    sc = raw.get("step_control")
    if sc and len(sc.get("H", ())) and len(sc.get("k", ())) == len(sc["H"]):
        # adaptive degree (cosim.StepControl): the share of the simulated time of each κ
        Hs, ks = np.asarray(sc["H"], dtype=float), np.asarray(sc["k"]).astype(int)
        total = float(Hs.sum())
        if total > 0:
            extra["kappa_histogram"] = {int(k): float(Hs[ks == k].sum() / total) for k in np.unique(ks)}
    for st in stats:
        n = st.get("steps", 0)
        st["mean_micro_step"] = t_end / n if n else None
        if timing is not None and "wall_time" in st:
            st["solver_time"] = st["wall_time"]
            st["interface_time"] = timing["interface_time"]
    if timing is not None and stats:
        solv = [st.get("wall_time", 0.0) for st in stats]
        t_solv = max(solv)
        # Σ_N max_L T_{L,N} = idle_L + T_L for any L (the idle time of L is measured against the step maxima)
        sum_max = stats[0].get("idle_time", 0.0) + solv[0]
        t_idle = max(0.0, sum_max - t_solv)
        timing = dict(timing, solver_time=t_solv, idle_time=t_idle,
                      idle_fraction=t_idle / (t_solv + t_idle) if t_solv + t_idle > 0 else 0.0)
        cpu, cidle = timing.pop("unit_cpu_time", None), timing.pop("unit_cpu_idle_time", None)
        if cpu is not None and len(cpu) == len(stats):
            for st, c, ci in zip(stats, cpu, cidle):
                st["cpu_time"], st["cpu_idle_time"] = c, ci
            c_solv = max(cpu)
            c_idle = max(0.0, cidle[0] + cpu[0] - c_solv)
            timing.update(cpu_solver_time=c_solv, cpu_idle_time=c_idle,
                          cpu_idle_fraction=c_idle / (c_solv + c_idle) if c_solv + c_idle > 0 else 0.0)
            rhs, ridle = timing.pop("unit_rhs_work", None), timing.pop("unit_rhs_idle", None)
            if rhs is not None and len(rhs) == len(stats):
                for st, ri in zip(stats, ridle):
                    st["rhs_idle"] = ri
                r_solv = max(rhs)
                r_idle = max(0.0, ridle[0] + rhs[0] - r_solv)
                timing["rhs_idle_fraction"] = r_idle / (r_solv + r_idle) if r_solv + r_idle > 0 else 0.0
            crit = timing.get("cpu_critical_time")
            if crit:
                timing["cpu_parallelism"] = sum(cpu) / crit
        run = timing.get("run_time", 0.0)
        timing["serial_time"] = max(0.0, run - timing["scheme_time"])
        timing["serial_fraction"] = timing["serial_time"] / run if run > 0 else 0.0
        extra["timing"] = timing
    raw["extra_stats"] = extra
    return raw
