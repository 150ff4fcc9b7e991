"""Loud instability: the relative divergence criterion of cosim.simulate, Result.growth / Result.stable (genser2020's
20 % amplitude rule), Result.spectral_radius() with the run's own settings, and the defaults shared by
cosim.simulate and cosim.analysis."""
import math
import warnings

import numpy as np
import pytest

import cosim
from cosim import analysis as an
from cosim import metrics, models

# genser2020's case study (ck = 2e5, dk = 200): rho(Omega) of Jacobi + ZOH + consistent update crosses 1 near H = 2 ms
ISSUE = dict(ck=2e5, dk=200.0)


def issue_system():
    return models.two_mass_oscillator(**ISSUE)


def test_issue_example_is_reported_unstable():
    """simulate(two_mass_oscillator(ck=2e5, dk=200), 1.0, 5e-3) used to return success with |x| = 3e7 from
    x0 = 0.1 (rho = 1.07): the run's verdict (issue 30: rho of the macro step) says unstable, in res.status,
    res.message and a CouplingInstabilityWarning."""
    s = issue_system()
    with pytest.warns(cosim.CouplingInstabilityWarning, match=r"rho\(Omega\) = 1\.07"):
        res = cosim.simulate(s, 1.0, 5e-3)
    assert res.status == res.UNSTABLE and res.state == "unstable" and not res.success and not res.stable
    assert res.verdict.rule == "spectral radius" and res.verdict.value == pytest.approx(res.spectral_radius())
    assert "rho(Omega)" in res.message and len(res.t) == 201


def test_issue_example_raises_with_full_result_when_asked():
    """The relative growth check is opt-in (divergence_growth=1e3): it raises DivergenceError carrying the whole
    run."""
    s = issue_system()
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(s, 1.0, 5e-3, divergence_growth=1e3)
    e = info.value
    res = e.result
    assert isinstance(res, cosim.Result) and not res.success
    assert res.t[-1] == pytest.approx(1.0) and len(res.t) == 201          # the whole run is attached
    assert np.max(np.abs(res.X)) > 1e6 * 0.1                            # it really grew by orders of magnitude
    assert e.growth > 1e3
    assert e.signal in s.signal_names("x") + s.signal_names("y")
    assert 0.2 < e.t <= 1.0
    msg = str(e)
    assert e.signal in msg and "divergence_growth" in msg and "grew by a factor" in msg
    # the analysis with the run's own settings agrees: rho > 1
    rho = res.spectral_radius()
    assert rho > 1.05 and rho == pytest.approx(an.spectral_radius(s, 5e-3, "jacobi", cosim.ZOH()), rel=1e-13)


def test_growth_check_is_configurable(monkeypatch):
    s = issue_system()
    with pytest.warns(cosim.CouplingInstabilityWarning):
        res = cosim.simulate(s, 1.0, 5e-3, divergence_growth=math.inf)  # off (the default): the verdict reports it
    assert res.status == res.UNSTABLE and not res.stable and res.growth > 1e3
    with pytest.raises(cosim.DivergenceError):                          # a stricter factor catches a slower run
        cosim.simulate(s, 1.0, 3e-3, solver=cosim.Exact(), divergence_growth=10.0, last_step="shorten")
    monkeypatch.setattr(cosim.defaults, "DIVERGENCE_GROWTH", math.inf)  # module default for every later call
    with pytest.warns(cosim.CouplingInstabilityWarning):
        assert cosim.simulate(s, 1.0, 5e-3, solver=cosim.Exact()).status == cosim.Result.UNSTABLE
    monkeypatch.setattr(cosim.defaults, "DIVERGENCE_GROWTH", 10.0)
    with pytest.raises(cosim.DivergenceError, match="DIVERGENCE_GROWTH"):
        cosim.simulate(s, 1.0, 3e-3, solver=cosim.Exact(), last_step="shorten")


