"""Built-in test models of the papers.

Every model declares the units of its signals (a ``UNITS`` table per module, given to each subsystem as ``units=``;
see :class:`cosim.Subsystem`): results carry them (``res.units``) and ``res.plot`` labels its axes with them. The
convention and the list are in docs/results.md ("Units")."""
from .two_mass import two_mass_oscillator, monolithic_matrix, interface_jacobians  # noqa: F401
from .moshagen import unidirectional_2x2, mutual_2x2, spring_mass, linear_split  # noqa: F401
from .helicopter import (helicopter, helicopter_plant, helicopter_controller, helicopter_closed_loop,  # noqa: F401
                         pilot_v1)
from .quarter_truck import quarter_truck, quarter_car  # noqa: F401
from .chain import oscillator_chain, Uniform, PRESETS as CHAIN_PRESETS, chain_states, coupling_bodies  # noqa: F401
from .precice import precice_oscillator  # noqa: F401
from .kraft import kraft_asymmetric, kraft_two_mass  # noqa: F401
