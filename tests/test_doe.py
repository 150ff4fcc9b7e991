"""cosim.doe: designs, analysis (genser2020 AT-15, AT-16), the runner on every backend, checkpoint and resume,
errors naming the argument."""
import math

import numpy as np
import pandas as pd
import pytest

import cosim
from cosim import doe
from cosim.doe import runner as doe_runner


# ---------------------------------------------------------------------------------------------------- designs
def test_full_factorial_order_and_size():
    t = doe.full_factorial({"a": [1, 2], "b": ["x", "y", "z"]})
    assert len(t) == 6 and list(t.columns) == ["a", "b"] and t.index.name == "run"
    assert list(t["a"]) == [1, 1, 1, 2, 2, 2] and list(t["b"]) == ["x", "y", "z"] * 2


def test_latin_hypercube_strata_and_seed():
    f = {"x": doe.Range(0.0, 1.0), "y": doe.Range(1e-4, 1e-2, log=True), "k": [1, 2, 3, 4]}
    t = doe.latin_hypercube(f, 8, seed=3)
    assert len(t) == 8
    assert sorted(np.floor(t["x"] * 8).astype(int)) == list(range(8))            # every stratum once
    assert sorted(np.floor((np.log10(t["y"]) + 4) / 2 * 8).astype(int)) == list(range(8))
    assert sorted(t["k"]) == [1, 1, 2, 2, 3, 3, 4, 4]
    pd.testing.assert_frame_equal(t, doe.latin_hypercube(f, 8, seed=3))
    assert not t.equals(doe.latin_hypercube(f, 8, seed=4))
    from scipy.stats import qmc                                    # the sampler is SciPy's, not hand-written
    try:
        u = qmc.LatinHypercube(d=3, rng=3).random(8)
    except TypeError:
        u = qmc.LatinHypercube(d=3, seed=3).random(8)
    np.testing.assert_array_equal(t["x"], u[:, 0])


def test_saltelli_size_and_hash():
    t = doe.saltelli({"a": doe.Range(0, 1), "b": doe.Range(-1, 1)}, 8, seed=1)
    assert len(t) == 8 * (2 * 2 + 2) and t.attrs["sobol"]["N"] == 8
    assert doe.table_hash(t) == doe.table_hash(doe.saltelli({"a": doe.Range(0, 1), "b": doe.Range(-1, 1)}, 8, seed=1))
    t1 = doe.saltelli({"a": doe.Range(0, 1), "b": doe.Range(-1, 1)}, 8, seed=1, second_order=False)
    assert len(t1) == 8 * 4
    with pytest.raises(ValueError, match="n: .*power of 2"):
        doe.saltelli({"a": doe.Range(0, 1)}, 6)


def test_table_hash_and_params_of_every_column_type():
    """The column-wise hash equals its definition (per run, the JSON of its [type, value] cells after the factors'
    names: checkpoints written before keep their identity), and a run's parameters are plain Python values."""
    import hashlib
    import json
    t = doe.explicit({"f": [0.1, -0.0, 1e300, 3.0], "f32": np.array([0.5, 1.5, 2.5, 1e-3], dtype=np.float32),
                      "i": [1, -2, 2**40, 0], "b": [True, False, True, True], "s": ["a", "ü\"x", "1", ""],
                      "mixed": [1, 2.5, "x", True]})

    def cell(v):
        if isinstance(v, (bool, np.bool_)):
            return ["b", bool(v)]
        if isinstance(v, (int, np.integer)):
            return ["i", int(v)]
        if isinstance(v, (float, np.floating)):
            return ["f", float(v).hex()]
        return ["s", str(v)]
    h = hashlib.sha256(json.dumps(list(t.columns)).encode())
    for row in t.itertuples(index=False, name=None):
        h.update(json.dumps([cell(v) for v in row]).encode())
    assert doe.table_hash(t) == h.hexdigest()
    assert doe.table_hash(t) != doe.table_hash(t.assign(f=[0.1, 0.0, 1e300, 3.0]))     # -0.0 is not 0.0
    study = doe.Study(lambda p: {}, design=t)
    p = study.params(1)
    assert p == {"f": -0.0, "f32": 1.5, "i": -2, "b": False, "s": "ü\"x", "mixed": 2.5}
    assert [type(p[k]) for k in t.columns] == [float, float, int, bool, str, float]
    with pytest.raises(ValueError, match=r"factors\['f'\]: level inf is not finite"):
        doe.explicit({"f": [1.0, np.inf]})


