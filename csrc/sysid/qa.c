#include "sysid/qa.h"

#include <math.h>
#include <stddef.h>

double cs_eps_si_update(int n, const double *y, const double *ybar, double *ymin, double *ymax, double eps) {
    double s = 0.0;
    for (int i = 0; i < n; i++) {
        if (y[i] < ymin[i]) ymin[i] = y[i];
        if (y[i] > ymax[i]) ymax[i] = y[i];
        s += fabs(y[i] - ybar[i]) / (ymax[i] - ymin[i] + eps);
    }
    return n > 0 ? s / n : 0.0;
}

void cs_eps_si_series(int K, int n, const double *Y, const double *Ybar, double eps, double *out, double *work) {
    double *ymin = work, *ymax = work + n;
    for (int i = 0; i < n; i++) { ymin[i] = INFINITY; ymax[i] = -INFINITY; }
    for (int k = 0; k < K; k++)
        out[k] = cs_eps_si_update(n, Y + (size_t)k * n, Ybar + (size_t)k * n, ymin, ymax, eps);
}

double cs_switch_factor(double t, double t_start, double t_switch) {
    return 0.5 * (tanh(-5.0 + (10.0 / t_switch) * (t - t_start)) + 1.0);
}
