"""A fixed set of runs through every capability, recorded bit for bit (tests/golden/golden.npz).

Refactors of the Python-to-C seam must not change a single bit of these results; ``test_golden.py`` compares them.
Record again only when a number is meant to change, and say why in the commit:

    .venv/bin/python -m tests.golden.record

Each case returns a dict name -> array. Only data is recorded (times, states, outputs, inputs, step sizes, error
estimates, logs), never wall times.
"""
import numpy as np

import cosim
from cosim import analysis, models


def _run(res):
    out = {"t": res.t, "X": res.X, "Y": res.Y, "U": res.U}
    if res.step_sizes is not None:   # recorded as "H" for StepControl (which sets k), "step_sizes" for ECCO
        out["H" if res.k is not None else "step_sizes"] = np.asarray(res.step_sizes, dtype=float)
    for name in ("k", "error_estimate", "energy_t", "energy_residual", "balance_t"):
        v = getattr(res, name, None)
        if v is not None:
            out[name] = np.asarray(v, dtype=float)
    if getattr(res, "balance_error", None) is not None:
        for key, v in sorted(res.balance_error.items()):
            out[f"balance_error[{key}]"] = np.asarray(v, dtype=float)
    return out


def _two_mass(**kw):
    return models.two_mass_oscillator(ck=2e5, dk=200, coupling="force/displacement", **kw)


def _sim(system, t_end, H, **kw):
    try:
        return _run(cosim.simulate(system, t_end, H, **kw))
    except cosim.CosimError as e:              # a diverged/failed run's partial result is recorded too
        return _run(e.result)


CVODE = dict(solver=cosim.CVODE(rtol=1e-10, atol=1e-12))


def _cases():
    tm = _two_mass()
    c = {}
    # schemes x approximations x integrators
    for scheme in ("jacobi", "gauss-seidel"):
        for name, appr in (("zoh", cosim.ZOH()), ("lag2", cosim.Lagrange(2)),
                           ("ei11", cosim.ExtrapolatedInterpolation(1, 1)), ("herm1", cosim.Hermite(1))):
            c[f"{scheme}-{name}-cvode"] = lambda s=scheme, a=appr: _sim(tm, 0.02, 1e-3, scheme=s, approximation=a,
                                                                         **CVODE)
    c["jacobi-lag1-rk4"] = lambda: _sim(tm, 0.02, 1e-3, approximation=cosim.Lagrange(1), solver=cosim.RK4(substeps=4))
    c["jacobi-lag1-euler"] = lambda: _sim(tm, 0.02, 1e-3, approximation=cosim.Lagrange(1),
                                          solver=cosim.Euler(substeps=10))
    c["jacobi-lag1-exact"] = lambda: _sim(tm, 0.02, 1e-3, approximation=cosim.Lagrange(1), solver=cosim.Exact())
    c["jacobi-lag1-ab2"] = lambda: _sim(tm, 0.02, 1e-3, approximation=cosim.Lagrange(1), solver=cosim.AB2("heun", 4))
    c["cvode-adams"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.CVODE(rtol=1e-8, atol=1e-10, method="adams"))
    c["gs-smooth-zoh"] = lambda: _sim(tm, 0.02, 1e-3, scheme="gauss-seidel", approximation=cosim.ZOH(smooth=True),
                                      solver=cosim.Exact())
    c["diverging"] = lambda: _sim(models.two_mass_oscillator(ck=1e7, dk=0, coupling="force/displacement"), 0.5,
                                  2e-3, solver=cosim.Exact())
    c["monolithic"] = lambda: _run(cosim.simulate_monolithic(tm, 0.02))
    c["t_eval"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(), output_interval=2.5e-4)
    # couplings
    c["prestep-continuous"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(), coupling=cosim.PreStep())
    c["prestep-discrete"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Euler(h=1e-5),
                                         coupling=cosim.PreStep(variant="discrete"))
    c["nepce"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(), coupling=cosim.NEPCE())
    c["foh"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(), coupling=cosim.FOH())
    c["quadratic"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Euler(substeps=10), coupling=cosim.Quadratic())
    c["balance"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(), coupling=cosim.BalanceCorrection())
    c["balance-smooth"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(),
                                       coupling=cosim.BalanceCorrection(kernel="smooth", spread=2))
    # iterative schemes
    c["implicit"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(),
                                 scheme=cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20))
    c["waveform"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.Exact(),
                                 scheme=cosim.WaveformRelaxation(omega=0.7, tol=1e-10, max_iter=10,
                                                                 on_failure="continue"))
    c["waveform-iqn"] = lambda: _sim(tm, 0.02, 1e-3, solver=cosim.RK4(substeps=4),
                                     scheme=cosim.WaveformRelaxation(omega=1.0, acceleration="iqn-ils", tol=1e-10,
                                                                     max_iter=50, waveform="substeps"))
    # step control
    for est in ("exMD", "exCV", "imMD", "imCV"):
        sch = cosim.Implicit(jacobian="fd", tol=1e-10, max_iter=20) if est.startswith("im") else "jacobi"
        c[f"stepcontrol-{est}"] = lambda e=est, s=sch: _sim(tm, 0.02, 1e-4, solver=cosim.Exact(), scheme=s,
                                                            step_control=cosim.StepControl(estimator=e, rtol=1e-5))
    c["ecco"] = lambda: _sim(models.quarter_truck(), 0.05, 1e-4, solver=cosim.Exact(), step_control=cosim.ECCO(
        power_bonds=[("chassis.v", "chassis.F", "wheel.F", "wheel.v")], rtol=1e-5, atol=1e-5))
    # models
    c["kraft-M1"] = lambda: _sim(models.kraft_two_mass("M1"), 0.05, 1e-3, solver=cosim.Exact())
    c["chain-threads"] = lambda: _sim(models.oscillator_chain(40, 4), 0.01, 1e-3,
                                      solver=cosim.CVODE(rtol=1e-6, atol=1e-9), threads=2)
    c["helicopter"] = lambda: _sim(models.helicopter(), 0.5, 0.01, solver=cosim.RK4(substeps=4))
    c["fmu-cs-fmi2"] = lambda: _sim(_fmu_system("cs", 2), 0.02, 1e-3, approximation=cosim.Lagrange(1))
    c["fmu-cs-fmi3"] = lambda: _sim(_fmu_system("cs", 3), 0.02, 1e-3)
    c["fmu-me"] = lambda: _sim(_fmu_system("me", 2), 0.02, 1e-3, solver=cosim.RK4(substeps=10))
    c["sysid-moesp"] = _moesp
    # stepper
    c["stepper"] = _stepper
    # analysis
    c["spectral-radius"] = lambda: {"rho": np.array([analysis.spectral_radius(tm, H, "jacobi", cosim.Lagrange(1))
                                                     for H in (1e-4, 1e-3, 1e-2)])}
    c["stability-map"] = lambda: {"rho": np.asarray(analysis.two_mass_stability_map(
        np.logspace(4, 6, 3), np.logspace(1, 3, 2), np.logspace(-5, -3, 3), "force/displacement", "jacobi",
        cosim.Lagrange(1)).rho, dtype=float)}
    c["local-error"] = _local_error
    return c


