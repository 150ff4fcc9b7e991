#include "schemes/acceleration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schemes/iterative.h"

struct cs_accel {
    int kind, max_iter, reuse, mcap;
    double omega, filter;
    long n, ncap;                 /* vector length of this window, allocated length */
    int k;                        /* iteration within the window */
    long window;
    double w_prev;                /* Aitken ω_{k-1} */
    double *r_prev, *f_prev, *r;  /* previous residual and F, current residual */
    /* IQN-ILS: column slots (ncap each), ordered newest first in idx[0..m-1] */
    double *V, *W, *Q, *R, *alpha, *qtr;
    long *cwin;
    int *idx, *tmp;
    int m;
};

int cs_accel_create(int kind, double omega, int max_iter, int reuse, double filter, cs_accel **out, cs_err *err) {
    *out = NULL;
    if (kind < CS_ACCEL_NONE || kind > CS_ACCEL_IQN_ILS) return cs_fail(err, CS_ERR_ARG, "acceleration: unknown kind %d", kind);
    if (!(omega > 0.0 && omega < 2.0)) return cs_fail(err, CS_ERR_ARG, "omega: must be in (0, 2), got %g", omega);
    if (max_iter < 1 || reuse < 0 || reuse > 100) return cs_fail(err, CS_ERR_ARG, "acceleration: bad max_iter/reuse");
    cs_accel *a = calloc(1, sizeof *a);
    if (!a) return cs_fail(err, CS_ERR_NOMEM, "acceleration: out of memory");
    a->kind = kind; a->omega = omega; a->max_iter = max_iter; a->reuse = reuse; a->filter = filter;
    a->mcap = kind == CS_ACCEL_IQN_ILS ? max_iter * (reuse + 1) + 1 : 0;
    if (a->mcap > 500) a->mcap = 500; /* the oldest columns go first beyond this */
    if (a->mcap > 0) {
        a->R = calloc((size_t)a->mcap * a->mcap, sizeof(double));
        a->alpha = calloc((size_t)a->mcap, sizeof(double));
        a->qtr = calloc((size_t)a->mcap, sizeof(double));
        a->cwin = calloc((size_t)a->mcap, sizeof(long));
        a->idx = calloc((size_t)a->mcap, sizeof(int));
        a->tmp = calloc((size_t)a->mcap, sizeof(int));
        if (!a->R || !a->alpha || !a->qtr || !a->cwin || !a->idx || !a->tmp) {
            cs_accel_destroy(a);
            return cs_fail(err, CS_ERR_NOMEM, "acceleration: out of memory");
        }
    }
    *out = a;
    return CS_OK;
}

void cs_accel_destroy(cs_accel *a) {
    if (!a) return;
    free(a->r_prev); free(a->f_prev); free(a->r);
    free(a->V); free(a->W); free(a->Q);
    free(a->R); free(a->alpha); free(a->qtr); free(a->cwin); free(a->idx); free(a->tmp);
    free(a);
}

int cs_accel_columns(const cs_accel *a) { return a->m; }

int cs_accel_begin_window(cs_accel *a, long n, cs_err *err) {
    if (n != a->n) a->m = 0; /* columns of another length cannot be reused */
    if (n > a->ncap) {
        long c = n > 2 * a->ncap ? n : 2 * a->ncap;
        size_t cc = (size_t)c;
        free(a->r_prev); free(a->f_prev); free(a->r); free(a->V); free(a->W); free(a->Q);
        a->r_prev = malloc(sizeof(double) * cc);
        a->f_prev = malloc(sizeof(double) * cc);
        a->r = malloc(sizeof(double) * cc);
        a->V = a->mcap ? malloc(sizeof(double) * cc * a->mcap) : NULL;
        a->W = a->mcap ? malloc(sizeof(double) * cc * a->mcap) : NULL;
        a->Q = a->mcap ? malloc(sizeof(double) * cc * a->mcap) : NULL;
        a->ncap = (a->r_prev && a->f_prev && a->r && (!a->mcap || (a->V && a->W && a->Q))) ? c : 0;
        if (!a->ncap) { a->n = 0; a->m = 0; return cs_fail(err, CS_ERR_NOMEM, "acceleration: out of memory"); }
        a->m = 0;
    }
    a->n = n;
    a->k = 0;
    a->window++;
    /* drop the columns of windows older than `reuse` */
    int m = 0;
    for (int q = 0; q < a->m; q++)
        if (a->window - a->cwin[a->idx[q]] <= a->reuse) a->idx[m++] = a->idx[q];
    a->m = m;
    return CS_OK;
}

void cs_accel_end_window(cs_accel *a) { (void)a; }

/* IQN-ILS least squares by modified Gram-Schmidt with the QR filter: drops columns (from idx) whose new diagonal
 * |R_ii| < filter |v_i|, then alpha = -R^{-1} Q^T r. Returns the number of columns used. */