@pytest.mark.parametrize("bad,exc", [(0.5, ValueError), (1.0, ValueError), (float("nan"), ValueError),
                                     ("large", TypeError), (True, TypeError)])
def test_growth_argument_validated(bad, exc):
    with pytest.raises(exc, match="divergence_growth"):
        cosim.simulate(issue_system(), 0.01, 1e-3, divergence_growth=bad)


def test_sweep_outcome_follows_rho():
    """Over an H sweep, the verdict, the 20 % rule and rho(Omega) of the same settings agree: rho < 1 -> success
    and stable; 1 < rho -> status UNSTABLE with a warning, the whole run returned (no exception)."""
    s = issue_system()
    for H in (5e-4, 1e-3, 2e-3, 2.5e-3, 4e-3, 5e-3):
        rho = an.spectral_radius(s, H, "jacobi", cosim.ZOH(), update="consistent")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = cosim.simulate(s, 1.0, H, solver=cosim.Exact())
        warned = any(issubclass(w.category, cosim.CouplingInstabilityWarning) for w in caught)
        assert res.spectral_radius() == pytest.approx(rho, rel=1e-12) and len(res.t) == round(1.0 / H) + 1
        if rho < 1:
            assert res.success and res.stable and res.growth < 1 and not warned
        else:
            assert res.status == res.UNSTABLE and not res.stable and res.growth > 1 and warned


def test_stable_nominal_run_is_quiet():
    res = cosim.simulate(models.two_mass_oscillator(), 0.1, 1e-4, solver=cosim.Exact())
    assert res.success and res.stable and res.growth < 1
    assert res.spectral_radius() < 1


def test_spectral_radius_uses_the_runs_settings():
    s = models.two_mass_oscillator(**ISSUE)
    kw = dict(scheme="gauss-seidel", approximation=cosim.Lagrange(1), update="simplified", order=["S2", "S1"])
    res = cosim.simulate(s, 0.02, 1e-3, solver=cosim.Exact(), divergence_growth=math.inf, **kw)
    expected = an.spectral_radius(s, 1e-3, **kw)
    assert res.spectral_radius() == pytest.approx(expected, rel=1e-13)
    # and it is not the rho of the defaults (the settings really are taken from the run)
    assert abs(an.spectral_radius(s, 1e-3) - expected) > 1e-6


def test_simulate_and_analysis_share_defaults():
    """The same call pattern means the same co-simulation: defaults from cosim.defaults (Jacobi, ZOH, consistent)."""
    s = issue_system()
    res = cosim.simulate(s, 0.01, 1e-3, solver=cosim.Exact())
    assert res.options["scheme"] == cosim.defaults.SCHEME == "jacobi"
    assert res.options["approximation"] == cosim.defaults.approximation() == cosim.ZOH()
    assert res.options["update"] == cosim.defaults.UPDATE == "consistent"
    explicit = an.spectral_radius(s, 1e-3, "jacobi", cosim.ZOH(), update="consistent")
    assert an.spectral_radius(s, 1e-3) == explicit == res.spectral_radius()
    assert np.array_equal(an.amplification_matrix(s, 1e-3), an.amplification_matrix(s, 1e-3, "jacobi", cosim.ZOH()))
    m = an.two_mass_stability_map([2e5], [200.0], [1e-3])
    assert m.scheme == "jacobi" and m.approximation == cosim.ZOH() and m.update == "consistent"


