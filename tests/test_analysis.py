"""cosim.analysis: the companion matrix Ω is the engine (busch2016 eq. 21-24), kraft2021 T14, bad input."""
import numpy as np
import pytest

import cosim
from cosim import analysis as an
from cosim.approximations import ZOH, ExtrapolatedInterpolation, Hermite, Lagrange
from cosim.models.two_mass import two_mass_oscillator
from cosim.system import LTI, CoupledSystem, ODE, connect

simulate = getattr(cosim, "simulate", None)
Exact = getattr(cosim, "Exact", None)
if simulate is None:  # the engine lives in cosim.simulate / cosim.solvers on main
    try:
        from cosim.simulate import simulate
        from cosim.solvers import Exact
    except ImportError:  # pragma: no cover
        simulate = Exact = None
needs_engine = pytest.mark.skipif(simulate is None, reason="engine (cosim.simulate) not available")

APPROX = [ZOH(), Lagrange(1), Lagrange(2), Lagrange(3), ExtrapolatedInterpolation(0, 0),
          ExtrapolatedInterpolation(1, 1), ExtrapolatedInterpolation(2, 0), ExtrapolatedInterpolation(3, 1)]


def random_system(rng, nsub=2, feedthrough=True):
    """Random stable LTI subsystems of random sizes, every output feeding some input of another subsystem."""
    subs = []
    for i in range(nsub):
        nx, nu, ny = rng.integers(1, 5), rng.integers(1, 4), rng.integers(1, 4)
        M = rng.normal(size=(nx, nx))
        A = -(M @ M.T) / nx - 0.3 * np.eye(nx) + (M - M.T)
        D = 0.3 * rng.normal(size=(ny, nu)) if (feedthrough and i == nsub - 1) else np.zeros((ny, nu))
        subs.append(LTI(A, rng.normal(size=(nx, nu)), rng.normal(size=(ny, nx)), D,
                        x0=rng.normal(size=nx), name=f"S{i + 1}"))
    conns = []
    for i, s in enumerate(subs):
        for a in range(s.nu):  # every input from one or two outputs of the other subsystems (+ an offset)
            others = [j for j in range(nsub) if j != i]
            for _ in range(rng.integers(1, 3)):
                j = others[rng.integers(len(others))]
                conns.append(connect(f"S{j + 1}.y[{rng.integers(subs[j].ny)}]", f"S{i + 1}.u[{a}]",
                                     0.5 * rng.normal()))
            if rng.random() < 0.3:
                conns.append(connect(0.2, f"S{i + 1}.u[{a}]"))
    return CoupledSystem(subs, conns)


def one_step_check(system, H, scheme, approx, order=None, update="consistent"):
    """Ω X_N + g from the engine's own history at T_N equals the engine's macro step to T_{N+1}."""
    rec = an.recurrence(system, H, scheme, approx, order=order, update=update)
    nsteps = rec.depth + 6
    res = simulate(system, t_end=nsteps * H, H=H, scheme=scheme, approximation=approx, solver=Exact(), order=order,
                   update=update, divergence_bound=np.inf)
    worst, checked = 0.0, 0
    for N in range(rec.depth + 2, len(res.t) - 1):
        X = rec.history(res.X[N], [res.Y[N - s] for s in range(rec.depth)])
        pred = rec.step(X)[: rec.nx + rec.ny]
        true = np.concatenate([res.X[N + 1], res.Y[N + 1]])
        worst = max(worst, np.max(np.abs(pred - true)) / max(np.max(np.abs(true)), 1e-300))
        checked += 1
    assert checked >= 3
    return worst


@needs_engine
@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("scheme", ["jacobi", "gauss-seidel"])
def test_matrix_is_engine_random_pairs(seed, scheme):
    rng = np.random.default_rng(seed)
    system = random_system(rng, 2)
    for approx in APPROX:
        for update in ("consistent", "simplified"):
            orders = [None, ["S2", "S1"]] if scheme == "gauss-seidel" else [None]
            for order in orders:
                err = one_step_check(system, 0.05, scheme, approx, order, update)
                assert err < 1e-10, (approx, update, order, err)


@needs_engine
@pytest.mark.parametrize("scheme,order", [("jacobi", None), ("gauss-seidel", None),
                                          ("gauss-seidel", ["S3", "S1", "S2"])])
