"""Intermediate-value correction of the discrete pre-step's Step 1 (genser2020.md §4.1, eq. 2.58-2.60 with the [FIX]):
eps_cor = (1/ΔT) ∫ ε dt − (ε^{k-1} + ε^k)/2 over the last step, ε(t) = L y(t) + r − u(t), from the units' micro-step
outputs (traces)."""
import math

import numpy as np
import pytest

import cosim
from cosim.models import two_mass_oscillator

EULER = cosim.Euler(h=1e-5)


def _run(system, H, t_end, solver=EULER, **kw):
    return cosim.simulate(system, t_end=t_end, H=H, solver=solver, coupling=cosim.PreStep(variant="discrete", **kw),
                          last_step="shorten", divergence_growth=math.inf, update="simplified")


def test_off_is_the_default_bit_for_bit():
    system = two_mass_oscillator(ck=2e5, dk=200)
    a = _run(system, 1e-3, 0.05)
    b = _run(system, 1e-3, 0.05, intermediate_correction=False)
    assert np.array_equal(a.t, b.t)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.Y, b.Y) and np.array_equal(a.U, b.U)
    assert np.array_equal(a.coupling_log["delta"], b.coupling_log["delta"])
    assert np.array_equal(a.coupling_log["u"], b.coupling_log["u"])
    assert "eps_cor" not in b.coupling_log


def _two_lti():
    # bidirectional, D = 0 (the micro-step outputs are C x_j), first-order units
    A1, B1, C1 = np.array([[-3.0]]), np.array([[2.0]]), np.array([[1.0]])
    A2, B2, C2 = np.array([[-1.0, 4.0], [-4.0, -0.5]]), np.array([[0.0], [1.5]]), np.array([[1.0, 0.5]])
    s1 = cosim.LTI(A1, B1, C1, [[0.0]], x0=[1.0], name="P")
    s2 = cosim.LTI(A2, B2, C2, [[0.0]], x0=[0.2, -0.3], name="Q")
    system = cosim.CoupledSystem([s1, s2], [cosim.connect("P.y[0]", "Q.u[0]", gain=-0.7),
                                           cosim.connect("Q.y[0]", "P.u[0]")])
    return system, (A1, B1, C1), (A2, B2, C2)


def test_eps_cor_equals_numpy_from_micro_step_outputs():
    """One run with Euler(h) units (ΔT/h = 100 micro steps): re-integrate each unit alone in NumPy over every step from
    its recorded state with the held input of the log, take the trapezoidal mean of ε(t) = L y(t) − u over the micro
    points and compare (2.58) with the logged eps_cor."""
    system, (A1, B1, C1), (A2, B2, C2) = _two_lti()
    H, h, nsteps = 1e-2, 1e-4, 8
    res = _run(system, H, nsteps * H, solver=cosim.Euler(h=h), intermediate_correction=True)
    log = res.coupling_log
    assert log["traced_steps"] == nsteps and log["macro_point_steps"] == 0
    u = log["u"]                              # row k: input held over [T^k, T^{k+1}] (u^{k+1}); cols P.u, Q.u
    x1, x2 = res["P.x[0]"], np.stack([res["Q.x[0]"], res["Q.x[1]"]], axis=1)
    yP, yQ = res["P.y[0]"], res["Q.y[0]"]
    Lmap = lambda yp, yq: np.array([yq, -0.7 * yp])       # u = L y: P.u = Q.y, Q.u = -0.7 P.y
    q = round(H / h)
    checked = 0
    for k in range(1, nsteps):
        uk = u[k - 1]                          # the input over [T^{k-1}, T^k]
        uprev = u[k - 2] if k >= 2 else Lmap(yP[0], yQ[0])   # u^{k-1}; u^0 = L y^0
        # micro-step outputs of each unit (explicit Euler, held input)
        a, b = np.array([x1[k - 1]]), x2[k - 1].copy()
        tp, tq = [C1 @ a], [C2 @ b]
        for _ in range(q):
            a = a + h * (A1 @ a + B1 @ uk[:1])
            b = b + h * (A2 @ b + B2 @ uk[1:])
            tp.append(C1 @ a)
            tq.append(C2 @ b)
        tp, tq = np.concatenate(tp), np.concatenate(tq)
        assert tp[-1] == pytest.approx(yP[k], rel=1e-12) and tq[-1] == pytest.approx(yQ[k], rel=1e-12)
        eps_t = np.stack([tq - uk[0], -0.7 * tp - uk[1]])        # ε(t) on the micro points
        mean = 0.5 * (eps_t[:, 1:] + eps_t[:, :-1]).sum(axis=1) / q   # (1/ΔT) ∫ ε dt, trapezoidal, δt = ΔT/q
        e_prev = Lmap(yP[k - 1], yQ[k - 1]) - uprev
        e_k = Lmap(yP[k], yQ[k]) - uk
        expected = mean - 0.5 * (e_prev + e_k)
        assert np.max(np.abs(expected)) > 1e-6                  # a non-trivial correction
        assert log["eps_cor"][k] == pytest.approx(expected, rel=1e-9, abs=1e-12)
        checked += 1
    assert checked == nsteps - 1
    assert np.all(log["eps_cor"][0] == 0.0)                     # the first step is signal-based


