"""Kraft's acc and accRel predictors (kraft2021 App. C, spec §15): convergence orders of Fig. C.2 (T11) and the
stability statements of Figs. C.3-C.6 (Jacobi and Gauss-Seidel) on the symmetric two-mass oscillator of Fig. C.1
(m = c = 1). The Gauss-Seidel rule (a unit stepped later integrates the interpolated accelerations back from the
exchanged states at T_{N+1}) is our reading; the thesis shows only its results.

The convergence rows use the damped symmetric model (d = 0.5 in all three spring/dampers): the thesis's accRel
rows need a coupling force that reads the velocities (with d = 0 the κ_a = 0, κ_λ = 1, ω = 1/6 row converges with
order 3, not 2). Global errors come from the engine with Kraft's start-up (Listing 5.1), local errors from one step
of the acc/accRel recurrence (cosim.stability_acc) from exact history; the recurrence is checked against the engine
here too. The relaxation formula of accRel is our reconstruction (the thesis does not print it)."""
import functools

import numpy as np
import pytest
import scipy.linalg

import cosim
from cosim import _core, analysis as an
from cosim.approximations import IntegratedAcceleration, Lagrange, RelaxedAcceleration
from cosim.models.two_mass import two_mass_oscillator
from cosim import stability_acc


def _symmetric(c=1.0, d=0.5, coupling="force/force"):
    kw = dict(feedthrough=False) if coupling == "force/displacement" else {}
    return two_mass_oscillator(ck=c, dk=d, coupling=coupling, m1=1, m2=1, c1=c, c2=c, d1=d, d2=d, **kw)


def _global_order(system, approx):
    Hs = 0.1 * 2.0 ** -np.arange(5)
    errors = []
    for H in Hs:
        res = cosim.simulate(system, 2.0, H, approximation=approx, solver=cosim.Exact(), startup="kraft")
        ref = cosim.simulate_monolithic(system, 2.0, t_eval=res.t)
        errors.append(np.max(np.abs(res.X[-1] - ref.X[-1])))
    return np.polyfit(np.log(Hs), np.log(errors), 1)[0]


def _local_orders(system, approx, t=1.0, scheme=None):
    """Orders of the local errors of positions and velocities: one step of the recurrence from exact history
    (cosim.analysis.local_error)."""
    order = an.local_error(system, 0.02 * 2.0 ** -np.arange(5), scheme, approx, t=t).order
    return min(order["S1.x1"], order["S2.x2"]), min(order["S1.v1"], order["S2.v2"])


ACC_REL_ROWS = [  # kraft2021 Fig. C.2 (spec §15.3): κ_a, κ_λ, ω, loc x, loc v, global
    (0, 0, 1 / 6, 3, 2, 1), (0, 0, 1 / 2, 3, 3, 2), (0, 1, 1 / 6, 4, 3, 2), (0, 1, 1 / 2, 4, 3, 2),
    (1, 0, 1 / 6, 3, 2, 1), (1, 0, 1 / 2, 3, 3, 2), (1, 1, 1 / 6, 4, 4, 3), (1, 1, 1 / 2, 4, 3, 2)]


@pytest.mark.parametrize("ka,kl,omega,loc_x,loc_v,glob", ACC_REL_ROWS)
def test_kraft_T11_accRel_rows(ka, kl, omega, loc_x, loc_v, glob):
    """kraft2021 T11 (App. C, Fig. C.2), accRel rows, force/force Jacobi, symmetric damped model, ±0.3.
    Measured (loc x, loc v): (3.00, 2.00), (3.00, 3.00), (4.00, 3.00), (4.00, 3.00), (2.99, 1.98), (2.98, 3.02),
    (4.03, 4.00), (3.99, 2.99); global slopes with update 1.04, 2.00, 1.98, 2.01, 0.99, 2.06, 3.04, 1.98, without
    1.05, 1.98, 1.95, 1.99, 1.00, 1.99, 3.01, 1.95."""
    s = _symmetric()
    approx = RelaxedAcceleration(ka, kl, omega)
    x, v = _local_orders(s, approx)
    assert abs(x - loc_x) <= 0.3 and abs(v - loc_v) <= 0.3, (x, v)
    assert abs(_global_order(s, approx) - glob) <= 0.3
    assert abs(_global_order(s, RelaxedAcceleration(ka, kl, omega, update=False)) - glob) <= 0.3