def test_spectral_radius_of_result_rejects_what_it_cannot_analyse():
    s = models.two_mass_oscillator()
    ref = cosim.simulate_monolithic(s, 0.01)
    with pytest.raises(ValueError, match="monolithic"):
        ref.spectral_radius()
    grid = np.array([0.0, 1e-3, 3e-3, 4e-3])
    res = cosim.simulate(s, 4e-3, grid=grid, solver=cosim.Exact())
    with pytest.raises(ValueError, match="non-uniform"):
        res.spectral_radius()
    uniform = cosim.simulate(s, 4e-3, grid=np.linspace(0, 4e-3, 5), solver=cosim.Exact())
    assert uniform.spectral_radius() == pytest.approx(an.spectral_radius(s, 1e-3), rel=1e-12)
    ode = cosim.ODE(lambda t, x, u: -x + u, lambda t, x, u: x, nx=1, nu=1, ny=1, name="N", feedthrough=False)
    lti = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="L")
    mixed = cosim.CoupledSystem([ode, lti], [cosim.connect("N.y[0]", "L.u[0]"), cosim.connect("L.y[0]", "N.u[0]")])
    with pytest.raises(ValueError, match="not a cosim.LTI"):
        cosim.simulate(mixed, 0.1, 0.01).spectral_radius()
    with pytest.raises(TypeError, match="result"):
        an.result_spectral_radius("res")


def test_engine_bound_error_names_the_state():
    """The C engine reports 'state 1' (a global index): the error names it as S1.x[1]."""
    osc = cosim.LTI([[0.0, 1.0], [-1e4, 0.0]], [[0.0], [1.0]], [[1.0, 0.0]], x0=[0.1, 0.0], name="S1")
    s = cosim.CoupledSystem([osc, integrator_lti("S2")], [cosim.connect("S1.y[0]", "S2.u[0]"),
                                                          cosim.connect("S2.y[0]", "S1.u[0]", 1e-3)])
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(s, 0.1, 1e-4, solver=cosim.Exact(), divergence_bound=1.0)   # |v| reaches 10
    e = info.value
    assert e.signal == "S1.x[1]" and "state S1.x[1] = " in str(e) and "state 1 " not in str(e)
    assert "divergence_bound" in str(e) and e.t == pytest.approx(e.result.t[-1] + 1e-4)
    assert len(e.result.t) >= 2 and np.all(np.abs(e.result.X) <= 1.0)     # up to the step before


def integrator_lti(name):
    return cosim.LTI([[0.0]], [[1.0]], [[1.0]], name=name)


def test_engine_nonfinite_output_names_the_output():
    nan_out = cosim.ODE(lambda t, x, u: -x, lambda t, x, u: np.array([np.nan]), nx=1, nu=0, ny=1, x0=[1.0],
                        name="A", outputs=["level"])
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(cosim.CoupledSystem([nan_out]), 0.1, 0.01)
    e = info.value
    assert e.signal == "A.level" and "output A.level" in str(e) and "not finite" in str(e)
    assert "output 0" not in str(e) and e.growth == math.inf


# ---------------------------------------------------------------------------------------------------------------
# metrics: the amplitude measures on known signals
def test_growth_of_known_signals():
    t = np.linspace(0.0, 10.0, 1001)
    V = np.column_stack([np.exp(0.3 * t), np.exp(-t), np.zeros_like(t), np.where(t > 5, 1.0, 0.0)])
    early, late = metrics.amplitudes(t, V)
    assert early == pytest.approx([np.exp(0.6), 1.0, 0.0, 0.0]) and late == pytest.approx([np.exp(3.0), np.exp(-8),
                                                                                              0.0, 1.0])
    r = metrics._ratio(late, early)
    assert r[0] == pytest.approx(np.exp(2.4)) and r[1] == pytest.approx(np.exp(-8)) and r[2] == 1.0
    assert r[3] == math.inf                                     # 0 in the first 20 %, moving later
    V[500, 1] = np.nan
    early, late = metrics.amplitudes(t, V)
    assert early[1] == 1.0 and late[1] == pytest.approx(np.exp(-8))  # t = 5 is in neither 20 % window
    early, late = metrics.amplitudes(t, V, window=0.5)
    assert math.isinf(early[1]) and math.isinf(late[1])        # t = 5 lies in both halves
    with pytest.raises(ValueError, match="window"):
        metrics.amplitudes(t, V, window=0.7)
    with pytest.raises(ValueError, match="values"):
        metrics.amplitudes(t, V[:-1])