def test_correction_changes_step1_only_when_on():
    system, *_ = _two_lti()
    off = _run(system, 1e-2, 0.08, solver=cosim.Euler(h=1e-4))
    on = _run(system, 1e-2, 0.08, solver=cosim.Euler(h=1e-4), intermediate_correction=True)
    # the first step is signal-based (same input); from k = 1 on, Step 1 sees the corrected eps^{k-1}, eps^k
    assert np.array_equal(off.coupling_log["u"][0], on.coupling_log["u"][0])
    assert not np.array_equal(off.coupling_log["delta"][1:], on.coupling_log["delta"][1:])


def test_dual_mass_oscillator_stays_stable_with_the_correction():
    """genser §10.1 settings (ck = 2e5, dk = 200, Euler 1e-5, ΔT = 1 ms, discrete exact IJs, t_end = 0.2 s).
    Measured ε_mono: 0.0590 without, 0.0178 with the correction (both stable); at ΔT = 2 ms both are unstable."""
    system = two_mass_oscillator(ck=2e5, dk=200)
    out = {}
    for ic in (False, True):
        res = _run(system, 1e-3, 0.2, intermediate_correction=ic)
        ref = cosim.simulate_monolithic(system, t_end=0.2, t_eval=res.t)
        out[ic] = (cosim.metrics.eps_mono(res, ref), cosim.metrics.is_stable(res))
    assert out[False][1] and out[True][1]
    assert out[False][0] == pytest.approx(0.0590, rel=0.02)
    assert out[True][0] == pytest.approx(0.0178, rel=0.02)
    with_res = _run(system, 1e-3, 0.05, intermediate_correction=True)
    assert with_res.coupling_log["traced_steps"] == 50 and with_res.coupling_log["macro_point_steps"] == 0


def test_bad_arguments_name_the_argument():
    with pytest.raises(ValueError, match="intermediate_correction"):
        cosim.PreStep(variant="continuous", intermediate_correction=True)
    with pytest.raises(ValueError, match="intermediate_correction"):
        cosim.PreStep(variant="modified", intermediate_correction=True)     # exact IJs: the continuous modified one
    with pytest.raises(TypeError, match="intermediate_correction"):
        cosim.PreStep(variant="discrete", intermediate_correction=1)


def test_two_point_trace_gives_the_input_jump():
    """Exact() units trace only T and T+H: the trapezoidal mean of ε is then L (y^{k-1} + y^k)/2 + r − u^k, and
    with ε^{k-1} = L y^{k-1} + r − u^{k-1} (the input of the step before, HOLD) (2.58) reduces to
    ε_cor = (u^{k-1} − u^k)/2: the correction is not zero at the macro points when the held input jumps.
    (Units without feedthrough: with D != 0 the trace's first point is the output under the new input.)"""
    system, *_ = _two_lti()
    res = _run(system, 1e-3, 0.02, solver=cosim.Exact(), intermediate_correction=True)
    log = res.coupling_log
    assert log["traced_steps"] == 20
    L, r = system.connection_matrix()
    u = np.vstack([L @ res.Y[0] + r, log["u"]])          # u^0, u^1, ... (u^{k+1} held over [T^k, T^{k+1}])
    for k in range(1, 20):
        assert log["eps_cor"][k] == pytest.approx(0.5 * (u[k - 1] - u[k]), rel=1e-9, abs=1e-9 * np.abs(u).max())
