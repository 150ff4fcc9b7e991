"""Built-in test models of the papers."""
from .two_mass import two_mass_oscillator, monolithic_matrix  # noqa: F401
from .moshagen import unidirectional_2x2, mutual_2x2, spring_mass, linear_split  # noqa: F401
from .kraft import kraft_two_mass  # noqa: F401
