"""cosim.explore without a browser: the panel is built, its controls are set programmatically (as the browser's
widget messages would set them), and what it draws is compared with cosim.simulate, simulate_monolithic and
cosim.analysis for the same setting."""
import importlib.util
import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets", reason="ipywidgets is in the [jupyter] extra")

import cosim  # noqa: E402
from cosim import analysis, models  # noqa: E402

T_END = 0.5
DK = 200.0
CK = np.geomspace(1e4, 1e7, 13)


def build(ck):
    return models.two_mass_oscillator(ck, DK)


@pytest.fixture
def panel():
    return cosim.explore(build(2e5), T_END, signals=["S1.x1", "S2.F"], ylabels={"S1.x1": "x1 [m]", "S2.F": "F [N]"},
                         parameter=("ck", CK, build), n_H=15)


def simulated(p, approximation, **kw):
    """What cosim.simulate gives for the panel's current H and parameter value."""
    kw.setdefault("scheme", "jacobi")
    kw.setdefault("update", "consistent")
    try:
        return cosim.simulate(build(p.controls["ck"].value), T_END, p.controls["H"].value, approximation=approximation,
                              solver=cosim.Exact(), output_interval=T_END / 500, divergence_growth=math.inf, **kw)
    except cosim.DivergenceError as e:
        return e.result


def assert_lines_match(p, res):
    for name, (co, _) in p.lines.items():
        np.testing.assert_array_equal(co.get_xdata(), res.t)
        np.testing.assert_array_equal(co.get_ydata(), res[name])


def H_option(p, i):
    return p.controls["H"].options[i][1]


def test_initial_panel_shows_simulate_and_the_monolithic_reference(panel):
    assert set(panel.controls) == {"H", "approximation", "k", "continuity", "scheme", "update", "ck"}
    assert panel.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert_lines_match(panel, simulated(panel, cosim.ZOH()))
    ref = cosim.simulate_monolithic(build(panel.controls["ck"].value), T_END, t_eval=np.linspace(0, T_END, 501))
    for name, (_, line) in panel.lines.items():
        np.testing.assert_array_equal(line.get_ydata(), ref[name])
    # every offered H ends the run at t_end exactly
    H = np.array([v for _, v in panel.controls["H"].options])
    assert np.all(np.abs(T_END / H - np.round(T_END / H)) < 1e-9) and np.all(np.diff(H) > 0)


def test_changing_H_redraws_the_cosimulation(panel):
    png, y = panel.image.value, panel.lines["S2.F"][0].get_ydata().copy()
    panel.controls["H"].value = H_option(panel, -2)
    assert panel.image.value != png
    assert not np.array_equal(panel.lines["S2.F"][0].get_ydata(), y)
    assert_lines_match(panel, simulated(panel, cosim.ZOH()))
    assert len(panel.update_times) == 1 and panel.update_times[0] > 0


def test_every_control_gives_the_setting_of_simulate_and_analysis(panel):
    c = panel.controls
    assert c["continuity"].disabled
    c["approximation"].value = "extripol"
    assert not c["continuity"].disabled
    c["k"].value = 2
    c["continuity"].value = 0
    c["scheme"].value = "gauss-seidel"
    c["update"].value = "simplified"
    c["H"].value = H_option(panel, 5)
    c["ck"].value = c["ck"].options[9][1]
    approx = cosim.ExtrapolatedInterpolation(2, continuity=0)
    assert_lines_match(panel, simulated(panel, approx, scheme="gauss-seidel", update="simplified"))
    rho = analysis.spectral_radius(build(c["ck"].value), c["H"].value, "gauss-seidel", approx, update="simplified")
    assert panel.rho == pytest.approx(rho, rel=1e-12)
    np.testing.assert_array_equal(panel.marker.get_xdata(), [c["ck"].value])
    np.testing.assert_array_equal(panel.marker.get_ydata(), [c["H"].value])
    assert len(panel.update_times) == 7


