"""Benchmark: the FMU two-mass oscillator (tests/fmus/, FMI 2.0 co-simulation, force/displacement halves) run by
cosim and by its peers on the same FMUs and settings (Jacobi, ZOH, consistent update, H = 1e-4, t_end = 1 s: 10 000
macro steps).

The FMUs integrate with n_steps RK4 steps per doStep (an integer parameter of the fixture). Each peer runs at
n_steps = 10, where the FMUs' own doStep is most of cosim's run, and at n_steps = 1, where the runs measure the
masters. The FMUs' own work is estimated from the two cosim runs (10/9 of their difference): with it the script prints
the largest ratio any master could reach against the FMPy loop at n_steps = 10.

Peers:
* "FMPy master": the loop an FMPy user writes (fmpy.fmi2.FMU2Slave: setReal, doStep, getReal per unit and step,
  the outputs exchanged at the macro points exactly as cosim's consistent update does). Both tools unpack the FMUs
  (model description, unzip) once, outside the timing; every timed run instantiates, initialises, steps and frees;
* fmpy.simulate_fmu for a single FMU (Mass1, input held at 0), co-simulation and model exchange (Euler): it starts
  from the .fmu file, so cosim's time includes cosim.FMU(path) here;
* libcosimpy (0.0.6, libcosim's fixed-step master) on the same two FMUs and connections, from the files, as above;
* OMSimulator where it is installed (pip: only an sdist whose build fails here); otherwise the script says so.

Prints the agreement (max |difference| relative to the signal's max) and the wall-time ratio peer / cosim (target:
>= 10), best of 5 (cosim) and of 3 (peers). Usage: .venv/bin/python benchmarks/fmu.py [--t-end 1.0] [--H 1e-4]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time
import zipfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests" / "fmus"))
import build  # noqa: E402

import cosim  # noqa: E402


def best(f, repeat=3):
    out, tmin = None, np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        tmin = min(tmin, time.perf_counter() - t0)
    return out, tmin


def fmpy_unpack(p1, p2):
    """What both tools do once per FMU file, outside the timed runs: read the model description and unzip (cosim:
    the cosim.FMU constructor, which also loads the binary)."""
    import fmpy
    return [(fmpy.read_model_description(p), fmpy.extract(p)) for p in (p1, p2)]


def fmpy_master(unpacked, t_end, H, n_steps):
    """Jacobi/ZOH master over two FMPy FMU2Slave units; returns (t, [x1, v1, F]). FMPy ties the binary to the
    instance (freeInstance unloads it), so each run loads it again, as fmpy.simulate_fmu(unzipdir=...) does: a
    dlopen of these small binaries takes well under a millisecond."""
    from fmpy.fmi2 import FMU2Slave
    units = []
    for (md, d), name in zip(unpacked, ("S1", "S2")):
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
                        instanceName=name)
        fmu.instantiate()
        fmu.setInteger([20], [n_steps])  # the fixture's n_steps (RK4 steps per doStep, tests/fmus/oscillator.h)
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        units.append(fmu)
    s1, s2 = units
    # value references of the fixture (tests/fmus/oscillator.h): x 0, v 1, in0 10, in1 11, F 12
    n = int(round(t_end / H))
    out = np.empty((n + 1, 3))
    t = np.arange(n + 1) * H
    x, v = s1.getReal([0, 1])
    s2.setReal([10, 11], [x, v])
    F = s2.getReal([12])[0]
    s1.setReal([10], [F])
    out[0] = (x, v, F)
    for k in range(n):
        T = k * H
        s1.doStep(T, H)
        s2.doStep(T, H)
        x, v = s1.getReal([0, 1])
        s2.setReal([10, 11], [x, v])
        F = s2.getReal([12])[0]
        s1.setReal([10], [F])
        out[k + 1] = (x, v, F)
    for u in units:
        u.terminate()
        u.freeInstance()
    return t, out


def libcosim_master(p1, p2, t_end, H, n_steps):
    """libcosimpy (libcosim's fixed-step master, step in ns) on the same two FMUs; returns (t, x1)."""
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave
    log_output_level(CosimLogLevel.ERROR)
    ex = CosimExecution.from_step_size(step_size=int(round(H * 1e9)))
    i1 = ex.add_local_slave(CosimLocalSlave(fmu_path=str(p1), instance_name="S1"))
    i2 = ex.add_local_slave(CosimLocalSlave(fmu_path=str(p2), instance_name="S2"))
    # value references of the fixture: x 0, v 1, in0 10, in1 11, F 12
    ex.connect_real_variables(i1, 0, i2, 10)
    ex.connect_real_variables(i1, 1, i2, 11)
    ex.connect_real_variables(i2, 12, i1, 10)
    for i in (i1, i2):
        ex.integer_initial_value(i, 20, n_steps)
    n = int(round(t_end / H))
    obs = CosimObserver.create_time_series(buffer_size=n + 10)
    ex.add_observer(obs)
    obs.start_time_series(i1, 0, CosimVariableType.REAL)
    ex.simulate_until(target_time=int(round(t_end * 1e9)))
    times, _, x = obs.time_series_real_samples(i1, 0, 0, n + 1)
    return np.asarray(times) * 1e-9, np.asarray(x)


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(b))))


