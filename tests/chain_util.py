"""A small linear oscillator chain cut force/force (kraft2021 §3.2) from LTI units, for the iterative-scheme tests."""
import numpy as np

import cosim


def chain(ns=3, nb=2, m=1.0, c=1e4, d=2.0, cc=1e4, dc=2.0, x0_first=1e-3):
    """ns subsystems of nb bodies each, fixed at both ends; λ_L = cc (x_{L+1,1} - x_{L,n}) + dc (v_{L+1,1} - v_{L,n})
    acts as +λ_L on the last body of L and -λ_L on the first body of L+1. Outputs (x_1, x_n, v_1, v_n)."""
    subs, conns = [], []
    for L in range(ns):
        nu = (L > 0) + (L < ns - 1)
        K = np.zeros((nb, nb))
        Dm = np.zeros((nb, nb))
        for i in range(nb + 1):  # elements 0..nb: element i between body i-1 and body i (local)
            left, right = i - 1, i
            if (i == 0 and L > 0) or (i == nb and L < ns - 1):
                continue  # cut elements are the coupling forces
            for a, b in ((left, left), (right, right)):
                if 0 <= a < nb:
                    K[a, b] += c
                    Dm[a, b] += d
            if 0 <= left < nb and 0 <= right < nb:
                K[left, right] -= c
                K[right, left] -= c
                Dm[left, right] -= d
                Dm[right, left] -= d
        A = np.block([[np.zeros((nb, nb)), np.eye(nb)], [-K / m, -Dm / m]])
        B = np.zeros((2 * nb, nu))
        inputs = []
        col = 0
        if L > 0:
            B[nb + 0, col] = -1.0 / m
            inputs.append("lam_left")
            col += 1
        if L < ns - 1:
            B[nb + nb - 1, col] = 1.0 / m
            inputs.append("lam_right")
        C = np.zeros((4, 2 * nb))
        C[0, 0] = C[1, nb - 1] = C[2, nb] = C[3, 2 * nb - 1] = 1.0
        x0 = np.zeros(2 * nb)
        if L == 0:
            x0[0] = x0_first
        subs.append(cosim.LTI(A, B, C, np.zeros((4, nu)), name=f"S{L + 1}", x0=x0, inputs=inputs,
                              outputs=["x1", "xn", "v1", "vn"]))
    for L in range(ns - 1):
        a, b = f"S{L + 1}", f"S{L + 2}"
        for dst in (f"{a}.lam_right", f"{b}.lam_left"):
            conns += [cosim.connect(f"{b}.x1", dst, cc), cosim.connect(f"{a}.xn", dst, -cc),
                      cosim.connect(f"{b}.v1", dst, dc), cosim.connect(f"{a}.vn", dst, -dc)]
    return cosim.CoupledSystem(subs, conns)
