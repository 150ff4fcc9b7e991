"""A system defined in a Python file, for a scenario (``[model] file = "scenario_model.py"``): ``build(**params)``
returns the CoupledSystem; the scenario's ``[model.params]`` are its keyword arguments.

A first-order low-pass filter x' = (u - x)/tau (LTI) in feedback with a damped linear oscillator
q'' = -omega^2 q - 2 zeta omega q' + u (LTI): the filter smooths the oscillator's position, the oscillator is
driven by the negative filter output. See examples/filter_oscillator.toml. The subsystems declare the units of their
signals (``units=``: position q [m], velocity [m/s], the driving acceleration [m/s^2]), which label the axes of the
scenario's figure.
"""
import cosim


def build(tau=0.05, omega=2.0, zeta=0.1):
    filt = cosim.LTI([[-1.0 / tau]], [[1.0 / tau]], [[1.0]], x0=[0.0], name="filter", states=["xf"],
                     inputs=["q"], outputs=["smooth"], units={"xf": "m", "q": "m", "smooth": "m"})
    osc = cosim.LTI([[0.0, 1.0], [-omega ** 2, -2 * zeta * omega]], [[0.0], [1.0]], [[1.0, 0.0]], x0=[1.0, 0.0],
                    name="osc", states=["q", "qdot"], inputs=["force"], outputs=["q"],
                    units={"q": "m", "qdot": "m/s", "force": "m/s^2"})
    return cosim.CoupledSystem([filt, osc], [cosim.connect("osc.q", "filter.q"),
                                             cosim.connect("filter.smooth", "osc.force", gain=-1.0)])
