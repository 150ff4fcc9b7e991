"""Results by signal name, pandas tables, CSV, plots and per-signal errors (cosim.Result)."""
import ctypes
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import cosim  # noqa: E402
from cosim import models  # noqa: E402
from cosim.result import Result  # noqa: E402

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def run():
    system = models.two_mass_oscillator(ck=2e5, dk=200)
    res = cosim.simulate(system, 0.05, 1e-3, scheme="gauss-seidel", approximation=cosim.Lagrange(1),
                         solver=cosim.Exact())
    ref = cosim.simulate_monolithic(system, 0.05, t_eval=res.t)
    return system, res, ref


# ---------------------------------------------------------------- named states and lookup
def test_states_names_on_every_subsystem_kind():
    lti = cosim.LTI([[-1.0, 0.0], [0.0, -2.0]], [[1.0], [0.0]], [[1.0, 0.0]], x0=[1, 0], name="A",
                    states=["p", "q"], outputs=["out"], inputs=["inp"])
    ode = cosim.ODE(lambda t, x, u: -x + u, lambda t, x, u: x, nx=1, nu=1, ny=1, name="B", states=["z"])
    CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_double, ctypes.POINTER(ctypes.c_double),
                          ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double), ctypes.c_void_p)
    f = CB(lambda t, x, u, xd, ud: 0)
    cm = cosim.CModel(f, f, nx=2, nu=0, ny=1, name="C", states=["a", "b"])
    assert lti.states == ["p", "q"] and ode.states == ["z"] and cm.states == ["a", "b"]
    assert lti.find_signal("q") == ("x", 1) and lti.find_signal("out") == ("y", 0)
    assert lti.find_signal("inp") == ("u", 0) and lti.find_signal("x[1]") == ("x", 1)
    assert cm.signal_names("x") == ["a", "b"] and cm.signal_names("y") == ["y[0]"]
    unnamed = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="D")
    assert unnamed.states is None and unnamed.signal_names("x") == ["x[0]"]
    with pytest.raises(KeyError, match=r"A\.r: no such signal.*states p, q; outputs out; inputs inp"):
        lti.find_signal("r")
    with pytest.raises(KeyError, match="x\\[2\\]"):
        lti.find_signal("x[2]")


def test_states_argument_is_validated():
    with pytest.raises(ValueError, match="states: expected 2"):
        cosim.LTI(np.eye(2), np.zeros((2, 1)), np.eye(2), states=["a"])
    with pytest.raises(ValueError, match="states: names must be unique"):
        cosim.ODE(lambda t, x, u: x, lambda t, x, u: x, nx=2, nu=0, ny=2, states=["a", "a"])
    with pytest.raises(ValueError, match="states"):
        cosim.LTI([[0.0]], [[1.0]], [[1.0]], states=["not a name"])


def test_builtin_models_name_their_states():
    for coupling in models.two_mass.COUPLINGS:
        s = models.two_mass_oscillator(coupling=coupling)
        assert s["S1"].states == ["x1", "v1"] and s["S2"].states == ["x2", "v2"]
    assert models.spring_mass()["spring"].states == ["s"]
    assert models.unidirectional_2x2()["S2"].states == ["x2"]
    s = models.linear_split(np.diag([-1.0, -2.0, -3.0]), [1, 2, 3], groups=[[0, 2], [1]])
    assert s["S1"].states == ["x1", "x3"] and s["S2"].states == ["x2"]


def test_getitem_every_form(run):
    system, res, _ = run
    np.testing.assert_array_equal(res["S2.F"], res.y["S2"][:, 0])
    np.testing.assert_array_equal(res["S2.y[0]"], res.y["S2"][:, 0])
    np.testing.assert_array_equal(res["S1.F"], res.u["S1"][:, 0])
    np.testing.assert_array_equal(res["S1.u[0]"], res.u["S1"][:, 0])
    np.testing.assert_array_equal(res["S1.x1"], res.x["S1"][:, 0])   # state before output of the same name
    np.testing.assert_array_equal(res["S1.x[1]"], res.x["S1"][:, 1])
    np.testing.assert_array_equal(res["S2.v2"], res.x["S2"][:, 1])
    np.testing.assert_array_equal(res["S2.x1"], res.u["S2"][:, 0])   # S2 has no state x1: its input
    np.testing.assert_array_equal(res["t"], res.t)
    assert "S2.F" in res and "S2.G" not in res and 3 not in res


