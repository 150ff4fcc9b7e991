"""Coupling methods written in Python: ZOH, Lagrange(1) and an MBCorr-0 prototype
==================================================================================

A :class:`cosim.PythonCoupling` subclass is a coupling method the engine calls through its C coupling interface
(predict / on_unit_done / accept / save / restore), one Python call per operation. This example writes three:

* ``PyZOH``: zero-order hold, u = L y^k + r on [T^k, T^{k+1}];
* ``PyLagrange1``: linear extrapolation through the last two macro points, u(s) = L (y^k + (y^k − y^{k−1}) s ΔT/ΔT_prev) + r;
* ``PyMBCorr0``: the model-based corrector of order 0 (the reconstruction of the MBCorr specification mbcorr.md, surrogate B1):
  u = L Ŷ^k + r with Ŷ^k = φ_1(MΔT) y^k + ΔT φ_2(MΔT) g the mean of the ideally coupled IJ surrogate over the step.

and compares each with the C implementation (``cosim.ZOH()``, ``cosim.Lagrange(1)``, ``cosim.MBCorr(0)``) on
Genser's dual-mass oscillator (ck = 2e5 N/m, dk = 200 Ns/m, ΔT = 0.5 ms, 100 steps). All three agree to rounding
(measured max |ΔY| / max |Y|: 0, 1.0e-15, 2.9e-15; the prototype's φ functions come from SciPy's expm, the C core's
from its own).

Run: .venv/bin/python examples/python_coupling.py
"""
import numpy as np
from scipy.linalg import expm

import cosim
from cosim.models import two_mass_oscillator
from cosim.sysid import ij_continuous


class LastOutputs(cosim.PythonCoupling):
    """The state of a coupling that needs the last exchanged outputs y^k only (and L, r)."""

    def start(self, system, H):
        self.L, self.r, self.y, self.yo = system.L, system.r, None, system.out_offset

    def accept(self, T1, y):
        self.y = y.copy()

    def save(self):
        return self.y.copy()

    def restore(self, state):
        self.y = state.copy()


class PyZOH(LastOutputs):
    """Zero-order hold: u = L y^k + r. Under Gauss-Seidel a unit stepped later sees the new outputs y_i^{k+1} of
    the units already done (busch2016 eq. 13 with degree 0)."""

    def predict(self, T, H):
        self.ystep = self.y.copy()
        return self.L @ self.y + self.r          # a vector: degree 0

    def on_unit_done(self, i, T1, y_i):
        self.ystep[self.yo[i]:self.yo[i + 1]] = y_i
        return self.L @ self.ystep + self.r


class PyLagrange1(cosim.PythonCoupling):
    """Linear extrapolation through (T^{k−1}, y^{k−1}) and (T^k, y^k); the first step holds y^0."""

    def start(self, system, H):
        self.L, self.r, self.hist = system.L, system.r, []

    def predict(self, T, H):
        (t1, y1) = self.hist[-1]
        c0 = self.L @ y1 + self.r
        if len(self.hist) < 2:
            return c0[None, :]
        t0, y0 = self.hist[-2]
        c1 = self.L @ ((y1 - y0) * (H / (t1 - t0)))
        return np.vstack([c0, c1])

    def accept(self, T1, y):
        self.hist = (self.hist + [(T1, y.copy())])[-2:]

    def save(self):
        return list(self.hist)

    def restore(self, state):
        self.hist = list(state)


def global_ijs(system):
    """The block-diagonal continuous interface Jacobians Sy, Su, Sd of LTI units (genser2020 eq. 2.12-2.14)."""
    m, n = system.L.shape
    Sy, Su, Sd = np.zeros((n, n)), np.zeros((n, m)), np.zeros((n, m))
    yo, uo = system.out_offset, system.in_offset
    for i, s in enumerate(system.subsystems):
        ij = ij_continuous(*(np.asarray(M, dtype=float) for M in (s.A, s.B, s.C, s.D)))
        Sy[yo[i]:yo[i + 1], yo[i]:yo[i + 1]] = ij.dSdy
        Su[yo[i]:yo[i + 1], uo[i]:uo[i + 1]] = ij.dSdu
        Sd[yo[i]:yo[i + 1], uo[i]:uo[i + 1]] = ij.dSdud
    return Sy, Su, Sd


class PyMBCorr0(LastOutputs):
    """MBCorr of order 0 with the continuous exact-IJ surrogate (B1): u = L Ŷ^k + r on the step (Jacobi)."""

    def start(self, system, H):
        super().start(system, H)
        Sy, Su, Sd = global_ijs(system)
        n = Sy.shape[0]
        Mc = np.eye(n) - Sd @ self.L
        self.M = np.linalg.solve(Mc, Sy + Su @ self.L)
        self.g = np.linalg.solve(Mc, Su @ self.r)
        self.H = None

    def _phi(self, H):
        """φ_1(MH), φ_2(MH) from the exponential of the augmented matrix [[MH, I, 0], [0, 0, I], [0, 0, 0]]."""
        n = self.M.shape[0]
        Z = np.zeros((3 * n, 3 * n))
        Z[:n, :n], Z[:n, n:2 * n], Z[n:2 * n, 2 * n:] = self.M * H, np.eye(n), np.eye(n)
        E = expm(Z)
        self.H, self.phi1, self.phi2 = H, E[:n, n:2 * n], E[:n, 2 * n:]

    def predict(self, T, H):
        if H != self.H:
            self._phi(H)
        Y = self.phi1 @ self.y + H * self.phi2 @ self.g
        return self.L @ Y + self.r


def compare(system, H, t_end, python, native, native_as="approximation"):
    kw = dict(t_end=t_end, H=H, solver=cosim.Euler(h=1e-5), update="simplified")
    a = cosim.simulate(system, coupling=python, **kw)
    b = cosim.simulate(system, **{native_as: native}, **kw)
    return np.max(np.abs(a.Y - b.Y)) / np.max(np.abs(b.Y))


if __name__ == "__main__":
    system = two_mass_oscillator(ck=2e5, dk=200)
    H, t_end = 5e-4, 0.05
    print(f"PyZOH       vs cosim.ZOH():         max |ΔY| / max |Y| = "
          f"{compare(system, H, t_end, PyZOH(), cosim.ZOH()):.2e}")
    print(f"PyLagrange1 vs cosim.Lagrange(1):   max |ΔY| / max |Y| = "
          f"{compare(system, H, t_end, PyLagrange1(), cosim.Lagrange(1)):.2e}")
    print(f"PyMBCorr0   vs cosim.MBCorr(0):     max |ΔY| / max |Y| = "
          f"{compare(system, H, t_end, PyMBCorr0(), cosim.MBCorr(0), native_as='coupling'):.2e}")
    import time
    for name, cpl, kw in (("PyZOH", PyZOH(), {}), ("cosim.ZOH()", None, {"approximation": cosim.ZOH()})):
        t0 = time.perf_counter()
        cosim.simulate(system, t_end=0.5, H=H, solver=cosim.Exact(), coupling=cpl, **kw)
        print(f"{name:12s} 1000 macro steps: {(time.perf_counter() - t0) * 1e3:.1f} ms")