def test_the_map_is_computed_once_per_setting_and_moving_H_or_the_parameter_only_moves_the_marker(panel):
    c = panel.controls
    mesh = panel._mesh.get_array().copy()
    for i in (0, 3, 7):
        c["H"].value = H_option(panel, i)
        c["ck"].value = c["ck"].options[i][1]
    assert len(panel._maps) == 1
    np.testing.assert_array_equal(panel._mesh.get_array(), mesh)
    c["scheme"].value = "gauss-seidel"
    assert not np.array_equal(panel._mesh.get_array(), mesh)
    c["scheme"].value = "jacobi"
    np.testing.assert_array_equal(panel._mesh.get_array(), mesh)
    assert len(panel._maps) == 2
    assert len(panel._references) == 4  # one monolithic run per parameter value shown: the first and 3 more
    # the map is cosim.analysis's ρ over (ck, H)
    smap = analysis.stability_map(lambda ck: build(ck), {"ck": CK}, [v for _, v in c["H"].options], "jacobi",
                                  cosim.ZOH())
    np.testing.assert_allclose(np.ma.filled(panel._mesh.get_array(), np.nan), smap.rho.T, rtol=1e-12)


def test_a_diverging_run_is_shown_up_to_the_divergence(panel):
    c = panel.controls
    c["update"].value = "simplified"
    c["ck"].value = c["ck"].options[-1][1]
    c["H"].value = H_option(panel, 7)
    with pytest.raises(cosim.DivergenceError) as err:
        cosim.simulate(build(c["ck"].value), T_END, c["H"].value, approximation=cosim.ZOH(), solver=cosim.Exact(),
                       update="simplified", output_interval=T_END / 500, divergence_growth=math.inf)
    assert_lines_match(panel, err.value.result)
    assert panel.result.t[-1] < T_END
    assert "diverged" in panel.status.value and "unstable" in panel.status.value
    assert panel.rho > 1


def test_without_a_parameter_the_map_is_rho_over_H():
    s = build(2e5)
    p = cosim.explore(s, T_END, n_H=9)
    assert p.lines.keys() == {"S1.x1", "S2.x2"}  # default: the first state of each subsystem
    p.controls["H"].value = H_option(p, 6)
    H = np.array([v for _, v in p.controls["H"].options])
    rho = analysis.spectral_radius(s, H, "jacobi", cosim.ZOH())
    np.testing.assert_allclose(p._rho_line.get_ydata(), np.clip(rho, 0, 10), rtol=1e-12)
    assert p.rho == pytest.approx(rho[6], rel=1e-12)
    np.testing.assert_array_equal(p.marker.get_xdata(), [H[6]])


def test_a_nonlinear_system_has_no_map():
    s = models.two_mass_oscillator(nonlinear=True)
    p = cosim.explore(s, 0.05, signals=["S2.F"], n_H=5)
    assert p.marker is None and p.rho is None
    p.controls["H"].value = H_option(p, 0)
    res = cosim.simulate(s, 0.05, p.controls["H"].value, approximation=cosim.ZOH(), solver=cosim.CVODE(),
                         output_interval=0.05 / 500, divergence_growth=math.inf)
    np.testing.assert_array_equal(p.lines["S2.F"][0].get_ydata(), res["S2.F"])
    assert "ρ" not in p.status.value


def test_an_unstable_coupling_is_reported_in_the_status_line_not_as_a_warning():
    import warnings
    p = cosim.explore(build(2e5), T_END, signals=["S2.F"], n_H=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cosim.CouplingInstabilityWarning)
        p.controls["update"].value = "simplified"
        p.controls["H"].value = H_option(p, -1)
    assert p.rho > 1 and "unstable" in p.status.value
    # without a ρ map (a nonlinear system) the run's verdict says it
    s = models.two_mass_oscillator(nonlinear=True)
    q = cosim.explore(s, 0.5, signals=["S1.v1"], n_H=5, output_points=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cosim.CouplingInstabilityWarning)
        q.controls["update"].value = "simplified"
        q.controls["H"].options = [("2 ms", 2e-3)]
    assert q.result.status == cosim.Result.UNSTABLE
    assert "coupling unstable: S1.v1 grew" in q.status.value


def axis_labels(p):
    """(xlabel, ylabel) of every axes of the panel's figure (the colour bar has its label on one side only)."""
    return [(ax.get_xlabel(), ax.get_ylabel()) for ax in p.figure.axes]