def cosim_pair(p1, p2, n_steps):
    s1 = cosim.FMU(p1, name="S1", kind="cs", start_values={"n_steps": n_steps})
    s2 = cosim.FMU(p2, name="S2", kind="cs", start_values={"n_steps": n_steps})
    return cosim.CoupledSystem([s1, s2], [cosim.connect("S2.F", "S1.F"), cosim.connect("S1.x", "S2.x_in"),
                                          cosim.connect("S1.v", "S2.v_in")])


def row(name, t_peer, t_cosim, diff, note=""):
    print(f"{name:46s} {t_peer * 1e3:9.2f} {t_cosim * 1e3:9.2f} {t_peer / t_cosim:7.1f} {diff:13.3g}{note}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--H", type=float, default=1e-4)
    a = ap.parse_args(argv)
    t_end, H = a.t_end, a.H
    tmp = tempfile.TemporaryDirectory(prefix="cosim_bench_fmu_")
    p1 = build.build_fmu(tmp.name, 1, 2)
    p2 = build.build_fmu(tmp.name, 2, 2)
    n = int(round(t_end / H))
    print(f"two-mass oscillator FMUs (FMI 2.0 CS), Jacobi/ZOH, H = {H:g}, t_end = {t_end:g} ({n} macro steps); "
          "best of 5 (cosim) and of 3 (peers)")
    print(f"{'peer':46s} {'peer ms':>9s} {'cosim ms':>9s} {'ratio':>7s} {'max rel diff':>13s}")

    # Every peer at two settings of the FMUs' own work, n_steps (their RK4 steps per doStep; the same for every
    # master): 10, where the FMUs' doStep alone takes about 9 ms of a run (a C loop calling nothing but doStep), and
    # 1, where the runs measure the masters.
    import fmpy
    loop = {}
    for n_steps in (10, 1):
        start = {"n_steps": n_steps}
        # the master loop: the FMUs unpacked once (model description, unzip) by both tools outside the timing;
        # each run instantiates, initialises, steps and frees the instances
        system = cosim_pair(p1, p2, n_steps)
        res, t_cosim = best(lambda: cosim.simulate(system, t_end=t_end, H=H), repeat=5)
        unpacked = fmpy_unpack(p1, p2)
        (t, Y), t_fmpy = best(lambda: fmpy_master(unpacked, t_end, H, n_steps))
        row(f"FMPy master (FMU2Slave loop), n_steps = {n_steps}", t_fmpy, t_cosim, rel(res.Y, Y))
        loop[n_steps] = (t_cosim, t_fmpy)

        # from the .fmu file to the result (fmpy.simulate_fmu and libcosim load the FMUs in every run): cosim times
        # the same, cosim.FMU(path) included
        def single(kind, **kw):
            u = cosim.FMU(p1, name="S1", kind=kind, start_values=start)
            return cosim.simulate(cosim.CoupledSystem([u], [], allow_unconnected=True), t_end=t_end, H=H, **kw)
        r1, t_c1 = best(lambda: single("cs"), repeat=5)
        ref, t_f1 = best(lambda: fmpy.simulate_fmu(str(p1), fmi_type="CoSimulation", stop_time=t_end, step_size=H,
                                                   output_interval=H, output=["x", "v"], start_values=start))
        row(f"fmpy.simulate_fmu CS (Mass1 alone), n_steps = {n_steps}", t_f1, t_c1, rel(r1["S1.x"], ref["x"]))
        res, t_path = best(lambda: cosim.simulate(cosim_pair(p1, p2, n_steps), t_end=t_end, H=H), repeat=5)
        try:
            (tl, xl), t_lc = best(lambda: libcosim_master(p1, p2, t_end, H, n_steps))
            m = len(tl)
            ok = np.allclose(tl, res.t[:m], rtol=0, atol=1e-9)
            d = rel(res["S1.x"][:m], xl) if ok else float("nan")
            row(f"libcosimpy (S1.x), n_steps = {n_steps}", t_lc, t_path, d,
                f"   ({m} samples{'' if ok else ', time grids differ'})")
        except Exception as e:  # not installed or not importable
            print(f"libcosimpy: not available ({type(e).__name__}: {e})")

    work = (loop[10][0] - loop[1][0]) * 10 / 9
    print(f"the FMUs' own doStep work at n_steps = 10: about {work * 1e3:.1f} ms of cosim's {loop[10][0] * 1e3:.1f} ms; "
          f"no master can be more than {loop[10][1] / work:.1f}x faster than the FMPy loop there")

    # model exchange: the FMU's derivatives integrated by the master (no n_steps)
    def single_me():
        u = cosim.FMU(p1, name="S1", kind="me")
        return cosim.simulate(cosim.CoupledSystem([u], [], allow_unconnected=True), t_end=t_end, H=H,
                              solver=cosim.Euler(substeps=1))
    r2, t_c2 = best(single_me, repeat=5)
    ref2, t_f2 = best(lambda: fmpy.simulate_fmu(str(p1), fmi_type="ModelExchange", solver="Euler", stop_time=t_end,
                                                step_size=H, output_interval=H, output=["x", "v"]))
    row("fmpy.simulate_fmu ME Euler (Mass1 alone)", t_f2, t_c2, rel(r2["S1.x"], ref2["x"]))
    loading(tmp.name, p1)
    try:
        __import__("OMSimulator")
        print("OMSimulator: installed, but no driver for it in this script (not compared)")
    except Exception as e:
        print(f"OMSimulator: not available ({type(e).__name__}: {e}; `pip install OMSimulator` finds only an sdist "
              "whose build fails here)")
    tmp.cleanup()


