"""kraft2021 §21 T10, local orders: the converged implicit scheme and waveform relaxation (kraft's ω = 0.3, i.e.
ω = 0.7 here) keep the explicit local orders of eq. 3.1: positions O(H^{κ+3}), velocities O(H^{κ+2}) (the global
order κ+1 is checked in test_implicit.py).

Local error as defined under eq. 3.1 (and as T9 measures it in test_orders.py): one macro step of the co-simulation
against the exact solution of the monolithic system from the co-simulation state at T_N, here Φ(H) x_N with the
matrix exponential; exact LTI units (cosim.Exact), so only the coupling approximation contributes. Model M1
(Table 5.2, force/force), the maximum over the regular macro steps (after Kraft's start-up grid), slopes fitted over
four H halvings."""
import numpy as np
import pytest
from scipy.linalg import expm

import cosim
from cosim import models
from conftest import fitted_order

P = dict(m1=2.0, m2=1.0, c1=1e5, c2=1e3, d1=0.0, d2=0.0)
X0 = (-2.0, 100.0, 0.0, -200.0)
M1 = models.two_mass_oscillator(ck=5e3, dk=0.0, coupling="force/force", x0=X0, **P)
A = models.monolithic_matrix(ck=5e3, dk=0.0, **P)
HS = [1e-3 * 2.0**-n for n in range(5)]
SCHEMES = {
    "implicit": lambda: cosim.Implicit(jacobian="exact", tol=1e-13, max_iter=30),
    "waveform": lambda: cosim.WaveformRelaxation(omega=0.7, tol=1e-13, max_iter=300),
}


def local_errors(scheme, kappa, H, T=0.05):
    """Largest local errors (position, velocity of the coupling body m1) over the regular macro steps of a run."""
    r = cosim.simulate(M1, T, H, scheme=SCHEMES[scheme](), approximation=cosim.Lagrange(kappa), solver=cosim.Exact(),
                       startup="kraft")
    regular = np.nonzero(r.t[:-1] >= 2 * H * (1 - 1e-9))[0]
    assert regular.size >= 20
    loc = np.abs(r.X[regular + 1] - r.X[regular] @ expm(A * H).T)
    return loc[:, 0].max(), loc[:, 1].max()


@pytest.mark.parametrize("scheme", sorted(SCHEMES))
@pytest.mark.parametrize("kappa", range(4))
def test_T10_local_orders_position_kappa_plus_3_velocity_kappa_plus_2(scheme, kappa):
    errs = np.array([local_errors(scheme, kappa, H) for H in HS])
    assert errs[-1, 0] > 10 * np.finfo(float).eps * abs(X0[0])  # positions (|x1| ~ 2) still above round-off
    assert fitted_order(HS, errs[:, 0]) == pytest.approx(kappa + 3, abs=0.3)
    assert fitted_order(HS, errs[:, 1]) == pytest.approx(kappa + 2, abs=0.3)