def test_matrix_is_engine_three_subsystems(scheme, order):
    system = random_system(np.random.default_rng(7), 3)
    for approx in (ZOH(), Lagrange(2), ExtrapolatedInterpolation(1, 1), ExtrapolatedInterpolation(2, 0)):
        assert one_step_check(system, 0.05, scheme, approx, order) < 1e-10


@needs_engine
@pytest.mark.parametrize("coupling", ["force/displacement", "displacement/displacement", "force/force"])
def test_matrix_is_engine_two_mass(coupling):
    system = two_mass_oscillator(ck=1e5, dk=1e3, coupling=coupling)
    for scheme in ("jacobi", "gauss-seidel"):
        for approx in (ZOH(), Lagrange(1), ExtrapolatedInterpolation(2, 1)):
            assert one_step_check(system, 2e-4, scheme, approx) < 1e-10


@needs_engine
@pytest.mark.parametrize("dk,H,expect_unstable", [(1e3, 1e-3, False), (10.0, 1.78e-3, True), (10.0, 3.16e-3, True)])
def test_long_run_growth_matches_rho(dk, H, expect_unstable):
    """The growth per macro step of a long Exact co-simulation is ρ(Ω) (busch2016 eq. 25)."""
    system = two_mass_oscillator(ck=1e6, dk=dk, coupling="force/displacement")
    approx = Lagrange(1)
    rho = an.spectral_radius(system, H, "jacobi", approx)
    assert (rho > 1) == expect_unstable and abs(rho - 1) > 0.02
    n = 300
    res = simulate(system, t_end=n * H, H=H, scheme="jacobi", approximation=approx, solver=Exact(),
                   divergence_bound=np.inf, divergence_growth=np.inf)
    norm = np.linalg.norm(res.X, axis=1)
    steps = np.arange(len(norm))
    sel = steps >= n // 3                      # after the transient of the sub-dominant modes
    growth = np.exp(np.polyfit(steps[sel], np.log(norm[sel]), 1)[0])
    assert abs(growth - rho) < 0.05 * abs(rho - 1), (growth, rho)


# ---------------------------------------------------------------------------------------------------------------
# kraft2021 §21 T14: symmetric two-mass oscillator, m = c = 1, d = 0, exact subsystems, Jacobi, classic update
def _symmetric(coupling):
    return two_mass_oscillator(ck=1.0, dk=0.0, coupling=coupling, m1=1, m2=1, c1=1, c2=1, d1=0, d2=0)


@pytest.mark.parametrize("k,H,expected", [(0, 0.01, 4.99983e-5), (1, 0.01, 1.00012e-8), (1, 0.1, 1.01134e-4)])
def test_kraft_T14_force_force_rho_minus_one(k, H, expected):
    rho = an.spectral_radius(_symmetric("force/force"), H, "jacobi", Lagrange(k))
    assert rho - 1 == pytest.approx(expected, rel=0.01)


def test_kraft_T14_force_force_k2_critical_H():
    s = _symmetric("force/force")
    Hs = np.linspace(0.40, 0.80, 401)
    rho = an.spectral_radius(s, Hs, "jacobi", Lagrange(2))
    assert np.all(rho[Hs <= 0.596] <= 1 + 1e-10)
    assert np.all(rho[Hs >= 0.60] > 1 + 1e-10)
    Hcrit = Hs[np.argmax(rho > 1 + 1e-10)]
    assert Hcrit == pytest.approx(0.5961, abs=0.002)
    assert an.spectral_radius(s, 0.8, "jacobi", Lagrange(2)) - 1 == pytest.approx(0.309, abs=0.002)


def test_kraft_T14_force_displacement_unstable():
    s = _symmetric("force/displacement")
    assert an.spectral_radius(s, 0.1, "jacobi", Lagrange(2)) - 1 == pytest.approx(9.2852e-6, rel=0.01)
    for k in (0, 1, 2):
        rho = an.spectral_radius(s, np.array([0.01, 0.05, 0.1, 0.5]), "jacobi", Lagrange(k))
        assert np.all(rho > 1), (k, rho)