def loading(tmp, path, repeat=20):
    """What one FMU costs before it runs: cosim.FMU(path) the first time for a content (unzip, defused XML check,
    model description, dlopen) and again (cosim/_fmu_cache.py: a stat and the dlopen of a loaded library), against
    FMPy's unzip + read_model_description + instantiate/free (what fmpy.simulate_fmu does per call)."""
    import shutil
    import fmpy
    from fmpy.fmi2 import FMU2Slave
    firsts = []
    for k in range(5):   # a new content each time: the archive with one more (ignored) member
        q = pathlib.Path(tmp) / f"load{k}.fmu"
        shutil.copy(path, q)
        with zipfile.ZipFile(q, "a") as z:
            z.writestr(f"documentation/{k}.txt", str(k))
        t0 = time.perf_counter()
        cosim.FMU(q, kind="cs")
        firsts.append(time.perf_counter() - t0)
    # the runs before leave many objects for Python's cyclic GC (FMPy's results): a collection first, so that the
    # timings measure loading and not the collector (measured: 2-3 ms "again" without it, 0.11 ms with it)
    import gc
    gc.collect()
    _, t_again = best(lambda: cosim.FMU(path, kind="cs"), repeat=repeat)

    def fmpy_load():
        d = fmpy.extract(str(path))
        md = fmpy.read_model_description(d)
        f = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
                      instanceName="S1")
        f.instantiate()
        f.freeInstance()
        shutil.rmtree(d, ignore_errors=True)
    _, t_fmpy = best(fmpy_load, repeat=5)
    print(f"loading one FMU: cosim.FMU(path) first {min(firsts) * 1e3:.2f} ms, again {t_again * 1e3:.3f} ms; "
          f"FMPy unzip + model description + instantiate {t_fmpy * 1e3:.2f} ms "
          f"(ratio again: {t_fmpy / t_again:.0f}x)")


if __name__ == "__main__":
    main()
