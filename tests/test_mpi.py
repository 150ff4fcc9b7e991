"""Units distributed over MPI processes (cosim.MPI, docs/chains.md "Beyond one machine: MPI"): tests/mpi/cases.py
under ``mpiexec -n 3 --oversubscribe`` on loopback compares fixed-step Jacobi (with and without dense output),
Gauss-Seidel, exMD step control and the implicit scheme with fd Jacobians bit for bit with threads=1, and a failing
unit's error on every process, one process alone (a communicator of size 1) and the refusal of what cannot be
distributed. The MPI runs stay in their own processes: MPI is never started inside the test process. Without MPI the package still imports and cosim.MPI says what is missing."""
import os
import shutil
import subprocess
import sys
import pathlib

import pytest

import cosim
from cosim import distributed

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def _have_mpi():
    try:
        import mpi4py  # noqa: F401
        from cosim import _mpi  # noqa: F401
    except ImportError:
        return False
    return shutil.which("mpiexec") is not None


# `make test` installs MPI first (make mpi-deps); a machine without it skips the distributed runs only
needs_mpi = pytest.mark.skipif(not _have_mpi(), reason="no MPI here (make mpi-deps installs Open MPI and mpi4py)")


@needs_mpi
def test_three_processes_bit_identical_to_one_thread():
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",   # CI runs as root
               OMPI_MCA_btl="self,vader,tcp", OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo",
               OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_mpi_yield_when_idle="1")
    cmd = ["mpiexec", "-n", "3", "--oversubscribe", sys.executable, str(HERE / "mpi" / "cases.py")]
    out = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    lines = out.stdout.splitlines()
    assert out.returncode == 0, out.stdout + out.stderr
    for case in ("jacobi", "jacobi-t_eval", "gauss-seidel", "exMD", "implicit-fd"):
        assert any(l.startswith(f"{case}: bit-identical to threads=1 on 3 processes") for l in lines), out.stdout
    assert any(l.startswith("one-process: bit-identical to threads=1 on 1 process") for l in lines), out.stdout
    assert any(l.startswith("failure: the same error on every process") for l in lines), out.stdout
    assert any(l.startswith("refused: waveform relaxation") for l in lines), out.stdout


def test_blocks_cover_every_unit_once():
    for n in (1, 2, 7, 64):
        for size in (1, 2, 3, 8, 100):
            first = distributed.blocks(n, size)
            assert first[0] == 0 and first[-1] == n and len(first) == size + 1
            sizes = first[1:] - first[:-1]
            assert sizes.min() >= 0 and sizes.max() - sizes.min() <= 1


def test_parallel_argument_checked():
    system = cosim.models.two_mass_oscillator()
    with pytest.raises(ValueError, match="parallel: must be None, 'mpi'"):
        cosim.simulate(system, 0.01, 1e-3, parallel="threads")
    with pytest.raises(TypeError, match="parallel: expected None"):
        cosim.simulate(system, 0.01, 1e-3, parallel=3)
    with pytest.raises(ValueError, match="parallel: one thread per process"):
        cosim.simulate(system, 0.01, 1e-3, parallel="mpi", threads=2)


def test_without_the_mpi_extension_the_message_says_what_is_missing(monkeypatch):
    pytest.importorskip("mpi4py")
    monkeypatch.setitem(sys.modules, "cosim._mpi", None)   # as if built without mpicc
    monkeypatch.delattr(cosim, "_mpi", raising=False)
    with pytest.raises(ImportError, match="built without MPI.*libopenmpi-dev"):
        cosim.simulate(cosim.models.two_mass_oscillator(), 0.01, 1e-3, parallel=cosim.MPI())


def test_without_mpi4py_the_message_names_the_extra(monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "mpi4py" else real(name, *a))
    with pytest.raises(ImportError, match=r"cosim\[mpi\]"):
        cosim.simulate(cosim.models.two_mass_oscillator(), 0.01, 1e-3, parallel="mpi")