def test_sobol_indices_of_an_additive_function():
    t = doe.saltelli({"x1": doe.Range(0, 1), "x2": doe.Range(0, 1), "x3": doe.Range(0, 1)}, 1024, seed=2)
    t["y"] = t["x1"] + 0.1 * t["x2"]            # variances 1/12 and 0.01/12: S1 = ST = 0.990, 0.0099, 0
    si = doe.sobol(t, "y", seed=1)
    assert si.loc["x1", "S1"] == pytest.approx(1 / 1.01, abs=0.02)
    assert si.loc["x2", "ST"] == pytest.approx(0.01 / 1.01, abs=0.005)
    assert abs(si.loc["x3", "ST"]) < 1e-3
    with pytest.raises(ValueError, match="response"):
        doe.sobol(t, "nope")


def test_bad_factors_are_named():
    with pytest.raises(ValueError, match="factors: no factor"):
        doe.full_factorial({})
    with pytest.raises(ValueError, match=r"factors\['ck'\]: no levels"):
        doe.full_factorial({"ck": []})
    with pytest.raises(ValueError, match=r"factors\['dk'\]: level nan is not finite"):
        doe.full_factorial({"ck": [1.0], "dk": [1.0, math.nan]})
    with pytest.raises(ValueError, match=r"factors\['H'\]: level 0.001 appears more than once"):
        doe.full_factorial({"H": [1e-3, 1e-3]})
    with pytest.raises(ValueError, match="'status' is reserved"):
        doe.full_factorial({"status": [1]})
    with pytest.raises(ValueError, match=r"factors\['x'\]: a Range needs a sampled design"):
        doe.full_factorial({"x": doe.Range(0, 1)})
    with pytest.raises(ValueError, match="low: a log range"):
        doe.Range(0.0, 1.0, log=True)
    with pytest.raises(ValueError, match="design: column 'a' has missing"):
        doe.explicit({"a": [1.0, float("nan")]})


