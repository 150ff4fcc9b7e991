"""issue 27 part 4: units of signals. Subsystems declare them (``units=``; the built-in models and FMU model
descriptions do), a Result carries them (``res.units``) and ``res.plot`` writes them on the axes; they are labels only
and change no number."""
import types

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cosim  # noqa: E402
from cosim import models  # noqa: E402

#: every built-in model factory whose signals are physical quantities, and the signals allowed to have no unit
BUILT_IN = {
    "two_mass F/D": (lambda: models.two_mass_oscillator(), ()),
    "two_mass D/D": (lambda: models.two_mass_oscillator(coupling="displacement/displacement"), ()),
    "two_mass F/F": (lambda: models.two_mass_oscillator(coupling="force/force"), ()),
    "two_mass nonlinear": (lambda: models.two_mass_oscillator(nonlinear=True, impulse=True), ()),
    "two_mass no feedthrough": (lambda: models.two_mass_oscillator(feedthrough=False), ()),
    "quarter_truck": (models.quarter_truck, ()),
    "quarter_car nonlinear": (lambda: models.quarter_car("nonlinear"), ()),
    "spring_mass": (models.spring_mass, ()),
    "precice": (models.precice_oscillator, ()),
    "kraft M1": (lambda: models.kraft_two_mass("M1"), ()),
    "kraft M3": (lambda: models.kraft_two_mass("M3"), ()),
    "kraft asymmetric": (models.kraft_asymmetric, ()),
    "chain nonlinear cut": (lambda: models.oscillator_chain(6, 3, cubic=(1.0, 0.0)), ()),
    "helicopter": (lambda: models.helicopter(pilot_input=True), ("S2.xk", "pilot.unused")),
}


def _two_mass_result(**kw):
    return cosim.simulate(models.two_mass_oscillator(**kw), t_end=5e-3, H=1e-3)


@pytest.mark.parametrize("name", list(BUILT_IN))
def test_built_in_models_declare_the_unit_of_every_signal(name):
    build, unitless = BUILT_IN[name]
    system = build()
    for s in system.subsystems:
        for kind in ("x", "y", "u"):
            for i, sig in enumerate(s.signal_names(kind)):
                label = f"{s.name}.{sig}"
                if any(label.startswith(p) for p in unitless):
                    continue
                assert s.signal_unit(kind, i), f"{name}: {label} ({kind}[{i}]) has no unit"


def test_result_carries_the_units_and_plot_labels_axes_with_them():
    res = _two_mass_result()
    assert res.units == {"t": "s", "S1.x1": "m", "S1.v1": "m/s", "S1.F": "N", "S2.x2": "m", "S2.v2": "m/s",
                         "S2.F": "N", "S2.x1": "m", "S2.v1": "m/s"}
    assert res.unit("S1.y[1]") == "m/s" and res.unit("S2.u[0]") == "m" and res.unit("t") == "s"
    panels = res.plot()
    assert [a.get_ylabel() for a in panels] == ["S1.x1 [m]", "S1.v1 [m/s]", "S2.F [N]"]
    assert panels[-1].get_xlabel() == "t [s]"
    plt.close("all")
    fig, ax = plt.subplots()
    res.plot(signals=["S1.x1", "S2.F"], ax=ax)            # one panel, two units: the axis names both
    assert ax.get_ylabel() == "value [m, N]"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["S1.x1 [m]", "S2.F [N]"]
    plt.close("all")


def test_helicopter_units_from_the_thesis():
    res = cosim.simulate(models.helicopter(pilot=None), t_end=0.05, H=0.01, solver=cosim.Exact())
    assert (res.unit("S1.Hdot"), res.unit("S1.theta"), res.unit("S1.p"), res.unit("S1.vz")) == (
        "ft/s", "rad", "rad/s", "ft/s")
    assert res.unit("S1.collective") == res.unit("S2.collective") == "rad"
    assert res.unit("S2.e_psidot") == "rad/s" and res.unit("S2.xk0") is None   # controller states: no unit
    ax = res.plot(signals=["S1.Hdot"])
    assert ax.get_ylabel() == "S1.Hdot [ft/s]"
    plt.close("all")


def test_user_subsystems_may_declare_units():
    def rhs(t, x, u):
        return np.array([x[1], -x[0] + u[0]])

    def out(t, x, u):
        return np.array([x[0]])

    ode = cosim.ODE(rhs, out, nx=2, nu=1, ny=1, name="P", states=["pos", "vel"], inputs=["F"], outputs=["pos"],
                    feedthrough=False, units={"pos": "m", "vel": "m/s", "F": "N"})
    src = cosim.LTI(np.zeros((0, 0)), np.zeros((0, 0)), np.zeros((1, 0)), np.ones((1, 0)), name="src",
                    units={"y[0]": "N"})
    assert ode.signal_unit("y", 0) == "m" and ode.signal_unit("u", 0) == "N" and src.signal_unit("y", 0) == "N"
    plain = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="Q")
    assert plain.units == {} and plain.signal_unit("x", 0) is None
    assert plain.set_units({"x[0]": "K"}) is plain and plain.signal_unit("x", 0) == "K"
    assert plain.set_units({"u[0]": "W"}).units == {"x[0]": "K", "u[0]": "W"}      # entries add up
    res = cosim.simulate(cosim.CoupledSystem([plain], [], inputs_default=0.0), t_end=0.01, H=1e-3)
    assert res.units == {"t": "s", "Q.x[0]": "K", "Q.u[0]": "W"}
    ax = res.plot(signals=["Q.x[0]"])
    assert ax.get_ylabel() == "Q.x[0] [K]"
    plt.close("all")


def test_units_are_checked_at_the_boundary():
    with pytest.raises(TypeError, match="units"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], units=["m"])
    with pytest.raises(ValueError, match="units.*no such signal"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], states=["x"], units={"z": "m"})
    with pytest.raises(ValueError, match="units"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], units={"y[3]": "m"})
    with pytest.raises(TypeError, match=r"units\['x'\]"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], states=["x"], units={"x": 3})
    with pytest.raises(TypeError, match=r"units\['x'\]"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], states=["x"], units={"x": "  "})
    with pytest.raises(TypeError, match="units"):
        cosim.LTI([[-1.0]], [[1.0]], [[1.0]], units={0: "m"})


def test_units_change_no_number():
    a = _two_mass_result()
    system = models.two_mass_oscillator()
    for s in system.subsystems:
        s.units = {}
    b = cosim.simulate(system, t_end=5e-3, H=1e-3)
    assert b.units == {"t": "s"}
    for name in ("X", "Y", "U", "t"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


def test_fmu_units_come_from_the_model_description():
    from cosim.fmu import _declared_units
    unit = types.SimpleNamespace
    vs = {"u": [unit(unit="N", declaredType=None)], "y": [unit(unit=None, declaredType=unit(unit="m")),
                                                          unit(unit=None, declaredType=None)], "x": []}
    assert _declared_units(vs) == {"u[0]": "N", "y[0]": "m"}
