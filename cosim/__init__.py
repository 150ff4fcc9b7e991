"""cosim: co-simulation of coupled ODE subsystems with a C core.

Subsystems (:class:`LTI`, :class:`ODE`, :class:`CModel`) are coupled by :func:`connect` into a
:class:`CoupledSystem` and co-simulated by :func:`simulate` with a coupling approximation (:class:`ZOH`,
:class:`Lagrange`, :class:`ExtrapolatedInterpolation`, :class:`Hermite`), a scheme ("jacobi", "gauss-seidel") and
an integrator (:class:`CVODE`, :class:`RK4`, :class:`Euler`, :class:`Exact`). :func:`simulate_monolithic` gives the
strongly coupled reference. Shared defaults of :func:`simulate` and :mod:`cosim.analysis` live in
:mod:`cosim.defaults`; amplitude measures (growth, genser2020's 20 % rule) in :mod:`cosim.metrics`.
"""
from . import _core  # noqa: F401
from .approximations import (ExtrapolatedInterpolation, Hermite, IntegratedAcceleration, Lagrange, LeastSquares,
                             RelaxedAcceleration, ZOH)
from .coupling import FOH, NEPCE, MBCorr, PreStep, PythonCoupling, Quadratic
from .errors import CosimError, ConvergenceError, CouplingInstabilityWarning, DivergenceError, SolverError, StepSizeError
from .schemes import Implicit, WaveformRelaxation
from .result import Result, read_csv
from .simulate import simulate, simulate_monolithic
from .solvers import CVODE, RK4, Euler, Exact
from .distributed import MPI
from .solvers import AB2
from .energy import BalanceCorrection, ECCO
from .stepper import Stepper
from .system import LTI, ODE, CModel, CoupledSystem, Subsystem, cfunc_signature, connect
from . import models  # noqa: E402
from . import analysis, defaults, metrics, plot, sysid, verdict  # noqa: E402
from . import control  # noqa: E402
from .control import StepControl  # noqa: E402
from .fmu import FMU  # noqa: E402
from .explore import explore  # noqa: E402

__version__ = "0.1.0"

__all__ = ["simulate", "simulate_monolithic", "MPI", "CoupledSystem", "LTI", "ODE", "CModel", "Subsystem", "connect",
           "ZOH", "Lagrange", "ExtrapolatedInterpolation", "Hermite", "LeastSquares", "IntegratedAcceleration",
           "RelaxedAcceleration", "CVODE", "RK4", "Euler", "Exact", "Result", "Stepper",
           "CosimError", "DivergenceError", "CouplingInstabilityWarning", "verdict", "SolverError", "cfunc_signature", "models", "sysid", "analysis", "plot",
           "defaults", "metrics", "AB2", "BalanceCorrection", "ECCO", "PreStep", "MBCorr", "PythonCoupling", "NEPCE", "FOH", "Quadratic",
           "Implicit", "WaveformRelaxation", "read_csv", "ConvergenceError", "control", "StepControl", "StepSizeError", "FMU", "explore"]