def test_getitem_wrong_name_lists_valid_names(run):
    _, res, _ = run
    with pytest.raises(KeyError) as exc:
        res["S2.G"]
    msg = str(exc.value)
    for label in res.signals:
        assert label in msg
    with pytest.raises(KeyError, match="valid names"):
        res["S3.F"]
    with pytest.raises(KeyError, match="valid names"):
        res["S1"]
    with pytest.raises(KeyError, match="valid names"):
        res["S1.x[7]"]
    with pytest.raises(TypeError, match="key"):
        res[0]
    with pytest.raises(KeyError, match=r"known: \['S1', 'S2'\]"):
        res.x["S3"]


def test_signal_labels_round_trip(run):
    system, res, _ = run
    labels = res.signals
    # S1's outputs x1, v1 are its states: one quantity, listed once under its declared name
    np.testing.assert_array_equal(res.y["S1"], res.x["S1"])
    assert len(labels) == len(set(labels)) == res.X.shape[1] + res.Y.shape[1] + res.U.shape[1] - 2
    cols = np.column_stack([res[label] for label in labels])
    expected = np.column_stack([np.column_stack([res.x[s.name], res.u[s.name]] if s.name == "S1" else
                                                [res.x[s.name], res.y[s.name], res.u[s.name]])
                                for s in system.subsystems])
    np.testing.assert_array_equal(cols, expected)
    assert labels[:3] == ["S1.x1", "S1.v1", "S1.F"]


# ---------------------------------------------------------------- tables
def test_to_dataframe_wide_and_long(run):
    _, res, _ = run
    wide = res.to_dataframe()
    assert list(wide.columns) == res.signals and wide.index.name == "t"
    np.testing.assert_array_equal(wide.index.to_numpy(), res.t)
    np.testing.assert_array_equal(wide["S2.F"].to_numpy(), res["S2.F"])
    long = res.to_dataframe("long")
    assert list(long.columns) == ["t", "signal", "subsystem", "kind", "name", "value"]
    assert len(long) == len(res.t) * len(res.signals)
    back = long.pivot(index="t", columns="signal", values="value")[res.signals]
    np.testing.assert_array_equal(back.to_numpy(), wide.to_numpy())
    row = long[(long.signal == "S1.F")].iloc[0]
    assert (row["subsystem"], row["kind"], row["name"]) == ("S1", "input", "F")
    sel = res.to_dataframe(signals=["S2.F", "S1.x[0]"])
    assert list(sel.columns) == ["S2.F", "S1.x[0]"]
    np.testing.assert_array_equal(sel["S1.x[0]"].to_numpy(), res.x["S1"][:, 0])
    states = res.to_dataframe(kinds="x")
    assert list(states.columns) == ["S1.x1", "S1.v1", "S2.x2", "S2.v2"]
    with pytest.raises(ValueError, match="layout"):
        res.to_dataframe("tall")
    with pytest.raises(KeyError, match="valid names"):
        res.to_dataframe(signals=["S2.nope"])
    with pytest.raises(ValueError, match="kinds"):
        res.to_dataframe(kinds="q")
    with pytest.raises(ValueError, match="signals"):
        res.to_dataframe(signals=[])


def test_to_csv_round_trips_exactly(run, tmp_path):
    _, res, _ = run
    path = res.to_csv(tmp_path / "r.csv")
    # the file itself holds every double exactly, whatever reads it
    text = np.array([[float(v) for v in line.split(",")] for line in path.read_text().splitlines()[1:]])
    np.testing.assert_array_equal(text[:, 0], res.t)
    np.testing.assert_array_equal(text[:, 1:], res.to_dataframe().to_numpy())
    back = cosim.read_csv(path)
    assert list(back.columns) == ["t"] + res.signals
    np.testing.assert_array_equal(back["t"].to_numpy(), res.t)
    np.testing.assert_array_equal(back[res.signals].to_numpy(), res.to_dataframe().to_numpy())
    long = cosim.read_csv(res.to_csv(tmp_path / "l.csv", layout="long", signals=["S2.F"]))
    np.testing.assert_array_equal(long["value"].to_numpy(), res["S2.F"])
    with pytest.raises(TypeError, match="path"):
        res.to_csv(3)


@pytest.mark.parametrize("version, exact", [("2.2.3", False), ("3.0.6", False), ("3.1.0", True), ("3.1.1", True),
                                            ("3.2.0rc1", True), ("4.0.0.dev0+12", True), ("10.0", True)])