# ---------------------------------------------------------------------------------------------------- analysis
def test_at15_anova_by_hand():
    """genser2020 AT-15: a 2×3 full factorial with known effects, n = 1 (y_ij below): by hand, grand mean 6, row
    means 4, 8, column means 3, 5, 10: SS_A = 3·(4 + 4) = 24, SS_B = 2·(9 + 1 + 16) = 52, SS_AB = Σ (y − ȳ_i − ȳ_j
    + ȳ)² = 1 + 1 + 4 + 1 + 1 + 4 = 12; MS = SS / DoF = 24, 26, 6; normalised % = MS / 56."""
    t = doe.full_factorial({"A": [0, 1], "B": [0, 1, 2]})
    t["y"] = [2.0, 4.0, 6.0, 4.0, 6.0, 14.0]
    tab = doe.anova(t, "y", ["A", "B"], method="direct")          # genser2020 eq. 3.11-3.12
    assert tab.attrs["balanced"]
    np.testing.assert_allclose(tab.loc[["A", "B", "A:B"], "SS"], [24, 52, 12], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(tab.loc[["A", "B", "A:B"], "DoF"], [1, 2, 2])
    np.testing.assert_allclose(tab.loc[["A", "B", "A:B"], "MS"], [24, 26, 6], rtol=0, atol=1e-12)
    np.testing.assert_allclose(tab.loc[["A", "B", "A:B"], "percent"], [2400 / 56, 2600 / 56, 600 / 56], rtol=1e-12)
    assert tab.loc["Residual", "DoF"] == 0 and tab.loc["Residual", "SS"] == pytest.approx(0, abs=1e-12)
    # main effects only: the interaction becomes the residual, F = MS / MS_res
    main = doe.anova(t, "y", ["A", "B"], interactions=1, method="direct")
    assert main.loc["Residual", "SS"] == pytest.approx(12) and main.loc["Residual", "DoF"] == 2
    assert main.loc["A", "F"] == pytest.approx(24 / 6) and main.loc["B", "F"] == pytest.approx(26 / 6)
    # the default (statsmodels' anova_lm, Type II) gives the same effects; eta squared = SS / SS_total (88)
    default = doe.anova(t, "y", ["A", "B"])
    assert default.attrs["method"] == "lstsq"                     # saturated: anova_lm has no residual to use
    np.testing.assert_allclose(default.loc[["A", "B", "A:B"], "SS"], [24, 52, 12], rtol=1e-9)
    np.testing.assert_allclose(default.loc[["A", "B", "A:B"], "percent"], tab.loc[["A", "B", "A:B"], "percent"],
                               rtol=1e-9)
    np.testing.assert_allclose(default.loc[["A", "B", "A:B"], "eta_sq"], [24 / 88, 52 / 88, 12 / 88], rtol=1e-9)
    main_sm = doe.anova(t, "y", ["A", "B"], interactions=1)
    assert main_sm.attrs["method"] == "statsmodels"
    np.testing.assert_allclose(main_sm.loc[["A", "B", "Residual"], "SS"], [24, 52, 12], rtol=1e-9)
    typ3 = doe.anova(t, "y", ["A", "B"], interactions=1, typ=3)   # balanced: Type III = Type II
    np.testing.assert_allclose(typ3.loc[["A", "B", "Residual"], "SS"], [24, 52, 12], rtol=1e-9)


def test_anova_sobol_optimum_share_one_argument_order():
    """(df, response, factors=...) everywhere; anova's former (df, factors, response) still gives the same table,
    with a DeprecationWarning."""
    import inspect
    for fn in (doe.anova, doe.sobol, doe.optimum):
        assert list(inspect.signature(fn).parameters)[:3] == ["df", "response", "factors"]
    t = doe.full_factorial({"A": [0, 1], "B": [0, 1, 2]})
    t["y"] = [2.0, 4.0, 6.0, 4.0, 6.0, 14.0]
    new = doe.anova(t, "y", ["A", "B"])
    with pytest.warns(DeprecationWarning, match="anova"):
        old = doe.anova(t, ["A", "B"], "y")
    pd.testing.assert_frame_equal(old, new)
    assert doe.anova(t, response="y", factors=["A", "B"]).equals(new)


def test_at15_table_3_10_normalised_percent():
    ms = {"timeLearning": 3, "timeSwitchphase": 20, "thresholdMbc2sbcCoupling": 30, "thresholdMbcNoInputOpt": 11,
          "lambda": 20, "M": 372, "N": 372, "useErrDiffEqu": 44,
          "tL:tS": 1, "tL:thS": 1, "tL:thM": 0, "tL:l": 3, "tL:M": 2, "tL:N": 2, "tL:u": 3,
          "tS:thS": 7, "tS:thM": 0, "tS:l": 4, "tS:M": 10, "tS:N": 10, "tS:u": 7,
          "thS:thM": 10, "thS:l": 6, "thS:M": 18, "thS:N": 18, "thS:u": 5,
          "thM:l": 2, "thM:M": 0, "thM:N": 0, "thM:u": 1, "l:M": 2, "l:N": 2, "l:u": 3,
          "M:N": 1524, "M:u": 41, "N:u": 41}
    assert sum(ms.values()) == 2595                        # genser2020.md §12.1's check
    pct = doe.normalised_percent(ms)
    assert pct["M"] == pytest.approx(14.3, abs=0.05)
    assert pct["M:N"] == pytest.approx(58.7, abs=0.05)
    assert pct["lambda"] == pytest.approx(0.8, abs=0.05)


def _random_unbalanced(seed=1, n=150):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y"], n), "c": rng.integers(0, 4, n)})
    df["y"] = rng.normal(size=n) + 0.5 * df["a"] + (df["b"] == "x") * df["c"]
    return df


def test_anova_equals_statsmodels_on_unbalanced_data():
    for seed in (1, 2):
        df = _random_unbalanced(seed)
        mine = doe.anova(df, "y", ["a", "b", "c"], method="lstsq")
        ref = doe.anova(df, "y", ["a", "b", "c"])                  # the default: statsmodels' anova_lm
        assert ref.attrs["method"] == "statsmodels"
        assert not mine.attrs["balanced"]
        np.testing.assert_allclose(mine["SS"], ref["SS"], rtol=1e-9)
        np.testing.assert_array_equal(mine["DoF"], ref["DoF"])
        np.testing.assert_allclose(mine["F"].iloc[:-1], ref["F"].iloc[:-1], rtol=1e-9)
        np.testing.assert_allclose(mine["p"].iloc[:-1], ref["p"].iloc[:-1], rtol=1e-7, atol=1e-300)


def test_anova_balanced_direct_equals_least_squares_and_statsmodels():
    t = doe.full_factorial({"a": [1, 2, 3], "b": [0, 1], "c": [1, 2, 3, 4]})
    t = pd.concat([t, t], ignore_index=True)                     # two replicates
    t["y"] = np.random.default_rng(5).normal(size=len(t)) + t["a"] * t["b"]
    d, l, s = (doe.anova(t, "y", ["a", "b", "c"], method=m) for m in ("direct", "lstsq", "statsmodels"))
    np.testing.assert_allclose(d["SS"], l["SS"], rtol=1e-9)
    np.testing.assert_allclose(d["SS"], s["SS"], rtol=1e-9)
    np.testing.assert_allclose(d["F"].iloc[:-1], s["F"].iloc[:-1], rtol=1e-9)


def test_anova_errors_name_the_argument():
    t = doe.full_factorial({"a": [1, 2], "b": [1, 2]})
    t["y"] = [1.0, 2.0, math.inf, 3.0]
    with pytest.raises(ValueError, match="response: 1 runs have non-finite 'y'"):
        doe.anova(t, "y", ["a", "b"])
    with pytest.raises(ValueError, match=r"factors: \['z'\] are not columns"):
        doe.anova(t, "y", ["a", "z"])
    with pytest.raises(ValueError, match="interactions"):
        doe.anova(t, "y", ["a", "b"], interactions=3)


AT16 = [  # (histogram counts, divisor, printed value, ± one unit in the last printed digit)
    ({1: 25, 10: 24, 100: 24, 1000: 24}, 97, 275, 1),                      # stepsErrDiffEqu, §12.2
    ({0.1: 50, 0.2: 99, 0.5: 30}, 179, 0.22, 0.01),                         # timeLearning, RLS
    ({0.002: 101, 0.01: 78}, 179, 0.005, 0.001),                            # timeSwitchphase, RLS
    ({1: 60, 0.999: 72, 0.99: 33, 0.98: 14}, 179, 0.996, 0.001),            # λ, RLS
    ({2: 87, 5: 92}, 179, 3.54, 0.01),                                      # th_SBC, RLS (87, §16 fix)
    ({0.1: 5, 0.2: 28, 0.5: 17}, 50, 0.29, 0.01),                           # timeLearning, MOESP
    ({0.002: 37, 0.01: 13}, 50, 0.004, 0.001),                              # timeSwitchphase, MOESP
    ({2: 13, 5: 37}, 50, 4.22, 0.01),                                       # th_SBC, MOESP
    ({0.01: 6, 0.05: 6, 0.1: 6, 0.5: 6, 1: 6, 2: 8, 5: 12}, 50, 1.72, 0.01),  # th_mod, MOESP
    ({200: 2, 500: 19, 1000: 29}, 50, 778, 1),                              # windowSize, MOESP
]


@pytest.mark.parametrize("counts, n, printed, unit", AT16)
def test_at16_optimum_from_histogram_counts(counts, n, printed, unit):
    assert sum(counts.values()) == n
    assert abs(doe.histogram_optimum(counts) - printed) <= unit


def test_optimum_rule_recovers_the_histogram_mean():
    """Ascending sorting on a table whose nearly optimal runs (≤ 1.1·min) have the RLS timeLearning histogram."""
    levels = [0.1] * 50 + [0.2] * 99 + [0.5] * 30
    good = pd.DataFrame({"tL": levels, "use": [True] * 120 + [False] * 59,
                         "eps": np.linspace(0.010, 0.0109, len(levels))})
    bad = pd.DataFrame({"tL": [0.5] * 40, "use": [False] * 40, "eps": np.linspace(0.0111, 1.0, 40)})
    df = pd.concat([bad, good], ignore_index=True)
    opt = doe.optimum(df, "eps", ["tL", "use"])
    assert opt.attrs["n"] == 179 and opt.attrs["counts"]["tL"] == {0.1: 50, 0.2: 99, 0.5: 30}
    assert opt["tL"] == pytest.approx(0.22, abs=0.005) and opt["use"] is True
    assert doe.optimum(df, "eps", ["tL"], top=10).attrs["n"] == 10
    assert doe.optimum(df, "eps", ["tL"], tol=1.0, min_runs=50).attrs["n"] == 50


# ---------------------------------------------------------------------------------------------------- runner
def _build(p):
    approx = cosim.ZOH() if p["approx"] == "zoh" else cosim.Lagrange(k=1)
    return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"], dk=1e3), t_end=0.05, H=p["H"],
                approximation=approx, solver=cosim.Exact())