def test_twenty_percent_rule_on_a_result():
    """genser2020 §11.3: unstable iff a coupled output is larger in the last 20 % than in the first 20 %; the
    per-signal growth names the coupled outputs only (S1.x1, S1.v1, S2.F of the force/displacement oscillator)."""
    s = issue_system()
    res = cosim.simulate(s, 1.0, 2.5e-3, solver=cosim.Exact())
    g = metrics.growth(res)
    assert set(g) == {"S1.x1", "S1.v1", "S2.F"}
    n = len(res.t)
    for name, col in (("S1.x1", res.y["S1"][:, 0]), ("S2.F", res.y["S2"][:, 0])):
        first = np.max(np.abs(col[res.t <= 0.2 + 1e-12]))
        last = np.max(np.abs(col[res.t >= 0.8 - 1e-12]))
        assert g[name] == pytest.approx(last / first, rel=1e-12)
    assert res.growth == max(g.values()) and res.stable == (res.growth <= 1) and n == 401


def test_divergence_criterion_ignores_short_runs_and_quiet_signals():
    t = np.linspace(0, 1, 11)                                    # 3 points in the first 20 %: not judged
    assert metrics.divergence(t, [(np.exp(20 * t)[:, None], ["s"])], 1e3) is None
    t = np.linspace(0, 1, 101)
    zero = np.zeros((101, 1))
    assert metrics.divergence(t, [(zero, ["z"])], 1e3) is None
    d = metrics.divergence(t, [(np.column_stack([np.exp(10 * t), np.cos(t)]), ["grows", "calm"])], 1e3)
    assert d.signal == "grows" and d.factor == pytest.approx(np.exp(8), rel=1e-12)
    assert d.t == pytest.approx(t[np.argmax(np.exp(10 * t) > 1e3 * np.exp(2))])


def test_result_stopped_by_the_engine_is_not_stable():
    s = models.two_mass_oscillator()
    with pytest.raises(cosim.DivergenceError) as info:
        cosim.simulate(s, 0.1, 1e-4, solver=cosim.Exact(), divergence_bound=1.0)
    res = info.value.result
    assert len(res.t) == 1 and res.stable is False and res.growth == math.inf
    quiet = cosim.simulate(s, 0.0, 1e-4)                         # t_end = 0: one point, nothing grew
    assert quiet.success and quiet.growth == 1.0 and quiet.stable


def test_divergence_criterion_on_non_finite_values():
    t = np.linspace(0, 1, 101)
    V = np.column_stack([np.cos(t), np.sin(5 * t)])
    V[60, 1] = np.inf
    d = metrics.divergence(t, [(V, ["a", "b"])], 1e3)
    assert d.signal == "b" and d.factor == math.inf and d.t == t[60]
    V[60, 1], V[3, 0] = 0.0, np.nan                              # non-finite inside the early window
    d = metrics.divergence(t, [(V, ["a", "b"])], 1e3)
    assert d.signal == "a" and d.factor == math.inf and d.t == t[3]


def test_divergence_message_in_the_engines_local_naming():
    """Engine messages that name the unit and a local index ('state S2.x[1]', 'output A.y[0]') get the signal's
    own name where it has one; the monolithic reference's composite unit maps back to the system's states."""
    a = cosim.LTI([[-1.0]], [[1.0]], [[1.0]], name="A", outputs=["level"], x0=[1.0])
    b = cosim.LTI([[-1.0, 0.0], [0.0, -1.0]], [[1.0], [0.0]], [[1.0, 1.0]], name="B")
    s = cosim.CoupledSystem([a, b], [cosim.connect("B.y[0]", "A.u[0]"), cosim.connect("A.level", "B.u[0]")])
    res = cosim.simulate(s, 0.1, 0.01)
    e = cosim.DivergenceError("co-simulation diverged at t = 0.05: state B.x[1] = 3e+10 exceeds the divergence "
                              "bound (numerically unstable coupling?)", res)
    assert e.signal == "B.x[1]" and e.t == 0.05 and e.growth is None and "divergence_bound=math.inf" in str(e)
    e = cosim.DivergenceError("co-simulation diverged at t = 0: output A.y[0] = nan is not finite", res)
    assert e.signal == "A.level" and "output A.level = nan" in str(e) and e.growth == math.inf
    ref = cosim.simulate_monolithic(s, 0.1)
    e = cosim.DivergenceError("co-simulation diverged at t = 0.1: state monolithic.x[2] = inf is not finite", ref)
    assert e.signal == "B.x[1]" and e.growth == math.inf
    plain = cosim.DivergenceError("something else", res)
    assert plain.signal is None and str(plain) == "something else"


