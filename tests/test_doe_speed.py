"""The study layer's per-run fast paths (issue 15 follow-up) give the very numbers of the general code."""
from __future__ import annotations

import math

import numpy as np
import pytest

import cosim
from cosim import doe, metrics


def _run(ck, H, approx, t_end=0.05):
    system = cosim.models.two_mass_oscillator(ck=ck, dk=1e3)
    try:
        return cosim.simulate(system, t_end, H, approximation=approx, solver=cosim.Exact())
    except cosim.DivergenceError as exc:
        return exc.result


@pytest.mark.parametrize("time", ["mean", "max", "final"])
def test_eps_mono_fast_path_equals_error_to_bit_for_bit(time):
    """doe.eps_mono on the run's own grid (cached reference denominators) == Result.error_to's ε_mono exactly, for
    accurate, inaccurate and diverged runs, and again with the cache warm."""
    seen = 0
    for ck, H, approx in [(1e5, 1e-3, cosim.ZOH()), (1e5, 5e-3, cosim.Lagrange(k=2)), (1e7, 5e-3, cosim.Lagrange(k=1))]:
        res = _run(ck, H, approx)
        ref = cosim.simulate_monolithic(res.system, float(res.t[-1]), t_eval=res.t)
        for _ in range(2):
            fast = doe.eps_mono(res, ref, time=time)
            slow = float(res.error_to(ref, eps_mono_time=time)["eps_mono"])
            assert fast == slow or (math.isnan(fast) and math.isnan(slow))
            seen += 1
        assert "_doe_eps_den" in ref.__dict__
    assert seen == 6


def test_eps_mono_other_grid_falls_back_to_error_to():
    res = _run(1e5, 1e-3, cosim.ZOH())
    ref = cosim.simulate_monolithic(res.system, 0.05, t_eval=res.t[::2])      # every other point: interpolated
    assert doe.eps_mono(res, ref) == float(res.error_to(ref)["eps_mono"])
    assert "_doe_eps_den" not in ref.__dict__
    other = cosim.simulate_monolithic(cosim.models.two_mass_oscillator(ck=1e5, dk=1e3, coupling="force/displacement"),
                                      0.05, t_eval=res.t)
    if other.X.shape[1] != res.X.shape[1] or other.Y.shape[1] != res.Y.shape[1]:
        with pytest.raises(ValueError, match="ref"):
            doe.eps_mono(res, other)
    with pytest.raises(TypeError, match="ref"):
        doe.eps_mono(res, "not a result")


def _amplitudes_by_masks(t, V, w):
    """The definition: max |v| over the masks t <= t_0 + w span and t >= t_n - w span, non-finite -> inf."""
    span = t[-1] - t[0]
    early, late = t <= t[0] + w * span * (1 + 1e-12), t >= t[-1] - w * span * (1 + 1e-12)
    with np.errstate(invalid="ignore"):
        A = np.where(np.isfinite(V), np.abs(V), np.inf)
    return A[early].max(axis=0), A[late].max(axis=0)


def test_amplitudes_equal_the_masked_definition():
    rng = np.random.default_rng(3)
    for _ in range(300):
        n, m = int(rng.integers(2, 80)), int(rng.integers(0, 20))
        t = np.cumsum(rng.random(n) + 1e-3)
        V = rng.standard_normal((n, m)) * rng.choice([0.0, 1.0, 1e12], size=(n, m))
        for _ in range(int(rng.integers(0, 4))):
            if m:
                V[rng.integers(n), rng.integers(m)] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
        w = float(rng.choice([0.05, 0.2, 0.5]))
        got, want = metrics.amplitudes(t, V, w), _amplitudes_by_masks(t, V, w)
        assert got[0].tobytes() == want[0].tobytes() and got[1].tobytes() == want[1].tobytes()


def test_coupling_log_is_built_on_first_access():
    """res.coupling_log of a PreStep run is built lazily and is the same dict the coupling's _log gives."""
    if not hasattr(cosim, "PreStep"):
        pytest.skip("cosim.PreStep is not available")
    system = cosim.models.two_mass_oscillator(ck=1e5, dk=1e3, coupling="force/displacement")
    cpl = cosim.PreStep(variant="continuous", jacobians="exact")
    res = cosim.simulate(system, 0.02, 1e-3, solver=cosim.Euler(h=1e-5), coupling=cpl)
    assert "_coupling_log" not in res.__dict__
    log = res.coupling_log
    assert log is res.coupling_log and set(log["phase"]) <= {"SBC", "MOD", "MBC"} and len(log["phase"]) >= 20
    res.coupling_log = None
    assert res.coupling_log is None
    plain = cosim.simulate(system, 0.02, 1e-3, solver=cosim.Euler(h=1e-5))
    assert plain.coupling_log is None


# ---------------------------------------------------------------------------------------------------- worker-side build
def _build_rls(p):
    """A reduced genser2020 §12.3 RLS run: its coupling holds the identifier's C state and does not pickle."""
    rls = cosim.sysid.RLS(n_y=1, n_u=1, n_a=1, n_b=1, lam=p["lam"], P0=1e4)
    coupling = cosim.PreStep(variant="discrete", jacobians=rls, timeLearning=0.02, timeSwitchphase=0.002,
                             thresholdMbc2sbcCoupling=p["th"], thresholdMbcNoInputOpt=0.01)
    return dict(system=cosim.models.two_mass_oscillator(nonlinear=True, impulse=True), t_end=0.1, H=1e-3,
                solver=cosim.Euler(h=1e-4), coupling=coupling)


RLS_FACTORS = {"lam": [0.98, 1.0], "th": [0.5, 5.0]}
RLS_COLS = ["lam", "th", "eps_mono", "eps_mono_sat", "stable", "status", "message"]


@pytest.fixture(scope="module")
def rls_serial():
    if not hasattr(cosim, "PreStep"):
        pytest.skip("cosim.PreStep is not available")
    return doe.Study(_build_rls, RLS_FACTORS, responses=["eps_mono", "eps_mono_sat", "stable"],
                     reference=True).run()


def test_unpicklable_runs_on_processes(rls_serial):
    """A process pool builds the runs in its workers: a PreStep/RLS study (whose coupling does not pickle) runs and
    gives the serial table."""
    import pickle
    with pytest.raises(Exception):
        pickle.dumps(_build_rls({"lam": 1.0, "th": 5.0})["coupling"])
    df = doe.Study(_build_rls, RLS_FACTORS, responses=["eps_mono", "eps_mono_sat", "stable"],
                   reference=True).run(backend="processes", workers=2, chunksize=1)
    assert (df.status == "ok").all()
    import pandas as pd
    pd.testing.assert_frame_equal(df[RLS_COLS], rls_serial[RLS_COLS])


def test_dask_worker_processes_give_the_serial_table(rls_serial):
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None) as cl, \
            distributed.Client(cl) as client:
        df = doe.Study(_build_rls, RLS_FACTORS, responses=["eps_mono", "eps_mono_sat", "stable"],
                       reference=True).run(backend=client)
    import pandas as pd
    pd.testing.assert_frame_equal(df[RLS_COLS], rls_serial[RLS_COLS])