FACTORS = {"ck": [1e5, 1e7], "approx": ["zoh", "lagrange"], "H": [1e-3, 5e-3]}


def _responses(res, ref):
    return {"eps": doe.eps_mono(res, ref), "eps_sat": doe.eps_mono(res, ref, saturate=1.0),
            "stable": doe.amplitude_stable(res)}


@pytest.fixture(scope="module")
def serial_table():
    return doe.Study(_build, FACTORS, responses=_responses, reference=True).run()


def test_serial_study_table(serial_table):
    df = serial_table
    assert len(df) == 8 and list(df.columns[:3]) == ["ck", "approx", "H"]
    assert {"eps", "eps_sat", "stable", "status", "message", "wall"} <= set(df.columns)
    soft = df[df.ck == 1e5]                                  # the nominal coupling: stable, accurate runs
    assert (soft.status == "ok").all() and (soft.eps < 0.5).all() and soft.stable.all()
    assert (df.eps_sat == np.minimum(df.eps.fillna(1.0), 1.0)).all()
    # one run by hand gives the same eps
    p = {"ck": 1e5, "approx": "lagrange", "H": 1e-3}
    kw = _build(p)
    res = cosim.simulate(kw.pop("system"), **kw)
    ref = cosim.simulate_monolithic(res.system, 0.05, t_eval=res.t)
    row = df[(df.ck == 1e5) & (df.approx == "lagrange") & (df.H == 1e-3)].iloc[0]
    assert row.eps == res.error_to(ref)["eps_mono"]


