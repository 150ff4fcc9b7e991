"""Units distributed over MPI processes (issue 32 part 2; docs/chains.md "Beyond one machine: MPI"): wall time of
the same co-simulation with P = 1 and 2 processes (``mpiexec -n P``, ``parallel=cosim.MPI()``) against threads = 1
and 2 in one process, best of N; every distributed result is checked bit for bit against threads = 1.

    .venv/bin/python benchmarks/mpi.py            # Table 5.4 chain, n_K = 1000 in 10 units (about a minute)
    .venv/bin/python benchmarks/mpi.py --quick    # smaller (seconds)

The run is Section 1 of benchmarks/chains.py: CVODE band units, explicit Jacobi, Lagrange κ = 1, H = 1e-8 s.
Under ``--worker`` the script is one MPI process of a measurement.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import cosim  # noqa: E402
from cosim.models import oscillator_chain  # noqa: E402
from engine import best_of  # noqa: E402  (benchmarks/engine.py)


def case(quick):
    n_bodies = 200 if quick else 1000
    system = oscillator_chain(preset="table5.4", n_bodies=n_bodies, n_subsystems=10)
    t_end = 2e-7 if quick else 2e-6
    kw = dict(t_end=t_end, H=1e-8, approximation=cosim.Lagrange(k=1), divergence_growth=math.inf,
              solver=cosim.CVODE(rtol=1e-6, atol=1e-9, linear_solver="band"), output_interval=t_end / 10)
    return system, kw, n_bodies


def digest(res):
    return zlib.crc32(b"".join(a.tobytes() for a in (res.t, res.X, res.Y, res.U)))


def worker(quick, repeats):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    system, kw, _ = case(quick)
    times = []
    for _ in range(repeats):
        comm.Barrier()
        t0 = time.perf_counter()
        res = cosim.simulate(system, parallel=cosim.MPI(), **kw)
        times.append(comm.allreduce(time.perf_counter() - t0, op=MPI.MAX))
    if comm.Get_rank() == 0:
        print(f"{min(times)!r} {digest(res)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--worker", action="store_true")
    a = ap.parse_args()
    if a.worker:
        return worker(a.quick, a.repeats)
    system, kw, n_bodies = case(a.quick)
    print(f"== MPI processes against threads (Table 5.4 chain, n_K = {n_bodies}, n_s = 10, CVODE band, "
          f"H = 1e-8 s, t_end = {kw['t_end']:g} s, best of {a.repeats})")
    t = {}
    for th in (1, 2):
        t[f"threads={th}"], res = best_of(lambda: cosim.simulate(system, threads=th, **kw), a.repeats)
        if th == 1:
            ref = digest(res)
    if not shutil.which("mpiexec"):
        print("  mpiexec not found: make mpi-deps")
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
               OMPI_MCA_mpi_yield_when_idle="1")   # a waiting process yields its core (shared machines)
    for P in (1, 2):
        cmd = ["mpiexec", "-n", str(P), "--oversubscribe", sys.executable, __file__, "--worker",
               "--repeats", str(a.repeats)] + (["--quick"] if a.quick else [])
        out = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if out.returncode:
            print(f"  P = {P}: failed\n{out.stdout}{out.stderr}")
            return
        secs, dig = out.stdout.split()[-2:]
        t[f"P={P}"] = float(secs)
        if int(dig) != ref:
            print(f"  P = {P}: result DIFFERS from threads=1")
    for k, v in t.items():
        print(f"  {k:10s} {v:8.3f} s   speed-up over threads=1: {t['threads=1'] / v:5.2f}x")
    print(f"  P=2 against threads=2: {t['threads=2'] / t['P=2']:.2f} (above 1: MPI faster); every MPI result "
          f"bit-identical to threads=1")


if __name__ == "__main__":
    main()