@pytest.mark.xfail(strict=True, reason="measured (loc x, loc v, global) = (4, 3, 2) for κ_a = 0 and (5, 4, 3) for "
                   "κ_a = 1 on the damped symmetric model (with d = 0: global 3 and 4): one order above the thesis's "
                   "(3, 2, 1) and (4, 3, 2); the integrated polynomials from the exchanged states at T_N leave a "
                   "velocity error O(H^(κ_a+2)) in the coupling force. The thesis's rows are those of the end-value "
                   "reading (test_kraft_T11_acc_rows_end_value_reading: only the acc value at T_{N+1} is used, as "
                   "the end node of a degree-κ_a polynomial through u_N), which contradicts its text ('these "
                   "polynomials are directly used as approximation polynomials') and Fig. C.3 (stable share of FF-JAC "
                   "acc κ_a = 0 with update 0.15 under that reading, below the '++' rows' 0.22, where the figure has "
                   "'++++'; the integrated polynomials give 0.40). Lagged accelerations (a_{N-1}, ...) or a start from "
                   "the previous polynomial's end values change the velocity by O(H^(κ_a+2)) only, so no "
                   "spec-consistent reading we found gives the thesis's orders")
@pytest.mark.parametrize("ka,loc_x,loc_v,glob", [(0, 3, 2, 1), (1, 4, 3, 2)])
def test_kraft_T11_acc_rows(ka, loc_x, loc_v, glob):
    """kraft2021 T11 (App. C, Fig. C.2), acc rows (κ_a = 0: 3, 2, 1; κ_a = 1: 4, 3, 2), ±0.3."""
    s = _symmetric()
    approx = IntegratedAcceleration(ka)
    x, v = _local_orders(s, approx)
    assert (round(x), round(v), round(_global_order(s, approx))) == (loc_x, loc_v, glob)


@pytest.mark.parametrize("ka,loc_x,loc_v,glob", [(0, 3, 2, 1), (1, 4, 3, 2)])
def test_kraft_T11_acc_rows_end_value_reading(ka, loc_x, loc_v, glob):
    """kraft2021 T11, acc rows, ±0.3, under the end-value reading: the acc prediction at T_{N+1} as the end node of
    the degree-κ_a polynomial through u_N (RelaxedAcceleration(κ_a, κ_λ = κ_a, ω = 0)), with and without update.
    Measured (loc x, loc v, global): (3.00, 2.00, 1.03) and (4.01, 3.02, 2.13), without update global 1.02, 2.12.
    Evidence for test_kraft_T11_acc_rows, not the definition of acc (see its xfail reason)."""
    s = _symmetric()
    approx = RelaxedAcceleration(ka, ka, 0.0)
    x, v = _local_orders(s, approx)
    assert abs(x - loc_x) <= 0.3 and abs(v - loc_v) <= 0.3, (x, v)
    assert abs(_global_order(s, approx) - glob) <= 0.3
    assert abs(_global_order(s, RelaxedAcceleration(ka, ka, 0.0, update=False)) - glob) <= 0.3


