"""The verdict on a run (issue 30, part 2): DivergenceError only for non-finite values or the absolute bound; the
coupling's stability judged by rho(Omega) (all-LTI) or sustained geometric growth (otherwise), reported in
res.status / res.message and a CouplingInstabilityWarning; right on every case of the table (tests/verdict_cases.py)
whose truth comes from the monolithic solution."""
import warnings

import numpy as np
import pytest

import cosim
from verdict_cases import CASES, TABLE53, truth_from_monolithic


@pytest.mark.parametrize("name", list(CASES))
def test_verdict_table(name):
    build, kw, truth, rule, compare = CASES[name]
    system = build()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cosim.simulate(system, **kw)
    if compare:   # the table's truth is the monolithic solution's
        assert truth_from_monolithic(system, res) == truth, f"{name}: the table's truth disagrees with the reference"
    warned = [w for w in caught if issubclass(w.category, cosim.CouplingInstabilityWarning)]
    assert res.verdict.rule == rule
    assert res.stable == truth, f"{name}: verdict {res.verdict}"
    if truth:
        assert res.status == res.FINISHED and res.success and not warned and res.message == ""
    else:
        assert res.status == res.UNSTABLE and res.state == "unstable" and not res.success
        assert len(warned) == 1 and str(warned[0].message) == res.message and "coupling unstable" in res.message
        assert res.t[-1] == pytest.approx(kw["t_end"])          # the whole run is returned


def test_issue_table53_case_is_stable():
    """The issue's case: an accurate run (within 1.7e-4 of the monolithic solution) whose forcing makes the physical
    amplitude grow 3.28e3 times used to raise DivergenceError; it finishes, stable."""
    build, kw = TABLE53
    with warnings.catch_warnings():
        warnings.simplefilter("error", cosim.CouplingInstabilityWarning)
        res = cosim.simulate(build(), **kw)
    assert res.status == res.FINISHED and res.stable and res.verdict.rule == "amplitude"


def test_only_non_finite_or_the_bound_raise():
    s = cosim.models.two_mass_oscillator(ck=2e5, dk=200.0)
    with pytest.raises(cosim.DivergenceError, match="divergence bound"):
        cosim.simulate(s, 1.0, 5e-3, divergence_bound=10.0)
    with pytest.warns(cosim.CouplingInstabilityWarning):
        res = cosim.simulate(s, 1.0, 5e-3)        # grows 1e5-fold: reported, not raised
    assert np.all(np.isfinite(res.X))


def test_doe_status_column_uses_the_verdict():
    pytest.importorskip("pandas")
    from cosim import doe

    def build(p):
        return dict(system=cosim.models.two_mass_oscillator(ck=2e5, dk=200.0), t_end=1.0, H=p["H"],
                    solver=cosim.Exact())

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cosim.CouplingInstabilityWarning)
        df = doe.Study(build, {"H": [1e-3, 5e-3]}, responses=lambda res, ref: {"stable": res.stable}).run()
    assert list(df["status"]) == ["ok", "unstable"]
    assert "rho(Omega)" in df["message"].iloc[1]


def test_python_only_statuses_take_no_c_status_code():
    """Result.UNSTABLE is set in Python only: its value must differ from every status the C core returns (the
    ``status`` table of ``_core.codes``), and the statuses the C core does return keep their C values."""
    codes = cosim._core.codes["status"]
    assert cosim.Result.UNSTABLE not in codes.values()
    assert cosim.Result.STOPPED == codes["stopped"] and cosim.Result.INTERRUPTED == codes["interrupted"]
    assert cosim.Result.TERMINATED == codes["terminated"]