def test_failed_runs_are_rows():
    """ck = 1e7 with Lagrange k = 1 at H = 5 ms diverges: a row with its status and message, eps saturated at 1."""
    study = doe.Study(_build, {"ck": [1e7], "approx": ["lagrange"], "H": [5e-3, 1e-3]}, responses=_responses,
                      reference=True)
    df = study.run()
    bad = df[~df.status.isin(["ok", "unstable"])]
    assert len(bad) >= 1
    # issue 30: a run that grows without bound but stays finite is returned whole with the verdict "unstable"
    assert set(bad.status) <= {"diverged", "solver_error", "unstable"} and bad.message.str.len().min() > 0
    assert (bad.eps_sat == 1.0).all()


def test_unstable_runs_have_their_status(serial_table):
    """A run that ends but whose verdict (cosim/verdict.py) finds the coupling unstable is "unstable" (ck = 1e7, ZOH,
    H = 1 ms), not "ok", and its message is the verdict's reason."""
    df = serial_table
    ended = df[df.status.isin(["ok", "unstable"])]
    assert ((ended.status == "unstable") == ~ended.stable.astype(bool)).all()
    row = df[(df.ck == 1e7) & (df.approx == "zoh") & (df.H == 1e-3)].iloc[0]
    assert row.status == "unstable" and not row.stable and row.message.startswith("coupling unstable: ")
    assert set(df.status) <= {"ok", "unstable", "diverged", "solver_error", "failed"}


@pytest.mark.parametrize("backend", ["serial", "threads", "processes"])
def test_a_study_warns_once_of_its_unstable_runs(backend, capfd):
    """The runs of a study issue no CouplingInstabilityWarning each (a study of thousands of runs printed one per
    unstable run, and once more per worker process): the status column records every verdict and the study warns
    once, with their number. A co-simulation outside a study still warns."""
    from cosim.doe import backends as doe_backends
    doe_backends._close_idle()          # fresh worker processes: they write to the stderr captured here
    with pytest.warns(cosim.CouplingInstabilityWarning) as seen:
        df = doe.Study(_build, FACTORS, responses=_responses, reference=True).run(
            backend=backend, workers=None if backend == "serial" else 2)
    unstable = int((df.status == "unstable").sum())
    assert unstable == 2
    texts = [str(w.message) for w in seen if issubclass(w.category, cosim.CouplingInstabilityWarning)]
    assert texts == [f"study: {unstable} of 8 runs unstable: the coupling's verdict of each is in the message "
                     "column of the rows with status 'unstable'"]
    assert "CouplingInstabilityWarning" not in capfd.readouterr().err     # none from the worker processes either
    kw = _build({"ck": 1e7, "approx": "zoh", "H": 1e-3})
    with pytest.warns(cosim.CouplingInstabilityWarning, match="coupling unstable: "):
        assert not cosim.simulate(kw.pop("system"), **kw).stable


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_backends_give_identical_tables(serial_table, backend):
    df = doe.Study(_build, FACTORS, responses=_responses, reference=True).run(backend=backend, workers=2)
    cols = ["ck", "approx", "H", "eps", "eps_sat", "stable", "status", "message"]
    pd.testing.assert_frame_equal(df[cols], serial_table[cols])


