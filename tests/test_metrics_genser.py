"""genser2020 §11 measures: ε_mono (3.9/3.10), evar (AT-18), σ_mono (4.11), NRMSE, the stability-region area
(§11.4, AT-25/26)."""
import math

import numpy as np
import pytest

import cosim
from cosim.analysis import stability_region_area
from cosim.metrics import eps_mono, eps_mono_rel, evar, nrmse, sigma_mono
from cosim.models import two_mass_oscillator


def test_at18_evar_white_noise_and_offset():
    rng = np.random.default_rng(0)
    n = 100_000
    t = np.linspace(0.0, 10.0, n)
    y = np.sin(t) + rng.normal(0.0, math.sqrt(0.02), n)
    assert evar(y) == pytest.approx(0.02, rel=0.05)
    assert evar(np.full(n, 3.0)) == pytest.approx(0.0, abs=1e-12)
    assert evar(5.0 + np.sin(t)) < 1e-10           # a smooth time-varying mean is not noise


def test_evar_bad_input():
    with pytest.raises(ValueError, match="signal"):
        evar(np.ones((3, 3)))
    with pytest.raises(ValueError, match="signal"):
        evar([1.0, 2.0])


@pytest.fixture(scope="module")
def runs():
    system = two_mass_oscillator()
    res = cosim.simulate(system, t_end=0.1, H=1e-3, solver=cosim.Euler(h=1e-5), update="simplified")
    ref = cosim.simulate_monolithic(system, t_end=0.1, t_eval=res.t)
    return res, ref


def test_eps_mono_definition(runs):
    res, ref = runs
    rel = eps_mono_rel(res, ref)
    # (3.10) by hand for S2 (its one output F), time mean
    y, r = res["S2.F"], ref["S2.F"]
    rng = np.maximum.accumulate(r) - np.minimum.accumulate(r) + 1e-12
    assert rel["S2"] == pytest.approx(np.mean(np.abs(y - r) / rng), rel=1e-12)
    assert eps_mono(res, ref) == pytest.approx(math.hypot(rel["S1"], rel["S2"]), rel=1e-12)
    assert eps_mono(res, ref) == pytest.approx(0.0966, rel=0.02)           # [PROTO] 0.0966 (ZOH, T_end = 0.1 s)
    assert eps_mono(res, ref, aggregation="max") >= eps_mono(res, ref)
    assert eps_mono(ref, ref) == 0.0
    with pytest.raises(ValueError, match="aggregation"):
        eps_mono(res, ref, aggregation="median")


def test_eps_mono_saturates_at_one():
    system = two_mass_oscillator(ck=2e5, dk=200)
    res = cosim.simulate(system, t_end=0.2, H=2e-3, solver=cosim.Euler(h=1e-5), update="simplified",
                         divergence_growth=math.inf)
    ref = cosim.simulate_monolithic(system, t_end=0.2, t_eval=res.t)
    assert eps_mono(res, ref) == 1.0
    assert eps_mono(res, ref, saturate=False) > 1.0
    assert sigma_mono(res, ref) == 1.0


def test_sigma_mono_and_nrmse(runs):
    res, ref = runs
    s = sigma_mono(res, ref, saturate=False)
    y = res.Y - ref.Y
    expected = np.mean([math.sqrt(evar(y[:, 0])), math.sqrt(evar(y[:, 1]))]) + math.sqrt(evar(y[:, 2]))
    assert s == pytest.approx(expected, rel=1e-12)
    assert sigma_mono(ref, ref) == 0.0
    e = nrmse(res["S2.F"], ref["S2.F"])
    assert e == pytest.approx(np.sqrt(np.mean((res["S2.F"] - ref["S2.F"]) ** 2)) / np.ptp(ref["S2.F"]))
    with pytest.raises(ValueError, match="y_ref"):
        nrmse(np.ones(3), np.ones(4))


def test_amplitude_rule_alias(runs):
    res, _ = runs
    assert cosim.metrics.amplitude_stable(res) == cosim.metrics.is_stable(res)


@pytest.fixture(scope="module")
def regions():
    # the spec's grid (§11.4): ΔT 0.5, 1..10 ms, log10(ck/dk) -3..5 in quarter decades; family ck dk = 1e8
    return {name: stability_region_area(coupling=c, label=name) for name, c in
            (("ZOH", None), ("NEPCE", cosim.NEPCE()), ("pre-step", cosim.PreStep()))}


def test_at25_area_enlargement(regions):
    a = {k: r.area for k, r in regions.items()}
    assert a["pre-step"] / a["ZOH"] >= 3          # thesis 8.2; measured 56.7 / 5.0 = 11.3
    assert a["pre-step"] / a["NEPCE"] >= 2        # thesis 5.9; measured 56.7 / 5.5 = 10.3 (NEPCE with intermediate values)
    pre = regions["pre-step"]
    top = pre.region[-1]                          # ΔT = 10 ms
    in_band = (pre.ratios >= 10) & (pre.ratios <= 1000)
    assert np.any(top & in_band) or np.any(pre.region[-2] & in_band)
    # nesting NEPCE ⊂ pre-step and ZOH ⊂ pre-step (§13.2) on the counted regions
    assert np.all(pre.region[regions["NEPCE"].region])
    assert np.all(pre.region[regions["ZOH"].region])
    # ZOH: nothing stable in the main region above 3 ms (thesis), islands ignored
    assert not np.any(regions["ZOH"].region[regions["ZOH"].H > 3e-3])


@pytest.mark.xfail(strict=True, reason="§13.2 nesting ZOH ⊂ NEPCE does not hold for NEPCE with intermediate values "
                   "(App. B.2's variant, K = 1, no filter): measured areas 5.0 (ZOH) and 5.5 (NEPCE); NEPCE loses "
                   "10 ZOH-stable points at ck/dk = 1.8-56 s^-1 (ΔT 0.5-2 ms) and gains 11 at higher ck/dk and "
                   "ΔT 3-4 ms; the thesis's NEPCE variant is unspecified (genser2020.md §9)")
def test_at25_zoh_region_inside_nepce_region(regions):
    assert np.all(regions["NEPCE"].region[regions["ZOH"].region])


def test_at26_zoh_band_upper_edge(regions):
    z = regions["ZOH"]
    band = z.ratios[z.region[0]]                  # ΔT = 0.5 ms
    assert abs(math.log10(band.max()) - math.log10(1000)) <= 0.5


@pytest.mark.xfail(strict=True, reason="AT-26 lower edge: on the ck dk = 1e8 family the ZOH band at ΔT = 0.5 ms "
                   "starts at ck/dk = 10^0.25 = 1.8 1/s, about one decade above the thesis's 0.2 1/s")
def test_at26_zoh_band_lower_edge(regions):
    z = regions["ZOH"]
    band = z.ratios[z.region[0]]
    assert abs(math.log10(band.min()) - math.log10(0.2)) <= 0.5


def test_region_plot_and_validation(regions, tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    for i, r in enumerate(regions.values()):
        r.plot(ax, color=f"C{i}")
    fig.savefig(tmp_path / "regions.png")
    plt.close(fig)
    with pytest.raises(ValueError, match="family"):
        stability_region_area(coupling=None, H=[1e-3], ratios=[10.0], family="sum")
    with pytest.raises(ValueError, match="H"):
        stability_region_area(H=[2e-3, 1e-3])
    with pytest.raises(TypeError, match="build"):
        stability_region_area(build=3)


# examples/genser_figures.py --small runs in tests/test_figure_units.py (its four figures and their axis units)