def test_axes_carry_the_units_the_model_declares():
    # no ylabels/units given: the signal panels say what Result.units says, the map the parameter's unit
    p = cosim.explore(build(2e5), T_END, signals=["S1.x1", "S1.v1", "S2.F"], parameter=("ck", CK, build), n_H=7)
    ref = cosim.simulate_monolithic(build(2e5), T_END)
    assert {n: ref.units[n] for n in ("S1.x1", "S1.v1", "S2.F")} == {"S1.x1": "m", "S1.v1": "m/s", "S2.F": "N"}
    assert p.ylabels == {"S1.x1": "S1.x1 [m]", "S1.v1": "S1.v1 [m/s]", "S2.F": "S2.F [N]"}
    signal_axes, map_ax = p.figure.axes[:3], p.figure.axes[3]
    assert [ax.get_ylabel() for ax in signal_axes] == ["S1.x1 [m]", "S1.v1 [m/s]", "S2.F [N]"]
    assert signal_axes[-1].get_xlabel() == "t [s]"
    assert map_ax.get_xlabel() == "coupling stiffness ck [N/m]" and map_ax.get_ylabel() == "macro step H [s]"
    assert p._title.get_text().endswith("N/m")  # the setting's parameter value with its unit


def test_units_and_ylabels_override_the_declared_units():
    p = cosim.explore(build(2e5), T_END, signals=["S1.x1", "S2.F"], ylabels={"S2.F": "coupling force F [kN]"},
                      units={"S1.x1": "mm", "ck": "kN/mm"}, parameter=("ck", CK, build), n_H=7)
    assert [ax.get_ylabel() for ax in p.figure.axes[:2]] == ["S1.x1 [mm]", "coupling force F [kN]"]
    assert p.figure.axes[2].get_xlabel() == "coupling stiffness ck [kN/mm]"


def test_a_signal_without_a_declared_unit_is_shown_bare():
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="A")
    b = cosim.LTI([[-2.0]], [[1.0]], [[1.0]], name="B", units={"x[0]": "V"})
    s = cosim.CoupledSystem([a, b], [cosim.connect("A.y[0]", "B.u[0]"), cosim.connect("B.y[0]", "A.u[0]")])
    p = cosim.explore(s, 1.0, n_H=5)
    assert p.ylabels == {"A.x[0]": "A.x[0]", "B.x[0]": "B.x[0] [V]"}
    assert p.figure.axes[-1].get_xlabel() == "macro step H [s]"


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(system="S"), TypeError, "system"),
    (dict(t_end=-1.0), ValueError, "t_end"),
    (dict(signals=["S9.q"]), ValueError, "signals"),
    (dict(signals=[]), TypeError, "signals"),
    (dict(H_range=(1e-3, 1e-4)), ValueError, "H_range"),
    (dict(H_range=1e-3), TypeError, "H_range"),
    (dict(H=0.0), ValueError, "H"),
    (dict(n_H=1), ValueError, "n_H"),
    (dict(parameter=("ck", [1.0], build)), ValueError, "parameter"),
    (dict(parameter=("ck", [2.0, 1.0], build)), ValueError, "parameter"),
    (dict(parameter=("ck", [1.0, 2.0])), TypeError, "parameter"),
    (dict(parameter=("ck", [1.0, 2.0], 3)), TypeError, "parameter"),
    (dict(ylabels={"S1.x1": 3}), TypeError, "ylabels"),
    (dict(units={"S1.x1": 3}), TypeError, "units"),
    (dict(units=["m"]), TypeError, "units"),
    (dict(output_points=5), ValueError, "output_points"),
    (dict(dpi=1000), ValueError, "dpi"),
])
def test_arguments_are_checked(kwargs, error, match):
    args = dict(system=build(2e5), t_end=T_END)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        cosim.explore(args.pop("system"), args.pop("t_end"), **args)


def test_a_builder_that_returns_something_else_is_named():
    with pytest.raises(TypeError, match="parameter: build"):
        cosim.explore(build(2e5), T_END, parameter=("ck", CK, lambda ck: None))


def test_missing_ipywidgets_names_the_extra(monkeypatch):
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ipywidgets" else find(name, *a))
    with pytest.raises(ImportError, match=r'pip install "cosim\[jupyter\]"'):
        cosim.explore(build(2e5), T_END)


def test_a_parameter_map_needs_an_lti_system():
    with pytest.raises(ValueError, match="parameter: the ρ map"):
        cosim.explore(models.two_mass_oscillator(nonlinear=True), 0.05, signals=["S2.F"],
                      parameter=("ck", CK, build))


def test_a_notebook_kernel_displays_the_panel_as_a_widget(monkeypatch):
    # the browser test's notebook, run in a Jupyter kernel: the cell's output is the ipywidgets view (what
    # JupyterLab, the notebook and Voila render), not a text repr
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    import os
    import pathlib
    root = pathlib.Path(__file__).resolve().parent.parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    nb = nbformat.read(root / "tests" / "browser" / "explore.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    views = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(views) == 1