def test_dask_local_cluster_gives_identical_table(serial_table):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        df = doe.Study(_build, FACTORS, responses=_responses, reference=True).run(backend=client)
    cols = ["ck", "approx", "H", "eps", "eps_sat", "stable", "status", "message"]
    pd.testing.assert_frame_equal(df[cols], serial_table[cols])


def _plus_one(x):
    return x + 1


def _raises(x):
    raise ValueError("a study error")


@pytest.mark.parametrize("kind", ["threads", "dask"])
def test_cancel_keeps_the_results_of_finished_tasks(kind):
    """When a study stops on an error it cancels its tasks, then records those that had finished (no finished run
    is dropped): cancelling must leave a finished task's result readable (Dask's cancel dropped it)."""
    from cosim.doe import backends
    import contextlib
    with contextlib.ExitStack() as stack:
        if kind == "dask":
            distributed = pytest.importorskip("distributed")
            cl = stack.enter_context(distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                                              dashboard_address=None))
            be = backends.make_backend(stack.enter_context(distributed.Client(cl)), None)
        else:
            be = backends.make_backend(kind, 2)
            stack.callback(be.close)
        done, failed = be.submit(_plus_one, 1), be.submit(_raises, 1)
        while not (done.done() and failed.done()):
            be.wait([done, failed], 1)
        be.cancel([done, failed])
        assert be.result(done) == 2
        with pytest.raises(ValueError, match="a study error"):
            be.result(failed)


def test_reference_once_per_distinct_system_and_grid(monkeypatch):
    calls = []
    orig = doe_runner.compute_reference

    def counting(kw, grid, options):
        calls.append((kw["system"].params["ck"], len(grid)))
        return orig(kw, grid, options)

    monkeypatch.setattr(doe_runner, "compute_reference", counting)
    doe.Study(_build, FACTORS, responses=["eps_mono", "stable"], reference=True).run(backend="threads", workers=2)
    assert sorted(calls) == sorted({(ck, int(round(0.05 / H)) + 1) for ck in FACTORS["ck"] for H in FACTORS["H"]})


def test_checkpoint_resume_and_changed_factors(tmp_path):
    """Responses that raise for some runs: those runs are rows with status "failed" and the error, the study goes
    on; a resume repeats no finished run, and runs the failed ones again only with retry_failed=True."""
    path = tmp_path / "study.sqlite"
    built, broken = [], [True]

    def build(p):
        built.append(p["i"])
        # 0.1 s: long enough for the 20 % amplitude rule to call the runs stable (status "ok", not "unstable")
        return dict(system=cosim.models.two_mass_oscillator(ck=1e5 + p["i"]), t_end=0.1, H=1e-3,
                    solver=cosim.Exact())

    def responses(res, ref):
        if broken[0] and res.system.params["ck"] >= 1e5 + 5:
            raise RuntimeError("disk full")
        return {"g": float(res.growth)}

    study = doe.Study(build, {"i": list(range(10))}, responses=responses)
    df = study.run(checkpoint=path)
    assert list(df.status) == ["ok"] * 5 + ["failed"] * 5
    assert (df.message[5:] == "responses raised RuntimeError: disk full").all() and df.g[5:].isna().all()
    assert sorted(doe.load(path).index) == list(range(10))
    built.clear()
    assert (study.run(checkpoint=path, backend="threads", workers=2).status == "failed").sum() == 5
    assert built == [0]                                          # run 0 once, for the checkpoint's identity
    broken[0] = False
    built.clear()
    df = study.run(checkpoint=path, backend="threads", workers=2, retry_failed=True)
    assert sorted(built) == [0, 5, 6, 7, 8, 9]                   # finished runs are not repeated
    assert list(df.index) == list(range(10)) and (df.status == "ok").all() and df.g.notna().all()
    assert (doe.load(path).status == "ok").all()
    built.clear()
    doe.Study(build, {"i": list(range(10))}, responses=responses).run(checkpoint=path)
    assert built == [0]
    with pytest.raises(doe.StudyError, match="checkpoint: .* belongs to a different study"):
        doe.Study(build, {"i": list(range(11))}, responses=responses).run(checkpoint=path)