def test_divergence_criterion_validates_arguments():
    t = np.linspace(0, 1, 101)
    with pytest.raises(ValueError, match="limit"):
        metrics.divergence(t, [(np.ones((101, 1)), ["a"])], 0.5)
    with pytest.raises(TypeError, match="limit"):
        metrics.divergence(t, [(np.ones((101, 1)), ["a"])], "big")
    with pytest.raises(ValueError, match="groups"):
        metrics.divergence(t, [(np.ones((100, 1)), ["a"])], 1e3)
    with pytest.raises(ValueError, match="groups"):
        metrics.divergence(t, [(np.ones((101, 2)), ["a"])], 1e3)
    with pytest.raises(ValueError, match="t: must be finite"):
        metrics.divergence(t[::-1], [(np.ones((101, 1)), ["a"])], 1e3)
    with pytest.raises(TypeError, match="result"):
        metrics.growth("not a result")


def test_divergence_criterion_spares_growth_that_levels_off():
    """A solution that grows physically (a late step input from rest) passes the factor but has levelled off by the
    end; the same factor with geometric growth to the end is flagged (metrics.GROWING)."""
    t = np.linspace(0.0, 10.0, 1001)
    step = np.where(t < 5.0, 1e-9, 1.0 - np.exp(-(t - 5.0) * 5.0))[:, None]          # 1e9 growth, levels off
    assert metrics.divergence(t, [(step, ["s"])], 1e3) is None
    geometric = (1e-9 * np.exp(t * 3.0))[:, None]                                        # grows to the end
    d = metrics.divergence(t, [(geometric, ["s"])], 1e3)
    assert d is not None and d.signal == "s" and d.factor > 1e3
    # end to end: a lag driven by a source that switches on late (a pilot command from rest) runs through
    src = cosim.ODE(lambda t_, x, u: np.zeros(0), lambda t_, x, u: np.array([0.0 if t_ < 5.0 else 1.0]), 0, 0, 1,
                    name="src")
    lag = cosim.LTI([[-2.0]], [[2.0]], [[1.0]], x0=[1e-12], name="lag")
    sys_ = cosim.CoupledSystem([src, lag], [cosim.connect("src.y[0]", "lag.u[0]")])
    res = cosim.simulate(sys_, t_end=10.0, H=0.05, solver=cosim.RK4())
    assert res["lag.y[0]"][-1] == pytest.approx(1.0, abs=1e-3) and res.status == 0


