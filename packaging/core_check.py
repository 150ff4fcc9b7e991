"""make wheel-check, core-only venv: cosim installed without extras, system libraries hidden.

simulate, results (DataFrame, CSV), analysis and plotting work; cosim.doe, cosim.FMU and cosim.explore raise
ImportError naming their extra. Run from outside the source tree, so that the installed package is the one imported.
"""
import os
import subprocess
import sys
import tempfile
import zipfile

import matplotlib

matplotlib.use("Agg")

import cosim  # noqa: E402
from cosim import analysis, models  # noqa: E402

assert "site-packages" in cosim.__file__, f"not the installed package: {cosim.__file__}"
system = models.two_mass_oscillator(ck=2e5, dk=200, coupling="force/displacement")
approximation = cosim.ExtrapolatedInterpolation(k=1, continuity=1)
res = cosim.simulate(system, t_end=0.05, H=1e-3, scheme="gauss-seidel", approximation=approximation,
                     solver=cosim.CVODE(rtol=1e-10, atol=1e-12))
ref = cosim.simulate_monolithic(system, t_end=0.05, t_eval=res.t)
assert res.error_to(ref)["max_rel"] < 0.5  # 0.11 here: a stable co-simulation close to the reference
with tempfile.TemporaryDirectory() as tmp:
    res.to_csv(os.path.join(tmp, "r.csv"))
    assert res.to_dataframe().shape[0] == len(res.t)
    res.plot(signals=["S2.F"], ref=ref).figure.savefig(os.path.join(tmp, "r.png"))
rho = analysis.spectral_radius(system, 1e-3, "gauss-seidel", approximation)
assert 0 < rho < 1, rho

def load_fmu():
    with tempfile.TemporaryDirectory() as tmp:  # a valid argument, so that the missing fmpy is what stops it
        with zipfile.ZipFile(os.path.join(tmp, "empty.fmu"), "w") as z:
            z.writestr("modelDescription.xml", "")
        cosim.FMU(os.path.join(tmp, "empty.fmu"))


for feature, extra, load in [("cosim.doe", "doe", lambda: __import__("cosim.doe")), ("cosim.FMU", "fmu", load_fmu),
                             ("cosim.explore", "jupyter", lambda: cosim.explore(system, 0.05))]:
    try:
        load()
    except ImportError as e:
        assert f'pip install "cosim[{extra}]"' in str(e), str(e)
        print(f"{feature}: ImportError: {e}")
    else:
        sys.exit(f"{feature} did not raise ImportError without the [{extra}] extra")
# The command line too: one line naming the extra, no traceback.
study = subprocess.run([sys.executable, "-m", "cosim", "doe", "none.toml"], capture_output=True, text=True)
assert study.returncode == 1 and 'pip install "cosim[doe]"' in study.stderr and "Traceback" not in study.stderr, study
print(f"cosim doe: exit 1: {study.stderr.strip()}")
print(f"core-only: import, simulate, to_csv/to_dataframe, plot, analysis (rho = {rho:.4f}) work")
