"""Run under ``mpiexec -n P`` by tests/test_mpi.py: every case distributed over the P processes
(``parallel=cosim.MPI()``) and, on rank 0, once more in this process alone with ``threads=1``; the two must agree bit
for bit (records t, x, y, u, the step and iteration counts, each subsystem's counters), and every rank must hold the
same result. Prints one line per case and exits 1 on any difference."""
import sys
import zlib

import numpy as np

import cosim
from cosim import models
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def chain(n_subsystems=7):
    return models.oscillator_chain(preset="table5.3", n_bodies=28, n_subsystems=n_subsystems, seed=2)


CVODE = cosim.CVODE(rtol=1e-6, atol=1e-9)
CASES = {
    "jacobi": lambda **kw: cosim.simulate(chain(), 2e-4, 2e-5, solver=CVODE, approximation=cosim.Lagrange(1), **kw),
    "jacobi-t_eval": lambda **kw: cosim.simulate(chain(), 2e-4, 4e-5, solver=CVODE, approximation=cosim.Lagrange(1),
                                                 t_eval=np.linspace(0, 2e-4, 23), **kw),
    "gauss-seidel": lambda **kw: cosim.simulate(chain(), 2e-4, 2e-5, solver=CVODE, scheme="gauss-seidel",
                                                approximation=cosim.Lagrange(1), **kw),
    "exMD": lambda **kw: cosim.simulate(chain(), 4e-4, 1e-5, solver=CVODE, approximation=cosim.Lagrange(1),
                                        step_control=cosim.StepControl("exMD", 1e-4), **kw),
    "implicit-fd": lambda **kw: cosim.simulate(chain(), 2e-4, 2e-5, solver=CVODE, approximation=cosim.Lagrange(1),
                                               scheme=cosim.Implicit(jacobian="fd", tol=1e-12, max_iter=30), **kw),
}


def fingerprint(res):
    """Everything compared, as bytes."""
    parts = [np.ascontiguousarray(a).tobytes() for a in (res.t, res.X, res.Y, res.U)]
    st = res.stats
    keys = ("macro_steps", "rejected_steps", "iterations")
    parts.append(repr([st.get(k) for k in keys]).encode())
    parts.append(repr(np.asarray(st.get("iterations_per_step", [])).tolist()).encode())
    parts.append(repr(sorted((n, sorted(s.items())) for n, s in st["subsystems"].items())).encode())
    return b"".join(parts)


failed = 0
only = sys.argv[1:]
for name, run in CASES.items():
    if only and name not in only:
        continue
    res = run(parallel=cosim.MPI())
    dist = fingerprint(res)
    same_on_ranks = len(set(comm.allgather(zlib.crc32(dist)))) == 1
    if rank == 0:
        ref = fingerprint(run(threads=1))
        ok = same_on_ranks and ref == dist
        failed += not ok
        st = res.stats
        print(f"{name}: {'bit-identical to threads=1' if ok else 'DIFFERS from threads=1'} on {comm.Get_size()} "
              f"processes (ranks agree: {same_on_ranks}; {st['macro_steps']} macro steps, {st['rejected_steps']} "
              f"rejected, {st.get('iterations', 0)} iterations)", flush=True)

# a failing unit on the last process (S6 of S1..S7): every process raises its error, broadcast from there
system = chain()
solvers = {n: CVODE for n in system.names}
solvers["S6"] = cosim.CVODE(max_steps=1)
try:
    cosim.simulate(system, 2e-4, 2e-5, solver=solvers, parallel=cosim.MPI())
    msg = "no error"
except cosim.SolverError as exc:
    msg = str(exc)
msgs = comm.allgather(msg)
if rank == 0:
    ok = len(set(msgs)) == 1 and "subsystem S6" in msgs[0]
    failed += not ok
    print(f"failure: {'the same error on every process' if ok else 'DIFFERS: ' + repr(msgs)}: {msgs[0][:100]}")
# one process alone (a communicator of size 1): the same result
solo = comm.Split(color=rank, key=0)
if rank == 0:
    ok = fingerprint(CASES["jacobi"](parallel=cosim.MPI(solo))) == fingerprint(CASES["jacobi"](threads=1))
    failed += not ok
    print(f"one-process: {'bit-identical to threads=1' if ok else 'DIFFERS from threads=1'} on 1 process")
solo.Free()

# what cannot be distributed is refused by every process (waveform relaxation)
try:
    cosim.simulate(chain(), 2e-4, 2e-5, solver=CVODE, approximation=cosim.Lagrange(1),
                   scheme=cosim.WaveformRelaxation(tol=1e-8, max_iter=20), parallel=cosim.MPI())
    msg = "no error"
except ValueError as exc:
    msg = str(exc)
msgs = comm.allgather(msg)
if rank == 0:
    ok = len(set(msgs)) == 1 and msgs[0].startswith("parallel: scheme must be")
    failed += not ok
    print(f"refused: waveform relaxation {'on every process' if ok else 'DIFFERS: ' + repr(msgs)}: {msgs[0]}")
sys.exit(1 if comm.bcast(failed, root=0) else 0)