# ---------------------------------------------------------------------------------------------------------------
# structure of the recurrence
def test_recurrence_layout_and_depth():
    s = two_mass_oscillator(coupling="force/displacement")
    # F/D: n_x = 4, n_y = 3; Jacobi Lagrange k reads k+1 samples, EXTRIPOL k+2 (busch2016 eq. 22)
    for approx, depth in ((ZOH(), 1), (Lagrange(2), 3), (ExtrapolatedInterpolation(2, 1), 4)):
        rec = an.recurrence(s, 1e-4, "jacobi", approx)
        assert rec.depth == depth
        assert rec.Omega.shape == (4 + 3 * depth,) * 2 == (len(rec.labels),) * 2
    rec = an.recurrence(s, 1e-4, "gauss-seidel", Lagrange(2))
    assert rec.labels[:5] == ["S1.x[0]", "S1.x[1]", "S2.x[0]", "S2.x[1]", "S1.x1@T_N"]
    # the shifted history is a pure shift
    dim = rec.Omega.shape[0]
    assert np.array_equal(rec.Omega[4 + 3:, 4:dim - 3], np.eye(dim - 7))


def test_matrix_with_zero_coupling_is_block_exponential():
    """Uncoupled subsystems: Ω restricted to x is exp(A H) (busch2016 eq. 19 with K = 0)."""
    from scipy.linalg import expm, block_diag
    s1 = LTI([[0, 1], [-4, -0.1]], [[0], [1]], [[1, 0]], name="S1")
    s2 = LTI([[-2.0]], [[1.0]], [[1.0]], name="S2")
    system = CoupledSystem([s1, s2], [connect("S2.y[0]", "S1.u[0]", 0.0), connect("S1.y[0]", "S2.u[0]", 0.0)])
    Om = an.amplification_matrix(system, 0.3, "jacobi", Lagrange(1))
    assert np.allclose(Om[:3, :3], block_diag(expm(0.3 * s1.A), expm(0.3 * s2.A)), rtol=1e-13, atol=1e-15)
    assert np.allclose(Om[:3, 3:], 0)


def test_stability_map_equals_pointwise_spectral_radius():
    ck, dk, H = np.logspace(4, 8, 4), np.logspace(1, 4, 3), np.logspace(-5, -3, 5)
    m = an.two_mass_stability_map(ck, dk, H, "force/displacement", "jacobi", Lagrange(1), threads=2)
    assert m.rho.shape == (4, 3, 5) and m.dims == ("ck", "dk", "H") and m.nfail == 0
    for i, j in ((0, 0), (3, 2), (2, 1)):
        s = two_mass_oscillator(ck=ck[i], dk=dk[j], coupling="force/displacement")
        assert np.allclose(m.rho[i, j], an.spectral_radius(s, H, "jacobi", Lagrange(1)), rtol=1e-12)
    # single- and multi-threaded maps are identical; non-affine builders take the per-point path
    m1 = an.two_mass_stability_map(ck, dk, H, "force/displacement", "jacobi", Lagrange(1), threads=1)
    assert np.array_equal(m.rho, m1.rho)
    m2 = an.stability_map(lambda ck, dk: two_mass_oscillator(ck=ck, dk=dk), {"ck": ck, "dk": dk}, H, "jacobi",
                          Lagrange(1), affine=False)
    assert np.allclose(m.rho, m2.rho, rtol=1e-12)
    # one H per call (Y formed per point) and all H at once (Y formed once per system, reused) agree
    for h in range(len(H)):
        mh = an.two_mass_stability_map(ck, dk, H[h:h + 1], "force/displacement", "jacobi", Lagrange(1), threads=1)
        assert np.array_equal(mh.rho[..., 0], m.rho[..., h])
    sl = m.sel(dk=dk[1])
    assert sl.dims == ("ck", "H") and np.array_equal(sl.rho, m.rho[:, 1, :])


def test_stability_map_without_parameters_sweeps_H_only():
    # params may be empty (the docstring's promise): the map is ρ over H, as spectral_radius gives it
    s = two_mass_oscillator(2e5, 200)
    H = np.geomspace(1e-4, 1e-2, 7)
    m = an.stability_map(lambda: s, {}, H, "gauss-seidel", Lagrange(1))
    assert m.dims == ("H",) and m.rho.shape == (7,)
    np.testing.assert_allclose(m.rho, an.spectral_radius(s, H, "gauss-seidel", Lagrange(1)), rtol=1e-12)