def test_checkpoint_commits_in_groups(tmp_path):
    """commit_interval groups the commits; every run is in the file at the end, and at once with 0."""
    path = tmp_path / "grouped.sqlite"
    seen = []

    def responses(res, ref):                        # how many runs the file holds while the study runs
        seen.append(len(doe.load(path)) if path.exists() else 0)
        return {"g": float(res.growth)}

    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(), t_end=0.01, H=1e-3, solver=cosim.Exact())

    df = doe.Study(build, {"i": list(range(6))}, responses=responses).run(checkpoint=path, commit_interval=3600)
    assert seen == [0] * 6 and sorted(doe.load(path).index) == list(range(6)) and len(df) == 6
    path2 = tmp_path / "each.sqlite"
    path = path2
    seen.clear()
    doe.Study(build, {"i": list(range(6))}, responses=responses).run(checkpoint=path2, commit_interval=0)
    assert seen == [0, 1, 2, 3, 4, 5]
    for bad in (-1.0, float("inf"), True, "1"):
        with pytest.raises(ValueError, match="commit_interval"):
            doe.Study(build, {"i": [0]}).run(commit_interval=bad)


def test_study_errors_name_the_argument():
    def bad_build(p):
        if p["ck"] > 1e5:
            raise ZeroDivisionError("boom")
        return dict(system=cosim.models.two_mass_oscillator(ck=p["ck"]), t_end=0.01, H=1e-3, solver=cosim.Exact())

    df = doe.Study(bad_build, {"ck": [1e5, 1e6]}).run()                 # a failed run, named by its row
    assert list(df.status) in (["ok", "failed"], ["unstable", "failed"]) and df.message[1] == "build raised ZeroDivisionError: boom"
    with pytest.raises(doe.StudyError, match="has no 'system'"):
        doe.Study(lambda p: dict(t_end=1.0), {"ck": [1.0]}).run()
    df = doe.Study(lambda p: dict(system=cosim.models.two_mass_oscillator(), t_end=0.01, H=-1.0), {"ck": [1.0]}).run()
    assert df.status[0] == "failed" and df.message[0].startswith("cosim.simulate refused the options: ValueError: H")
    with pytest.raises(TypeError, match="build: expected a function"):
        doe.Study(None, {"ck": [1.0]})
    with pytest.raises(ValueError, match="responses: unknown response name"):
        doe.Study(bad_build, {"ck": [1.0]}, responses=["eps"])
    with pytest.raises(ValueError, match="need the monolithic reference"):
        doe.Study(bad_build, {"ck": [1.0]}, responses=["eps_mono"])
    with pytest.raises(ValueError, match="backend: unknown backend 'gpu'"):
        doe.Study(bad_build, {"ck": [1e5]}).run(backend="gpu")
    with pytest.raises(ValueError, match="workers"):
        doe.Study(bad_build, {"ck": [1e5]}).run(backend="threads", workers=0)


def test_progress_bar_and_plots(tmp_path, capsys):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    study = doe.Study(_build, FACTORS, responses=["eps_mono_sat", "stable"], reference=True)
    df = study.run(progress=True)
    assert "8/8" in capsys.readouterr().err
    tab = doe.anova(df, response="eps_mono_sat")
    for axes in (doe.plots.main_effects(df, "eps_mono_sat"), doe.plots.interaction_heatmap(tab),
                 doe.plots.sorted_runs(df, "eps_mono_sat"), doe.plots.optimum_histograms(df, "eps_mono_sat", top=3)):
        fig = np.ravel(axes)[0].figure
        fig.savefig(tmp_path / "f.png")
        assert (tmp_path / "f.png").stat().st_size > 5000
        plt.close(fig)