def test_read_csv_asks_old_pandas_for_round_trip_floats(version, exact):
    from cosim.result import _pandas_reads_floats_exactly
    assert _pandas_reads_floats_exactly(version) is exact


# ---------------------------------------------------------------- plot
def test_plot_panels_single_axes_and_reference(run):
    _, res, ref = run
    panels = res.plot()
    fig = panels[0].figure
    assert len(panels) == res.Y.shape[1] and list(panels) == fig.axes
    assert len(fig.axes) == res.Y.shape[1]
    line = fig.axes[-1].get_lines()[-1]
    np.testing.assert_array_equal(line.get_ydata(), res["S2.F"])
    assert fig.axes[-1].get_ylabel() == "S2.F [N]" and fig.axes[-1].get_xlabel() == "t [s]"   # units of the model
    plt.close(fig)
    fig, ax = plt.subplots()
    out = res.plot(signals=["S1.x1", "S2.x2"], ax=ax, ref=ref)
    assert out is ax and len(ax.get_lines()) == 4
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["S1.x1 (reference)", "S1.x1 [m]",
                                                                   "S2.x2 (reference)", "S2.x2 [m]"]
    assert ax.get_ylabel() == "value [m]"                  # one panel, one unit: the axis carries it
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), ref["S1.x1"])
    plt.close(fig)
    fig, axs = plt.subplots(2)
    assert list(res.plot(signals=["S1.F", "S2.F"], ax=axs, ylabels={"S2.F": "F [N]"})) == list(axs)
    assert axs[1].get_ylabel() == "F [N]"
    with pytest.raises(ValueError, match="ax"):
        res.plot(signals=["S1.F"], ax=axs)
    with pytest.raises(TypeError, match="ref"):
        res.plot(ref=3)
    with pytest.raises(KeyError, match="valid names"):
        res.plot(signals=["S9.F"])
    plt.close("all")


# ---------------------------------------------------------------- errors
def _scalar_system(names=("A",)):
    subs = [cosim.LTI([[-1.0]], np.zeros((1, 0)), [[1.0]], name=n, states=["z"], outputs=["w"]) for n in names]
    return cosim.CoupledSystem(subs)


def _result(system, t, Z):
    """A Result with states = outputs = Z (one column per subsystem) and no inputs (for hand-computed errors)."""
    Z = np.asarray(Z, dtype=float)
    return Result(system, np.asarray(t, float), Z.copy(), Z.copy(), np.zeros((len(t), 0)), {})


def test_error_metrics_by_hand():
    system = _scalar_system()
    t = [0.0, 1.0, 2.0, 3.0]
    ref = _result(system, t, [[0.0], [1.0], [2.0], [3.0]])
    res = _result(system, t, [[0.0], [1.1], [2.0], [3.3]])
    e = res.error_to(ref)
    sig = e["per_signal"]["A.z"]
    assert sig["max_abs"] == pytest.approx(0.3)
    assert sig["max_rel"] == pytest.approx(0.3 / 3.0)
    assert sig["final_abs"] == pytest.approx(0.3)
    # kraft2021 eq. 5.1: sqrt(sum e^2 / sum (ref - mean)^2) = sqrt(0.1 / 5)
    assert sig["nrmse"] == pytest.approx(math.sqrt(0.1 / 5.0))
    # genser2020 eq. 3.10 terms |e| / (running range + 1e-12): 0, 0.1/1, 0/2, 0.3/3 -> mean 0.05
    assert sig["eps_mono"] == pytest.approx(0.05)
    assert e["eps_mono_per_subsystem"] == {"A": pytest.approx(0.05)}
    assert e["eps_mono"] == pytest.approx(0.05)
    assert res.error_to(ref, eps_mono_time="max")["eps_mono"] == pytest.approx(0.1)
    assert res.error_to(ref, eps_mono_time="final")["eps_mono"] == pytest.approx(0.1)
    assert e["per_signal"]["A.w"] == sig        # the output of this subsystem is its state
    # the keys of earlier versions keep their meaning
    assert e["max_abs"] == pytest.approx(0.3) and e["max_rel"] == pytest.approx(0.1)
    assert e["final_abs"] == pytest.approx(0.3) and e["nrmse"] == pytest.approx(math.sqrt(0.02))
    assert e["per_subsystem"] == {"A": pytest.approx(0.3)}
    with pytest.raises(ValueError, match="eps_mono_time"):
        res.error_to(ref, eps_mono_time="median")
    with pytest.raises(TypeError, match="ref"):
        res.error_to(res.X)