def test_stability_map_nonaffine_builder():
    """A builder that is not affine in its parameter is detected and evaluated point by point."""
    H = np.array([1e-4, 1e-3])
    m = an.stability_map(lambda w: two_mass_oscillator(ck=w ** 2, dk=10.0), {"w": [10.0, 100.0, 1000.0]}, H)
    for i, w in enumerate([10.0, 100.0, 1000.0]):
        assert np.allclose(m.rho[i], an.spectral_radius(two_mass_oscillator(ck=w ** 2, dk=10.0), H), rtol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# bad input
def test_bad_input_errors():
    s = two_mass_oscillator()
    with pytest.raises(ValueError, match="H"):
        an.amplification_matrix(s, 0.0)
    with pytest.raises(ValueError, match="H"):
        an.spectral_radius(s, [-1e-3, 1e-3])
    with pytest.raises(ValueError, match="H"):
        an.amplification_matrix(s, float("nan"))
    with pytest.raises(ValueError, match="scheme"):
        an.amplification_matrix(s, 1e-3, scheme="newton")
    with pytest.raises(TypeError, match="scheme"):
        an.amplification_matrix(s, 1e-3, scheme=3)
    with pytest.raises(ValueError, match="update"):
        an.amplification_matrix(s, 1e-3, update="sometimes")
    with pytest.raises(ValueError, match="order"):
        an.amplification_matrix(s, 1e-3, "gauss-seidel", order=["S1", "S1"])
    with pytest.raises(ValueError, match="order"):
        an.amplification_matrix(s, 1e-3, "jacobi", order=["S2", "S1"])
    with pytest.raises(ValueError, match="Hermite"):
        an.amplification_matrix(s, 1e-3, approximation=Hermite(1))
    with pytest.raises(ValueError, match="k must be"):
        an.amplification_matrix(s, 1e-3, approximation=Lagrange(9))
    with pytest.raises(TypeError, match="system"):
        an.amplification_matrix("two-mass", 1e-3)
    nonlin = ODE(lambda t, x, u: -x + u, lambda t, x, u: x, nx=1, nu=1, ny=1, name="N", feedthrough=False)
    lin = LTI([[-1.0]], [[1.0]], [[1.0]], name="L")
    mixed = CoupledSystem([nonlin, lin], [connect("N.y[0]", "L.u[0]"), connect("L.y[0]", "N.u[0]")])
    with pytest.raises(ValueError, match="not a cosim.LTI"):
        an.amplification_matrix(mixed, 1e-3)
    with pytest.raises(ValueError, match="two or more"):
        an.amplification_matrix(CoupledSystem([lin], [], allow_unconnected=True), 1e-3)
    with pytest.raises(ValueError, match="empty"):
        an.two_mass_stability_map([], [1.0], [1e-3])
    with pytest.raises(ValueError, match="empty"):
        an.two_mass_stability_map([1e5], [1.0], [])
    with pytest.raises(ValueError, match="H"):
        an.two_mass_stability_map([1e5], [1.0], [0.0])
    with pytest.raises(ValueError, match="threads"):
        an.two_mass_stability_map([1e5], [1.0], [1e-3], threads=0)
    with pytest.raises(TypeError, match="params"):
        an.stability_map(lambda ck: s, [1, 2], [1e-3])
    with pytest.raises(TypeError, match="build"):
        an.stability_map(lambda ck: "no system", {"ck": [1.0]}, [1e-3])
    with pytest.raises(ValueError, match="params"):
        an.stability_map(lambda ck: s, {"ck": [1.0, np.inf]}, [1e-3])
    # ill-posed algebraic loop: I - D L singular
    a = LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], name="A")
    b = LTI([[-1.0]], [[1.0]], [[1.0]], [[1.0]], name="B")
    loop = CoupledSystem([a, b], [connect("A.y[0]", "B.u[0]"), connect("B.y[0]", "A.u[0]")])
    with pytest.raises(ValueError, match="algebraic loop"):
        an.amplification_matrix(loop, 0.1)
    m = an.stability_map(lambda g: loop, {"g": [1.0]}, [0.1])
    assert np.isnan(m.rho).all() and m.nfail == 1 and "algebraic loop" in m.first_error
    # with several H the map forms Y = (I - D L)^-1 C once per system: the failure is reported for every point
    m = an.stability_map(lambda g: loop, {"g": [1.0, 2.0]}, [0.1, 0.2, 0.3])
    assert np.isnan(m.rho).all() and m.nfail == 6 and "algebraic loop" in m.first_error


