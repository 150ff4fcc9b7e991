#include "linalg/balance.h"

#include <math.h>
#include <stddef.h>

void cs_balance(int n, double *A, double *d) {
    for (int i = 0; i < n; i++) d[i] = 1.0;
    /* Sweep until no scaling reduces a row+column norm by 5 % (the classic stopping rule; it terminates because
     * every accepted scaling decreases the off-diagonal 1-norm by a fixed fraction). */
    for (int sweeps = 0, changed = 1; changed && sweeps < 4; sweeps++) {
        changed = 0;
        for (int i = 0; i < n; i++) {
            double c = 0.0, r = 0.0;
            for (int j = 0; j < n; j++) {
                if (j == i) continue;
                c += fabs(A[(size_t)j * n + i]);
                r += fabs(A[(size_t)i * n + j]);
            }
            if (c == 0.0 || r == 0.0 || !isfinite(c + r)) continue;
            /* f = 2^k with c f ~ r / f: compare c f^2 with r, moving f by factors of 2 (exact in binary). */
            const double s = c + r;
            double f = 1.0, cf2 = c;
            while (cf2 < 0.5 * r) { f *= 2.0; cf2 *= 4.0; }
            while (cf2 >= 2.0 * r) { f *= 0.5; cf2 *= 0.25; }
            if ((cf2 + r) / f >= 0.95 * s) continue;
            /* column i times f, row i divided by f */
            for (int j = 0; j < n; j++) { A[(size_t)j * n + i] *= f; A[(size_t)i * n + j] /= f; }
            d[i] *= f;
            changed = 1;
        }
    }
}