static int iqn_solve(cs_accel *a, const double *r) {
    const long n = a->n;
    const size_t nc = (size_t)a->ncap;
    int m = a->m;
    for (;;) {
        int dropped = -1;
        for (int q = 0; q < m && dropped < 0; q++) {
            const double *v = a->V + nc * a->idx[q];
            double *qq = a->Q + nc * q;
            memcpy(qq, v, sizeof(double) * n);
            double nv = 0.0;
            for (long i = 0; i < n; i++) nv += v[i] * v[i];
            nv = sqrt(nv);
            for (int p = 0; p < q; p++) {
                const double *qp = a->Q + nc * p;
                double d = 0.0;
                for (long i = 0; i < n; i++) d += qp[i] * qq[i];
                a->R[p * a->mcap + q] = d;
                for (long i = 0; i < n; i++) qq[i] -= d * qp[i];
            }
            double rr = 0.0;
            for (long i = 0; i < n; i++) rr += qq[i] * qq[i];
            rr = sqrt(rr);
            if (!(rr > a->filter * nv) || !(rr > 0.0)) { dropped = q; break; }
            a->R[q * a->mcap + q] = rr;
            for (long i = 0; i < n; i++) qq[i] /= rr;
        }
        if (dropped < 0) break;
        for (int q = dropped; q + 1 < m; q++) a->idx[q] = a->idx[q + 1];
        m--;
    }
    a->m = m;
    for (int q = 0; q < m; q++) {
        const double *qq = a->Q + nc * q;
        double d = 0.0;
        for (long i = 0; i < n; i++) d += qq[i] * r[i];
        a->qtr[q] = -d;
    }
    for (int q = m - 1; q >= 0; q--) {
        double s = a->qtr[q];
        for (int p = q + 1; p < m; p++) s -= a->R[q * a->mcap + p] * a->alpha[p];
        a->alpha[q] = s / a->R[q * a->mcap + q];
    }
    return m;
}

int cs_accel_update(cs_accel *a, const double *x, const double *fx, double *xnew, cs_err *err) {
    const long n = a->n;
    const size_t nc = (size_t)a->ncap;
    double *r = a->r;
    for (long i = 0; i < n; i++) r[i] = fx[i] - x[i];
    if (a->kind == CS_ACCEL_NONE) {
        for (long i = 0; i < n; i++) xnew[i] = x[i] + a->omega * r[i];
    } else if (a->kind == CS_ACCEL_AITKEN) {
        double w = a->omega;
        if (a->k > 0) {
            double num = 0.0, den = 0.0;
            for (long i = 0; i < n; i++) {
                double d = r[i] - a->r_prev[i];
                num += a->r_prev[i] * d;
                den += d * d;
            }
            w = den > 0.0 ? -a->w_prev * num / den : a->w_prev;
        }
        a->w_prev = w;
        for (long i = 0; i < n; i++) xnew[i] = x[i] + w * r[i];
    } else {
        if (a->k > 0) { /* new column Δr = r^k - r^{k-1}, ΔF = F^k - F^{k-1} (slot of the oldest when full) */
            int slot;
            if (a->m < a->mcap) {
                /* a free slot: one not in idx */
                unsigned char used[512];
                int mc = a->mcap < 512 ? a->mcap : 512;
                memset(used, 0, (size_t)mc);
                for (int q = 0; q < a->m; q++) if (a->idx[q] < mc) used[a->idx[q]] = 1;
                slot = 0;
                while (slot < mc && used[slot]) slot++;
                if (slot >= mc) { slot = a->idx[a->m - 1]; a->m--; }
            } else {
                slot = a->idx[a->m - 1];
                a->m--;
            }
            double *v = a->V + nc * slot, *w = a->W + nc * slot;
            for (long i = 0; i < n; i++) { v[i] = r[i] - a->r_prev[i]; w[i] = fx[i] - a->f_prev[i]; }
            a->cwin[slot] = a->window;
            for (int q = a->m; q > 0; q--) a->idx[q] = a->idx[q - 1];
            a->idx[0] = slot;
            a->m++;
        }
        int m = a->m > 0 ? iqn_solve(a, r) : 0;
        if (m == 0) {
            for (long i = 0; i < n; i++) xnew[i] = x[i] + a->omega * r[i];
        } else {
            memcpy(xnew, fx, sizeof(double) * n);
            for (int q = 0; q < m; q++) {
                const double *w = a->W + nc * a->idx[q];
                double al = a->alpha[q];
                for (long i = 0; i < n; i++) xnew[i] += al * w[i];
            }
        }
    }
    for (long i = 0; i < n; i++) if (!isfinite(xnew[i]))
        return cs_fail(err, CS_ERR_DIVERGED, "waveform relaxation: the accelerated iterate is not finite");
    memcpy(a->r_prev, r, sizeof(double) * n);
    memcpy(a->f_prev, fx, sizeof(double) * n);
    a->k++;
    return CS_OK;
}