def test_eps_mono_global_is_root_sum_of_squares_over_subsystems():
    system = _scalar_system(("A", "B"))
    t = [0.0, 1.0, 2.0]
    ref = _result(system, t, [[0.0, 0.0], [1.0, -2.0], [2.0, -4.0]])
    res = _result(system, t, [[0.0, 0.0], [1.2, -2.0], [2.0, -4.8]])
    e = res.error_to(ref)
    a = (0.0 + 0.2 / 1.0 + 0.0) / 3       # A: terms 0, 0.2/1, 0/2
    b = (0.0 + 0.0 + 0.8 / 4.0) / 3       # B: terms 0, 0/2, 0.8/4
    assert e["eps_mono_per_subsystem"] == {"A": pytest.approx(a), "B": pytest.approx(b)}
    assert e["eps_mono"] == pytest.approx(math.hypot(a, b))


def test_degenerate_reference_signals():
    system = _scalar_system(("A", "B"))
    t = [0.0, 1.0, 2.0]
    ref = _result(system, t, [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
    same = ref.error_to(ref)["per_signal"]
    assert same["A.z"] == dict(max_abs=0.0, max_rel=0.0, final_abs=0.0, nrmse=0.0, eps_mono=0.0)
    res = _result(system, t, [[0.0, 1.0], [0.5, 1.0], [0.0, 1.5]])
    per = res.error_to(ref)["per_signal"]
    assert math.isnan(per["A.z"]["max_rel"]) and math.isnan(per["A.z"]["nrmse"])   # reference identically 0
    assert per["B.z"]["max_rel"] == pytest.approx(0.5) and math.isnan(per["B.z"]["nrmse"])  # constant reference


def test_error_to_per_signal_two_mass(run):
    system, res, ref = run
    e = res.error_to(ref)
    assert set(e["per_signal"]) == set(res.signals)
    for label in res.signals:
        z, zr = res[label], ref[label]
        assert e["per_signal"][label]["max_rel"] == pytest.approx(np.max(np.abs(z - zr)) / np.max(np.abs(zr)),
                                                                  rel=1e-12)
    # the overall max_rel uses one scale for all states: here it is the velocity's error (the issue's complaint)
    states = ["S1.x1", "S1.v1", "S2.x2", "S2.v2"]
    worst = max(states, key=lambda s: e["per_signal"][s]["max_abs"])
    assert worst == "S1.v1" and e["max_abs"] == e["per_signal"]["S1.v1"]["max_abs"]
    assert e["max_rel"] == pytest.approx(e["max_abs"] / np.max(np.abs(ref.X)), rel=1e-12)
    # genser2020 eq. 3.9 over the coupled outputs: S1 (x1, v1) and S2 (F)
    s1 = (e["per_signal"]["S1.x1"]["eps_mono"] + e["per_signal"]["S1.v1"]["eps_mono"]) / 2   # S1's outputs
    s2 = e["per_signal"]["S2.F"]["eps_mono"]
    assert e["eps_mono"] == pytest.approx(math.hypot(s1, s2), rel=1e-12)
    table = e.to_dataframe()
    assert list(table.index) == res.signals
    assert list(table.columns) == ["max_abs", "max_rel", "final_abs", "nrmse", "eps_mono"]
    assert table.loc["S2.F", "nrmse"] == e["per_signal"]["S2.F"]["nrmse"]
    sub = res.error_to(ref, signals=["S2.F"])
    assert list(sub["per_signal"]) == ["S2.F"] and sub["eps_mono"] == e["eps_mono"]
    assert res.error_to(res)["per_signal"]["S2.F"]["max_abs"] == 0.0


def test_error_to_interpolates_a_finer_reference(run):
    system, res, ref = run
    fine = cosim.simulate_monolithic(system, 0.05, H=1e-4)     # every 10th point is a macro point of res
    a, b = res.error_to(ref), res.error_to(fine)
    for label in ("S1.x1", "S2.F", "S2.v2"):
        assert b["per_signal"][label]["max_rel"] == pytest.approx(a["per_signal"][label]["max_rel"], rel=1e-9)
    short = cosim.simulate_monolithic(system, 0.02, H=3e-4)
    with pytest.raises(ValueError, match="ref"):
        res.error_to(short)
