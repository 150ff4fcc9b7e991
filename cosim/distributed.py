"""Units distributed over MPI processes: ``simulate(..., parallel=cosim.MPI())`` under ``mpiexec -n P``.

kraft2021 §16 ran one MPI rank per subsystem. Here every process runs the whole master with the same data, so all
of them take the same decisions (step sizes, rejections, Newton iterations) in the same order; only the units'
integrations are split: process p integrates the contiguous block of units ``first[p] .. first[p+1]-1``
(``cosim.distributed.blocks``), and after each batch of integrations one ``MPI_Allgatherv`` hands every process the states (fd
Jacobian blocks, comparative states of exLE/exMD) the others computed. Every number is computed once by the same
code and copied, so the result is the one of ``threads=1`` bit for bit, on every process (``Result`` on each rank;
the per-unit counters of ``res.stats["subsystems"]`` come from the process that integrated the unit).

The exchange is the optional extension ``cosim._mpi`` (built where ``mpicc`` is found) over the communicator of
mpi4py (``pip install "cosim[mpi]"``, mpi4py built against the same MPI). docs/chains.md, "Beyond one machine: MPI".
"""
from __future__ import annotations

import numpy as np

from ._extras import require

BUILD_HINT = ("cosim was built without MPI: the optional extension cosim._mpi is missing (no mpicc/mpi.h when it "
              "was built). Install an MPI and rebuild, e.g. on Debian: apt-get install libopenmpi-dev openmpi-bin; "
              "pip install --no-binary mpi4py mpi4py; pip install --no-build-isolation -e . (or make mpi-deps build)")


def blocks(n: int, size: int) -> np.ndarray:
    """The first unit of each of ``size`` processes for ``n`` units, and ``n`` at the end (``size + 1`` entries):
    contiguous blocks whose sizes differ by at most one, the larger ones first (process p gets units
    ``first[p] .. first[p+1]-1``; with more processes than units some get none).

    Examples
    --------
    >>> blocks(5, 2).tolist()
    [0, 3, 5]
    """
    q, r = divmod(int(n), int(size))
    return np.array([p * q + min(p, r) for p in range(int(size) + 1)], dtype=np.int64)


class MPI:
    """The units of a co-simulation distributed over the processes of an MPI communicator.

    Every process of ``comm`` calls :func:`cosim.simulate` with the same arguments; each integrates its block of
    units (``cosim.distributed.blocks``), one collective per batch of integrations exchanges the results, and every process
    returns the same :class:`cosim.Result`, bit-identical to ``threads=1`` in one process. Schemes: Jacobi (one
    exchange per macro step), Gauss-Seidel (one per unit and step: the units still run one after another),
    :class:`cosim.Implicit` (one per sweep and per fd Jacobian); Kraft's step control (exLE/exMD integrate their
    comparisons distributed too). Subsystems must be models (LTI, ODE, CModel; no FMUs), the coupling the
    signal-based one (approximations; no balance correction, NEPCE or PreStep), one thread per process.

    Parameters
    ----------
    comm : mpi4py.MPI.Intracomm, optional
        The processes that share the run; default ``mpi4py.MPI.COMM_WORLD``.

    Examples
    --------
    Run as ``mpiexec -n 4 python script.py``::

        import cosim
        chain = cosim.models.oscillator_chain(64, 8)
        res = cosim.simulate(chain, t_end=1.0, H=1e-3, parallel=cosim.MPI())
    """

    def __init__(self, comm=None):
        self.comm = comm

    def __repr__(self):
        return "MPI()" if self.comm is None else f"MPI(comm={self.comm!r})"

    def communicator(self):
        """The communicator (``COMM_WORLD`` by default); ImportError naming ``cosim[mpi]`` without mpi4py."""
        require("mpi", "simulate(parallel=cosim.MPI())")
        from mpi4py import MPI as _M
        comm = _M.COMM_WORLD if self.comm is None else self.comm
        if not isinstance(comm, _M.Intracomm):
            raise TypeError(f"comm: expected an mpi4py.MPI.Intracomm, got {type(comm).__name__}")
        return comm

    def run_options(self, nunits: int) -> dict:
        """The engine's options of a distributed run: the backend capsule over the communicator and the blocks."""
        require("mpi", "simulate(parallel=cosim.MPI())")
        try:   # before MPI starts (importing mpi4py.MPI initialises it)
            from . import _mpi
        except ImportError:
            raise ImportError(BUILD_HINT, name="cosim._mpi") from None
        comm = self.communicator()
        from mpi4py import MPI as _M
        return dict(share=_mpi.backend(_M._addressof(comm)), share_first=blocks(nunits, comm.Get_size()))

    def gather_stats(self, stats: list | None, first) -> list | None:
        """Each unit's counters from the process that integrated it (a collective: every process calls it)."""
        if stats is None:
            return None
        comm = self.communicator()
        rank = comm.Get_rank()
        mine = stats[first[rank]:first[rank + 1]]
        return [s for part in comm.allgather(mine) for s in part]


def as_parallel(parallel, threads: int):
    """``simulate(parallel=...)`` checked: None (this process), ``"mpi"`` (``MPI()``) or an :class:`MPI`."""
    if parallel is None:
        return None
    if isinstance(parallel, str):
        if parallel != "mpi":
            raise ValueError(f"parallel: must be None, 'mpi' or cosim.MPI(...), got {parallel!r}")
        parallel = MPI()
    if not isinstance(parallel, MPI):
        raise TypeError(f"parallel: expected None, 'mpi' or cosim.MPI(...), got {type(parallel).__name__}")
    if threads != 1:
        raise ValueError(f"parallel: one thread per process (threads=1) with MPI, got threads={threads}; "
                         f"start more processes instead")
    return parallel