def test_local_error_bad_input():
    s = two_mass_oscillator()
    with pytest.raises(ValueError, match="H"):
        an.local_error(s, [])
    with pytest.raises(ValueError, match="x0"):
        an.local_error(s, [1e-4], x0=[1.0, 2.0])
    with pytest.raises(ValueError, match="t"):
        an.local_error(s, [1e-4], t=float("inf"))


@pytest.mark.parametrize("k,local_x,local_v,global_", [(0, 3, 2, 1), (1, 4, 3, 2), (2, 5, 4, 3)])
def test_kraft_T11_classic_rows_on_the_symmetric_model(k, local_x, local_v, global_):
    """kraft2021 T11 (App. C, Fig. C.2), classic rows: force/force Jacobi on the symmetric two-mass oscillator
    (m = c = 1, d = 0, exact subsystems): local orders κ+3 (positions), κ+2 (velocities), global κ+1 (±0.3).
    Measured: (3.00, 2.00, 1.02), (3.99, 2.99, 1.99), (5.00, 4.00, 3.06)."""
    s = _symmetric("force/force")
    order = an.local_error(s, 0.02 * 2.0 ** -np.arange(5), "jacobi", Lagrange(k), t=1.0).order
    for name in ("S1.x1", "S2.x2"):
        assert abs(order[name] - local_x) <= 0.3, order
    for name in ("S1.v1", "S2.v2"):
        assert abs(order[name] - local_v) <= 0.3, order
    Hs = 0.1 * 2.0 ** -np.arange(5)
    errors = []
    for H in Hs:
        res = cosim.simulate(s, 2.0, H, approximation=Lagrange(k), solver=cosim.Exact())
        errors.append(np.max(np.abs(res.X[-1] - cosim.simulate_monolithic(s, 2.0, t_eval=res.t).X[-1])))
    assert abs(np.polyfit(np.log(Hs), np.log(errors), 1)[0] - global_) <= 0.3, errors


def test_kraft_T15_classic_rows_of_figs_C3_C4():
    """kraft2021 T15 (App. C, Figs. C.3/C.4), classic rows, force/force, symmetric model. d = 0: unstable for every H
    with κ = 0 and 1, stable for some H with κ = 2 ("−, −, +"), Jacobi and Gauss-Seidel alike. d > 0: the stable share
    of the plane of subsystem 1's eigenvalue λH (H = 1, m = 1, c = |λ|², d = -2 Re λ) shrinks as κ grows (thesis
    ++++, ++, + for Jacobi; +++++, ++++, ++ for Gauss-Seidel) and Gauss-Seidel's is at least Jacobi's. Measured
    shares: Jacobi 0.096, 0.043, 0.026; Gauss-Seidel 0.216, 0.120, 0.029."""
    undamped = _symmetric("force/force")
    Hs = np.geomspace(1e-3, 3, 30)
    plane = [(re, im) for re in np.linspace(-2, -0.05, 25) for im in np.linspace(0.05, 2.5, 25)]
    share = {}
    for scheme in ("jacobi", "gauss-seidel"):
        for k in (0, 1, 2):
            rho0 = an.spectral_radius(undamped, Hs, scheme, Lagrange(k))
            assert np.any(rho0 <= 1 + 1e-14) == (k == 2), (scheme, k, rho0.min() - 1)
            stable = 0
            for re, im in plane:
                d, c = -2 * re, im**2 + re**2
                s = two_mass_oscillator(ck=c, dk=d, coupling="force/force", m1=1, m2=1, c1=c, c2=c, d1=d, d2=d)
                stable += an.spectral_radius(s, 1.0, scheme, Lagrange(k)) <= 1
            share[scheme, k] = stable / len(plane)
    for scheme in ("jacobi", "gauss-seidel"):
        assert share[scheme, 0] > share[scheme, 1] > share[scheme, 2] > 0, share
    assert all(share["gauss-seidel", k] >= share["jacobi", k] for k in (0, 1, 2)), share