def _divergence_numpy(t, groups, limit, w):
    """The relative divergence criterion in plain NumPy, as cosim.metrics.divergence documents it: the reference for
    the C kernel (csrc/analysis/growth.c)."""
    span = t[-1] - t[0]
    k = int(np.searchsorted(t, t[0] + w * span * (1 + 1e-12), side="right"))
    if k < metrics._MIN_EARLY_POINTS or k >= t.size:
        return None
    j1 = int(np.searchsorted(t, t[-1] - w * span * (1 + 1e-12), side="left"))
    j0 = int(np.searchsorted(t, t[-1] - 2 * w * span * (1 + 1e-12), side="left"))
    late = j1 >= k and t.size - j1 >= metrics._MIN_EARLY_POINTS and j1 - j0 >= metrics._MIN_EARLY_POINTS
    worst = None
    for V, names in groups:
        if V.shape[1] == 0:
            continue
        A = np.abs(V)
        a0, peak = A[:k].max(axis=0), A[k:].max(axis=0)          # NaN propagates
        finite0 = a0[np.isfinite(a0)]
        ref = np.maximum(a0, metrics._FLOOR * (finite0.max() if finite0.size else 0.0))
        ok = np.isfinite(peak) & np.isfinite(ref)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            factor = np.where(ok, peak / np.where(ref > 0, ref, 1.0), np.inf)
        factor[ok & (ref <= metrics._REST * peak)] = -np.inf
        if late:
            with np.errstate(invalid="ignore"):
                growing = ~(A[j1:].max(axis=0) <= metrics.GROWING * A[j0:j1].max(axis=0))
            factor[ok & ~growing] = -np.inf
        j = int(np.argmax(factor))
        if factor[j] > limit and (worst is None or factor[j] > worst[1]):
            col = V[:, j]
            bad = ~np.isfinite(col)
            if np.isfinite(ref[j]):
                bad[k:] |= ~(np.abs(col[k:]) <= limit * ref[j])
            worst = (names[j], float(factor[j]), float(t[np.argmax(bad)]), float(ref[j]), float(peak[j]))
    return worst


def test_divergence_kernel_matches_numpy_reference():
    """metrics.divergence (C kernel) equals the NumPy statement of the criterion bit for bit: random signals that
    grow, level off, rest at 1e-39 or 0, carry NaN/inf (also in the early window), in strided and Fortran layouts,
    on uneven time grids, for several windows and limits."""
    rng = np.random.default_rng(7)
    flagged = 0
    for case in range(400):
        n = int(rng.choice([2, 6, 12, 40, 101, 333]))
        t = np.cumsum(rng.uniform(0.1, 1.0, n)) if case % 2 else np.linspace(0.0, 3.0, n)
        groups = []
        for g in range(int(rng.integers(1, 3))):
            m = int(rng.integers(0, 5))
            cols = []
            for _ in range(m):
                kind = int(rng.integers(0, 6))
                s = (t - t[0]) / max(t[-1] - t[0], 1e-300)
                col = [np.exp(rng.uniform(1, 25) * s) * rng.choice([-1, 1]), np.cos(7 * s),
                       np.zeros(n), 1e-39 * np.exp(40 * s), np.where(s < 0.6, 1e-9, 1.0 - np.exp(-(s - 0.6) * 30)),
                       rng.normal(size=n) * np.exp(rng.uniform(0, 10) * s)][kind]
                col = np.array(col, dtype=float)
                if rng.random() < 0.15:
                    col[rng.integers(0, n)] = rng.choice([np.nan, np.inf, -np.inf])
                cols.append(col)
            V = np.column_stack(cols) if cols else np.zeros((n, 0))
            layout = int(rng.integers(0, 3))
            if layout == 1:
                V = np.asfortranarray(V)
            elif layout == 2 and m:
                W = np.zeros((n, 2 * m))
                W[:, ::2] = V
                V = W[:, ::2]                                       # a strided view, read in place
            groups.append((V, [f"g{g}s{j}" for j in range(m)]))
        w = float(rng.choice([0.1, 0.2, 0.35, 0.5]))
        limit = float(rng.choice([1.5, 10.0, 1e3]))
        ref = _divergence_numpy(t, groups, limit, w)
        got = metrics.divergence(t, groups, limit, window=w)
        if ref is None:
            assert got is None, case
            continue
        flagged += 1
        assert got.signal == ref[0], case
        assert np.array_equal([got.factor, got.t, got.early, got.peak], ref[1:], equal_nan=True), case
    assert flagged > 50                                             # the draw exercises the verdicts, not only None