def _growth(X, n):
    """Growth per step of the dominant mode (real or a complex pair) of X_N: the roots of the order-2 recurrence
    X_{N+1} = p X_N + q X_{N-1} fitted over the second half of the run."""
    rows, rhs = [], []
    for N in range(n // 2, n):
        scale = np.linalg.norm(X[N])
        rows.append(np.c_[X[N], X[N - 1]] / scale)
        rhs.append(X[N + 1] / scale)
    p, q = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
    return max(abs(np.roots([1.0, -p, -q])))


@pytest.mark.filterwarnings("ignore::cosim.CouplingInstabilityWarning")
@pytest.mark.parametrize("scheme,order,coupling", [("jacobi", None, "force/force"),
                                                   ("gauss-seidel", None, "force/force"),
                                                   ("gauss-seidel", ["S2", "S1"], "force/displacement")])
@pytest.mark.parametrize("approx", [IntegratedAcceleration(0), IntegratedAcceleration(1, update=False),
                                    RelaxedAcceleration(1, 1), RelaxedAcceleration(0, 0, update=False)],
                         ids=repr)
def test_recurrence_is_the_engine(approx, scheme, order, coupling):
    """ρ of the acc/accRel recurrence is the growth per step of a long Exact run (unstable H, so the dominant mode
    shows after a few steps), and with the update one step of Ω from recorded states is the engine's next state
    (Jacobi and Gauss-Seidel in either order)."""
    s = _symmetric(coupling=coupling)
    H, n = 2.5, 60
    rho = an.spectral_radius(s, H, scheme, approximation=approx, order=order)
    assert rho > 1.15
    res = cosim.simulate(s, n * H, H, approximation=approx, solver=cosim.Exact(), divergence_bound=np.inf,
                         divergence_growth=np.inf, scheme=scheme, order=order)
    assert _growth(res.X, n) == pytest.approx(rho, rel=1e-6)
    assert res.spectral_radius() == rho                                # the run's verdict reads the same ρ
    if approx.update:
        A, _, _ = s.monolithic_lti()                                  # consistent rates: ẏ = C ẋ (no feed-through)
        C = scipy.linalg.block_diag(*[sub.C for sub in s.subsystems])
        Om = an.amplification_matrix(s, H, scheme, approximation=approx, order=order)
        P = (Om.shape[0] - 4) // (2 * C.shape[0])
        for N in (10, 20):
            X = [res.X[N - q] for q in range(P)]
            Z = np.concatenate([X[0]] + [C @ x for x in X] + [C @ A @ x for x in X])
            assert np.allclose(Om[:4] @ Z, res.X[N + 1], rtol=1e-12, atol=1e-12 * np.abs(res.X[N + 1]).max())


ROWS = [IntegratedAcceleration(0), IntegratedAcceleration(1)] + [
    RelaxedAcceleration(ka, kl, w) for ka in (0, 1) for kl in (0, 1) for w in (1 / 6, 1 / 2)]
FF, FD, JAC, GS = "force/force", "force/displacement", "jacobi", "gauss-seidel"
# kraft2021 Figs. C.3 (FF-JAC), C.4 (FF-GS), C.5 (FD-JAC), C.6 (FD-GS), column d = 0, (with update, without), in the
# order of ROWS
UNDAMPED = {(FF, JAC): ["++", "++", "++", "++", "++", "--", "++", "++", "--", "--"],
            (FF, GS): ["++", "++", "++", "++", "--", "--", "++", "++", "--", "--"],
            (FD, JAC): ["--", "--", "--", "-+", "--", "--", "--", "++", "--", "--"],
            (FD, GS): ["++", "--", "--", "++", "--", "--", "--", "++", "--", "--"]}
# entries that do not reproduce (test_kraft_appC_undamped_entries_missed)
UNDAMPED_MISSED = {(FF, GS): [4], (FD, GS): [4]}
SCHEMES = [(FF, JAC), (FF, GS), (FD, JAC), (FD, GS)]


def _without_update(a):
    if isinstance(a, RelaxedAcceleration):
        return RelaxedAcceleration(a.k, a.k_lambda, a.omega, update=False)
    return IntegratedAcceleration(a.k, update=False)


@functools.cache
def _undamped_marks(coupling, scheme):
    """Per row of ROWS "+"/"−" with and without update: stable (ρ ≤ 1 to rounding) for some H √(c/m) in
    [0.05, 0.5] on the undamped model, or not."""
    s = _symmetric(d=0.0, coupling=coupling)
    Hs = np.geomspace(0.05, 0.5, 20)
    return ["".join("+" if np.any(an.spectral_radius(s, Hs, scheme, approximation=b) <= 1 + 1e-13) else "-"
                    for b in (a, _without_update(a))) for a in ROWS]


@pytest.mark.parametrize("coupling,scheme", SCHEMES)
def test_kraft_appC_undamped_column(coupling, scheme):
    """kraft2021 App. C, Figs. C.3-C.6, d = 0: "+" (stable for some H: ρ <= 1 to rounding) or "−" (ρ > 1 for every
    H), with and without the acceleration update, on H √(c/m) in [0.05, 0.5]; all 20 entries of each figure but
    the one of UNDAMPED_MISSED under Gauss-Seidel (stepping order S1, S2). Force/displacement is the decomposition
    whose S2 reports its states and the master forms the force (feedthrough=False). Measured: the "−" entries have
    ρ − 1 >= 2e-8 there under Jacobi, >= 1.6e-11 under Gauss-Seidel (FD acc κ_a = 1: ρ − 1 grows as H^6, 2.7e-8 at
    H = 0.17). Beyond H √(c/m) = 0.5 several "−" rows have stable windows (e.g. FF-JAC κ_a = κ_λ = 1, ω = 1/6 at
    H √(c/m) = 0.7-1.0): the thesis's plots presumably end before."""
    got, want = _undamped_marks(coupling, scheme), UNDAMPED[coupling, scheme]
    keep = [i for i in range(len(ROWS)) if i not in UNDAMPED_MISSED.get((coupling, scheme), [])]
    assert [got[i] for i in keep] == [want[i] for i in keep], got


@pytest.mark.xfail(strict=True, reason="accRel κ_a = 0, κ_λ = 1, ω = 1/6 without update is stable at d = 0 under "
                   "Gauss-Seidel (min ρ − 1 = −1.1e-3 FF, −6.1e-5 FD on H in [0.05, 0.5]; with update +6.5e-8 and "
                   "+1.3e-7, '−' as the thesis): measured '−+' where Figs. C.4/C.6 show '−−'")
@pytest.mark.parametrize("coupling", [FF, FD])
def test_kraft_appC_undamped_entries_missed(coupling):
    """kraft2021 Figs. C.4/C.6, d = 0: the entries our Gauss-Seidel reading does not reproduce."""
    got, want = _undamped_marks(coupling, GS), UNDAMPED[coupling, GS]
    assert [got[i] for i in UNDAMPED_MISSED[coupling, GS]] == [want[i] for i in UNDAMPED_MISSED[coupling, GS]]


@functools.cache
def _stable_shares(coupling, scheme, update, n=10):
    """Per row of ROWS the stable share of the quarter plane of subsystem 1's eigenvalue λH in (−1, 0) x (0, 1)
    (H = 1, m = 1, c = |λ|², d = −2 Re λ), n x n cell centres."""
    g = (np.arange(n) + 0.5) / n
    return np.array([np.mean([an.spectral_radius(_symmetric(c=re**2 + im**2, d=2 * re, coupling=coupling), 1.0,
                                                 scheme, approximation=a if update else _without_update(a)) <= 1
                              for re in g for im in g]) for a in ROWS])


# rows where the update does not enlarge the region (test_kraft_appC_update_enlarges_missed)
UPDATE_MISSED = {(FF, GS): [3], (FD, GS): [0, 2]}


@pytest.mark.parametrize("coupling,scheme", SCHEMES)
def test_kraft_appC_update_enlarges_the_stable_region(coupling, scheme):
    """kraft2021 App. C: "the stability region of the methods based on extrapolated accelerations is significantly
    larger if the update is accomplished", every (κ_a, κ_λ, ω) of Figs. C.3-C.6 (d > 0 columns u > n) but the
    rows of UPDATE_MISSED under Gauss-Seidel. Measured shares with / without update in the order of ROWS:
    FF-JAC 0.40/0.11, 0.40/0.05, 0.22/0.11, 0.37/0.19, 0.44/0.13, 0.66/0.17, 0.22/0.05, 0.37/0.11, 0.44/0.06,
    0.67/0.12; FF-GS 0.44/0.32, 0.54/0.14, 0.50/0.37, 0.76/0.80, 0.78/0.40, 0.99/0.25, 0.47/0.20, 0.63/0.38,
    0.78/0.19, 0.93/0.18; FD-JAC 0.47/0.16, 0.47/0.06, 0.23/0.16, 0.47/0.27, 0.49/0.18, 0.77/0.23, 0.24/0.08,
    0.47/0.14, 0.49/0.09, 0.77/0.16; FD-GS 0.57/0.66, 0.65/0.18, 0.45/0.50, 0.77/0.51, 0.78/0.37, 1.00/0.32,
    0.45/0.21, 0.72/0.33, 0.78/0.20, 1.00/0.25."""
    up, down = _stable_shares(coupling, scheme, True), _stable_shares(coupling, scheme, False)
    keep = [i for i in range(len(ROWS)) if i not in UPDATE_MISSED.get((coupling, scheme), [])]
    assert np.all(up[keep] > down[keep]), (up, down)


@pytest.mark.xfail(strict=True, reason="Gauss-Seidel stable shares with / without update: FF accRel (0, 0, 1/2) 0.76 "
                   "/ 0.80 (Fig. C.4: '+++++' / '+++++'), FD acc κ_a = 0 0.57 / 0.66 and accRel (0, 0, 1/6) 0.45 / "
                   "0.50 (Fig. C.6: '+++++' / '+++', '++++' / '+++')")
@pytest.mark.parametrize("coupling", [FF, FD])
def test_kraft_appC_update_enlarges_missed(coupling):
    """kraft2021 Figs. C.4/C.6: the rows whose update does not enlarge the region under our Gauss-Seidel reading."""
    up, down = _stable_shares(coupling, GS, True), _stable_shares(coupling, GS, False)
    rows = UPDATE_MISSED[coupling, GS]
    assert np.all(up[rows] > down[rows]), (up[rows], down[rows])


@pytest.mark.parametrize("coupling", [FF, FD])
def test_kraft_appC_gauss_seidel_more_stable_than_jacobi(coupling):
    """kraft2021 App. C: "Gauss–Seidel generally more stable than Jacobi": every row of Figs. C.4/C.6 against
    C.3/C.5, with and without update, has the larger stable share (measured in the previous test's docstring)."""
    for update in (True, False):
        assert np.all(_stable_shares(coupling, GS, update) > _stable_shares(coupling, JAC, update)), update


def _classes(shares, marks):
    """Do the shares order as the thesis's classes ("+" counts per row): every row of a lower class below every row
    of a higher one."""
    return all(shares[i] < shares[j] for i in range(len(marks)) for j in range(len(marks)) if marks[i] < marks[j])


# kraft2021 Figs. C.3-C.6, d > 0: number of "+" per row of ROWS, (with update, without)
CLASSES = {(FF, JAC): ([4, 4, 2, 4, 4, 5, 2, 4, 4, 5], [1, 1, 1, 2, 2, 2, 1, 1, 1, 1]),
           (FF, GS): ([5, 5, 5, 5, 5, 5, 4, 5, 5, 5], [3, 1, 3, 5, 3, 2, 2, 3, 2, 2]),
           (FD, JAC): ([5, 5, 2, 4, 5, 5, 2, 4, 5, 5], [1, 1, 1, 2, 1, 2, 1, 1, 1, 1]),
           (FD, GS): ([5, 5, 4, 5, 5, 5, 4, 5, 5, 5], [3, 2, 3, 4, 3, 3, 2, 3, 2, 2])}


@pytest.mark.parametrize("coupling,scheme,update", [(FF, JAC, True), (FF, JAC, False), (FF, GS, False),
                                                    (FD, JAC, False), (FD, GS, True)])
def test_kraft_appC_classes(coupling, scheme, update):
    """kraft2021 Figs. C.3-C.6, d > 0: the stable shares (previous tests) order as the figures' "+" classes: every
    row of a class with fewer "+" below every row of a class with more. Reproduced: FF-JAC u ("++" κ_λ = 0,
    ω = 1/6 0.22 < "++++" 0.37-0.44 < "+++++" κ_λ = 1, ω = 1/2 0.66), FF-JAC n ("+" at most 0.12 < "++" at least
    0.13), FF-GS n ("+" acc κ_a = 1 0.14 < "++" at most 0.25 < "+++" at least 0.32 < "+++++" accRel (0, 0, 1/2)
    0.80), FD-JAC n ("+" at most 0.18 < "++" at least 0.23), FD-GS u ("++++" κ_λ = 0, ω = 1/6 0.45 < "+++++" at
    least 0.57)."""
    marks = CLASSES[coupling, scheme][0 if update else 1]
    assert _classes(_stable_shares(coupling, scheme, update), marks)


@pytest.mark.xfail(strict=True, reason="measured FF-GS u: acc κ_a = 0 ('+++++') 0.44 below the only '++++' row, "
                   "accRel (1, 0, 1/6), 0.47; FD-JAC u: acc ('+++++') 0.47 ties with the '++++' rows (0.47); FD-GS n: "
                   "acc κ_a = 0 ('+++') 0.66 above the only '++++' row, accRel (0, 0, 1/2), 0.51 ('++' < '+++' "
                   "holds: at most 0.25 < at least 0.32)")
@pytest.mark.parametrize("coupling,scheme,update", [(FF, GS, True), (FD, JAC, True), (FD, GS, False)])
def test_kraft_appC_classes_missed(coupling, scheme, update):
    """kraft2021 Figs. C.4 u, C.5 u and C.6 n: the class orders that do not reproduce."""
    assert _classes(_stable_shares(coupling, scheme, update), CLASSES[coupling, scheme][0 if update else 1])


@pytest.mark.parametrize("scheme", [JAC, GS])
def test_local_error_and_stability_map_take_acc(scheme):
    """cosim.analysis.local_error and stability_map analyse acc/accRel (the recurrence with the rates): with constant
    offsets r in the coupling (the affine part of the step) the local orders stay those of Fig. C.2 (accRel
    κ_a = κ_λ = 1, ω = 1/6: 4, 4; κ_a = 0, κ_λ = 0, ω = 1/2: 3, 3), and the map is ρ point by point."""
    base = _symmetric()
    s = cosim.CoupledSystem(base.subsystems, base.connections + [cosim.connect(0.3, "S1.lam"),
                                                                 cosim.connect(-0.2, "S2.lam")])
    assert np.any(s.connection_matrix()[1])
    for approx, want in ((RelaxedAcceleration(1, 1), (4, 4)), (RelaxedAcceleration(0, 0), (3, 3))):
        x, v = _local_orders(s, approx, scheme=scheme)
        assert abs(x - want[0]) <= 0.3 and abs(v - want[1]) <= 0.3, (approx, x, v)
    approx, Hs, cks = RelaxedAcceleration(1, 1, update=False), [0.5, 1.0, 1.5], [0.5, 2.0]
    m = an.stability_map(lambda ck: _symmetric(c=ck), {"ck": cks}, Hs, scheme, approx, order=None)
    assert m.rho.shape == (2, 3) and m.scheme == scheme
    for i, ck in enumerate(cks):
        assert np.array_equal(m.rho[i], an.spectral_radius(_symmetric(c=ck), Hs, scheme, approx))


def test_bad_arguments():
    s = _symmetric()
    with pytest.raises(ValueError, match="k"):
        IntegratedAcceleration(6)
    with pytest.raises(TypeError, match="update"):
        IntegratedAcceleration(0, update="yes")
    with pytest.raises(ValueError, match="omega"):
        RelaxedAcceleration(0, 0, omega=1.5)
    with pytest.raises(TypeError, match="omega"):
        RelaxedAcceleration(0, 0, omega="0.5")
    with pytest.raises(ValueError, match="k_lambda"):
        RelaxedAcceleration(0, 8)
    with pytest.raises(TypeError, match="pairs"):
        IntegratedAcceleration(0, pairs=[("S1.x1", "S1.v1")])
    with pytest.raises(ValueError, match="pairs"):
        IntegratedAcceleration(0, pairs={"S1.x1": "S1.v1", "S1.v1": "S2.v2"})
    with pytest.raises(ValueError, match="unknown output"):
        cosim.simulate(s, 0.1, 0.01, approximation=IntegratedAcceleration(0, pairs={"S1.x9": "S1.v1"}))
    with pytest.raises(ValueError, match="different subsystems"):
        cosim.simulate(s, 0.1, 0.01, scheme="gauss-seidel",
                       approximation=IntegratedAcceleration(0, pairs={"S1.x1": "S2.v2"}))
    with pytest.raises(ValueError, match="order"):
        an.spectral_radius(s, 0.1, "jacobi", IntegratedAcceleration(0), order=["S2", "S1"])
    with pytest.raises(ValueError, match="order"):
        an.spectral_radius(s, 0.1, "gauss-seidel", IntegratedAcceleration(0), order=["S2"])
    with pytest.raises(ValueError, match="update"):
        an.spectral_radius(s, 0.1, "gauss-seidel", IntegratedAcceleration(0), update="explicit")
    with pytest.raises(ValueError, match="feed-through"):
        an.spectral_radius(two_mass_oscillator(), 1e-3,
                           approximation=IntegratedAcceleration(0))
    with pytest.raises(ValueError, match="feed-through"):
        an.local_error(two_mass_oscillator(), [1e-3], approximation=IntegratedAcceleration(0))
    with pytest.raises(ValueError, match="feed-through"):
        an.two_mass_stability_map([1e5], [1e3], [1e-3], approximation=IntegratedAcceleration(0))
    with pytest.raises(ValueError, match="ydot_hist"):
        IntegratedAcceleration(1).evaluate([0.0, 0.1], [1.0, 2.0], 0.15)
    with pytest.raises(ValueError, match="integral_of"):
        _core.acc_coefficients(IntegratedAcceleration(0).kind, 0, 0, 0.0, np.zeros(1), 0.0, 0.1,
                               np.zeros((1, 2, 16)), np.array([1, 0]))


def test_explicit_pairs_equal_the_detected_ones():
    """The pairs of the LTI halves found from their matrices are (x1, v1), (x2, v2); naming them gives the same run,
    and a run without pairs (every output integrates its own derivative) differs."""
    s = _symmetric()
    named = {"S1.x1": "S1.v1", "S2.x2": "S2.v2"}
    runs = [cosim.simulate(s, 1.0, 0.05, approximation=RelaxedAcceleration(1, 1, pairs=p), solver=cosim.Exact()).X
            for p in (None, named, {})]
    assert np.array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], runs[2], rtol=1e-9, atol=0)