# ---------------------------------------------------------------------------------------------------- genser example
def _genser_example():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parent.parent / "examples" / "genser_doe.py"
    spec = importlib.util.spec_from_file_location("genser_doe", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_genser_designs_have_the_thesis_sizes():
    g = _genser_example()
    assert len(doe.full_factorial(g.FACTORS_12_2)) == 512           # §12.2
    assert len(doe.full_factorial(g.FACTORS_RLS)) == 17640          # §12.3 RLS
    assert len(doe.full_factorial(g.FACTORS_MOESP)) == 7056         # §12.3 MOESP


def test_genser_example_reduced(tmp_path, capsys):
    g = _genser_example()
    name = "rls" if g.have_prestep() else "zoh"
    assert g.main([name, "--runs", "4", "--workers", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr()
    if name == "zoh":
        assert "needs the pre-step coupling cosim.PreStep" not in out.err   # asked for zoh directly
        assert g.main(["rls", "--runs", "4", "--out", str(tmp_path / "r"), "--no-progress"]) == 0
        assert "needs the pre-step coupling cosim.PreStep" in capsys.readouterr().err
    table = pd.read_csv(tmp_path / f"{name}.csv", index_col="run")
    assert len(table) == 4 and table["eps_mono_sat"].between(0, 1).all()


def test_genser_12_2_reduced_with_the_real_prestep():
    """genser2020 §12.2 (exact IJs, continuous pre-step, linear DMO, ΔT = 1 ms, δt = 1e-5, 1 s), reduced to the
    optionExtrapolation × stepsExtrapolation factors that dominate Table 3.4, the others at fixed levels: with exact
    extrapolation every run is accurate whatever the number of steps; with the explicit Euler extrapolation one step
    fails, 10 steps are worse and 1000 steps are as accurate as exact (the thesis's findings of §12.2)."""
    g = _genser_example()
    if not g.have_prestep():
        pytest.skip("cosim.PreStep is not available")
    rows = [dict(optionErrDiffEqu="exact", stepsErrDiffEqu=1, optionExtrapolation=o, stepsExtrapolation=n,
                 stepsDiscreteSystemMatrices=100, useErrDiffEqu=False)
            for o in ("exact", "ex. euler") for n in (1, 10, 1000)]
    study = doe.Study(g.build_12_2, design=pd.DataFrame(rows), responses=["eps_mono", "eps_mono_sat", "stable"],
                      reference=True)
    df = study.run(backend="threads", workers=2)
    exact = df[df.optionExtrapolation == "exact"].set_index("stepsExtrapolation")
    euler = df[df.optionExtrapolation == "ex. euler"].set_index("stepsExtrapolation")
    assert (exact.status == "ok").all() and exact.stable.all()
    assert exact.eps_mono.max() < 1e-3 and exact.eps_mono.max() - exact.eps_mono.min() <= 1e-6 * exact.eps_mono.max()
    assert euler.status[1] == "diverged" and euler.eps_mono_sat[1] == 1.0 and not euler.stable[1]
    assert euler.eps_mono[10] > 1.5 * euler.eps_mono[1000]
    assert abs(euler.eps_mono[1000] - exact.eps_mono[1000]) < 0.05 * exact.eps_mono[1000]


def test_reference_key_by_value():
    """The reference cache key: equal systems and grids share it, a changed parameter, initial state or grid does
    not; systems with Python callables still get a key (by identity)."""
    from cosim.doe import reference as ref

    def kw(**over):
        d = dict(system=cosim.models.two_mass_oscillator(ck=1e5), t_end=0.01, H=1e-3)
        d.update(over)
        return d

    grids = {}
    k1 = ref.reference_key(kw(), {}, grids)[0]
    assert ref.reference_key(kw(), {}, grids)[0] == k1 and len(grids) == 1
    assert ref.reference_key(kw(system=cosim.models.two_mass_oscillator(ck=2e5)), {}, grids)[0] != k1
    assert ref.reference_key(kw(H=2e-3), {}, grids)[0] != k1
    assert ref.reference_key(kw(x0={"S1": [0.2, 0.0]}), {}, grids)[0] != k1
    assert ref.reference_key(kw(), {"rtol": 1e-9}, grids)[0] != k1
    assert ref.system_key(cosim.models.two_mass_oscillator(ck=1e5), x0=[1]) != \
        ref.system_key(cosim.models.two_mass_oscillator(ck=1e5), x0=[1.0])
    g = ref.reference_key(kw(t_end=0.0105, H=1e-3), {}, grids)[1]
    np.testing.assert_allclose(g, np.append(np.arange(11) * 1e-3, 0.0105))
