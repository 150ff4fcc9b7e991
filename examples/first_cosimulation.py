"""A first co-simulation
======================

Two masses coupled by a spring and a damper, split into two subsystems that exchange the coupling force and the
displacement every macro step H = 1 ms. Holding the inputs constant over a step (ZOH) is 26 % off the monolithic
solution; extrapolating them continuously (EXTRIPOL-C1) halves the error. The same ten lines are the README's
example.
"""
import matplotlib.pyplot as plt

import cosim

system = cosim.models.two_mass_oscillator(ck=2e5, dk=200)   # two masses coupled by a spring and a damper
ref = cosim.simulate_monolithic(system, t_end=0.1)           # the monolithic (exact) solution
fig, ax = plt.subplots(layout="constrained")
ax.plot(ref.t, ref["S2.F"], "k", lw=4, alpha=0.25, label="monolithic")
for approx in (cosim.ZOH(), cosim.ExtrapolatedInterpolation(k=1, continuity=1)):
    res = cosim.simulate(system, t_end=0.1, H=1e-3, approximation=approx)   # exchange every H = 1 ms
    ax.plot(res.t, res["S2.F"], label=f"{approx!r}: {res.error_to(ref)['max_rel']:.1%} error")
ax.set(xlabel="t [s]", ylabel="coupling force F [N]", title="Two-mass oscillator, macro step 1 ms")
ax.set_ylim(-2.5e4, 4.2e4)
ax.legend(loc="upper right", fontsize="small")
plt.show()
