"""cosim: co-simulation of coupled ODE subsystems with a C core."""
from . import _core  # noqa: F401

__version__ = "0.1.0"
