"""Units of the built-in models' signals (see :class:`cosim.Subsystem`). A model keeps one table signal name -> unit
for all its subsystems; :func:`declare` gives each subsystem the entries of the names it has (a subsystem checks its
units strictly, so it cannot be given a name it does not have)."""
from __future__ import annotations


def declare(table, *subsystems):
    """Give every subsystem the units in ``table`` (name -> unit) of its own state, output and input names."""
    for s in subsystems:
        names = {n for kind in ("x", "y", "u") for n in s.signal_names(kind)}
        s.set_units({n: u for n, u in table.items() if n in names})
    return subsystems