_FMUS = {}


def _fmu_system(kind, fmi):
    """The two-mass oscillator halves as test FMUs (tests/fmus/build.py), compiled once per process."""
    import atexit
    import pathlib
    import shutil
    import sys
    import tempfile
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "fmus"))
    import build
    if fmi not in _FMUS:
        d = pathlib.Path(tempfile.mkdtemp(prefix="cosim-golden-"))
        atexit.register(shutil.rmtree, d, True)
        _FMUS[fmi] = [build.build_fmu(d, m, fmi, kinds=("cs", "me")) for m in (1, 2)]
    units = [cosim.FMU(path, name=f"S{m}", kind=kind) for m, path in zip((1, 2), _FMUS[fmi])]
    conns = [("S2.F", "S1.F"), ("S1.x", "S2.x_in"), ("S1.v", "S2.v_in")]
    return cosim.CoupledSystem(units, [cosim.connect(a, b) for a, b in conns])


def _moesp():
    rng = np.random.default_rng(7)
    u = rng.standard_normal((400, 1))
    x = np.zeros(2)
    y = np.empty((400, 1))
    A, B, C = np.array([[0.9, 0.2], [-0.2, 0.8]]), np.array([1.0, 0.5]), np.array([1.0, -0.3])
    for n in range(400):
        y[n] = C @ x
        x = A @ x + B * u[n, 0]
    r = cosim.sysid.moesp(u, y, order=2)
    return {"eig": np.sort_complex(np.linalg.eigvals(r.A)).real.copy(), "D": np.asarray(r.D, dtype=float),
            "markov": np.array([(r.C @ np.linalg.matrix_power(r.A, i) @ r.B).ravel() for i in range(5)])}


def _stepper():
    sub = _two_mass()["S2"]
    st = cosim.Stepper(sub, cosim.CVODE())
    xs, ys = [], []
    for n in range(5):
        st.do_step(n * 1e-3, 1e-3, np.array([[1.0] * sub.nu, [0.5] * sub.nu]))
        xs.append(st.x)
        ys.append(st.output(np.ones(sub.nu)))
    return {"x": np.array(xs), "y": np.array(ys)}


def _local_error():
    le = analysis.local_error(_two_mass(), np.logspace(-5, -4, 3), "jacobi", cosim.Lagrange(1))
    return {k: np.asarray(v, dtype=float) for k, v in vars(le).items()
            if isinstance(v, (np.ndarray, list, float)) and np.asarray(v).dtype.kind == "f"}


CASES = _cases()


def compute(name):
    return {k: np.ascontiguousarray(v) for k, v in CASES[name]().items()}
