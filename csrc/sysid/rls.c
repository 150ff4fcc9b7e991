#include "sysid/rls.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "interrupt.h"

struct cs_rls {
    int ny, nu, na, nb, np;
    double lambda, trace_max;
    double *p;      /* ny x np */
    double *P;      /* ny x np x np */
    double *yh;     /* ny x na: yh[i na + l] = y_i^{k-1-l} (newest first) */
    double *uh;     /* nu x nb: uh[j nb + l] = w_j^{k-1-l} (newest first) */
    double *phi;    /* np scratch */
    double *Pphi;   /* np scratch */
    long ny_seen, nu_seen;
};

void cs_rls_destroy(cs_rls *r) {
    if (!r) return;
    free(r->p); free(r->P); free(r->yh); free(r->uh); free(r->phi); free(r->Pphi);
    free(r);
}

int cs_rls_nparams(const cs_rls *r) { return r->np; }
void cs_rls_dims(const cs_rls *r, int *ny, int *nu, int *na, int *nb) { *ny = r->ny; *nu = r->nu; *na = r->na; *nb = r->nb; }
int cs_rls_samples(const cs_rls *r) { return (int)(r->ny_seen > 2147483647L ? 2147483647L : r->ny_seen); }

void cs_rls_reset(cs_rls *r, double P0) {
    const int np = r->np;
    memset(r->P, 0, sizeof(double) * (size_t)r->ny * np * np);
    for (int i = 0; i < r->ny; i++)
        for (int k = 0; k < np; k++) r->P[(size_t)i * np * np + (size_t)k * np + k] = P0;
    memset(r->yh, 0, sizeof(double) * (size_t)(r->ny * r->na + 1));
    memset(r->uh, 0, sizeof(double) * (size_t)(r->nu * r->nb + 1));
    r->ny_seen = r->nu_seen = 0;
}

int cs_rls_create(int ny, int nu, int na, int nb, double lambda, double P0, double trace_max, cs_rls **out,
                  cs_err *err) {
    *out = NULL;
    if (ny < 1 || nu < 1) return cs_fail(err, CS_ERR_ARG, "RLS needs ny >= 1 and nu >= 1 (got %d, %d)", ny, nu);
    if (na < 0 || nb < 0 || (na == 0 && nb == 0))
        return cs_fail(err, CS_ERR_ARG, "RLS orders: need na >= 0, nb >= 0, na + nb >= 1 (got %d, %d)", na, nb);
    /* sizes in 64-bit arithmetic: nu nb < 2^62, ny np^2 < 2^31 2^24 once np is capped; no int overflow */
    const long long npl = (long long)na + (long long)nu * (long long)nb;
    if (npl > CS_RLS_MAX_PARAMS)
        return cs_fail(err, CS_ERR_ARG, "RLS orders: n_params = n_a + n_u n_b = %lld exceeds the cap of %d "
                       "(n_a = %d, n_u = %d, n_b = %d)", npl, CS_RLS_MAX_PARAMS, na, nu, nb);
    if ((long long)ny * npl * npl > (long long)CS_RLS_MAX_COV)
        return cs_fail(err, CS_ERR_ARG, "RLS sizes: n_y n_params^2 = %lld covariance entries exceed the cap of %ld "
                       "(n_y = %d, n_params = %lld)", (long long)ny * npl * npl, (long)CS_RLS_MAX_COV, ny, npl);
    if (!(lambda > 0.0 && lambda <= 1.0)) return cs_fail(err, CS_ERR_ARG, "lam: must be in (0, 1], got %g", lambda);
    if (!(P0 > 0.0 && isfinite(P0))) return cs_fail(err, CS_ERR_ARG, "P0: must be finite and > 0, got %g", P0);
    cs_rls *r = calloc(1, sizeof *r);
    if (!r) return cs_fail(err, CS_ERR_NOMEM, "RLS: out of memory");
    r->ny = ny; r->nu = nu; r->na = na; r->nb = nb; r->np = na + nu * nb;
    r->lambda = lambda;
    r->trace_max = (trace_max > 0.0 && isfinite(trace_max)) ? trace_max : 0.0;
    const int np = r->np;
    r->p = calloc((size_t)ny * np, sizeof(double));
    r->P = calloc((size_t)ny * np * np, sizeof(double));
    r->yh = calloc((size_t)ny * na + 1, sizeof(double));
    r->uh = calloc((size_t)nu * nb + 1, sizeof(double));
    r->phi = calloc((size_t)np, sizeof(double));
    r->Pphi = calloc((size_t)np, sizeof(double));
    if (!r->p || !r->P || !r->yh || !r->uh || !r->phi || !r->Pphi) {
        cs_rls_destroy(r);
        return cs_fail(err, CS_ERR_NOMEM, "RLS: out of memory");
    }
    cs_rls_reset(r, P0);
    *out = r;
    return CS_OK;
}

/* phi_i = [y_i^{k-1} .. y_i^{k-na}, w_1^{k-1} .. w_1^{k-nb}, .., w_nu^{k-1} .. w_nu^{k-nb}] */
static void build_phi(const cs_rls *r, int i, const double *uh, double *phi) {
    memcpy(phi, r->yh + (size_t)i * r->na, sizeof(double) * r->na);
    memcpy(phi + r->na, uh, sizeof(double) * (size_t)r->nu * r->nb);
}

static void push_u(cs_rls *r, double *uh, const double *u) {
    const int nb = r->nb;
    if (nb == 0) return;
    for (int j = 0; j < r->nu; j++) {
        double *h = uh + (size_t)j * nb;
        memmove(h + 1, h, sizeof(double) * (nb - 1));
        h[0] = u[j];
    }
}

int cs_rls_update(cs_rls *r, const double *u, const double *y, double *e, cs_err *err) {
    const int np = r->np, na = r->na;
    push_u(r, r->uh, u);
    r->nu_seen++;
    const int ready = r->ny_seen >= na && r->nu_seen >= r->nb;
    const double lam = r->lambda, ilam = 1.0 / lam;
    for (int i = 0; i < r->ny; i++) {
        double *p = r->p + (size_t)i * np, *P = r->P + (size_t)i * np * np;
        double *phi = r->phi, *Pphi = r->Pphi;
        if (!ready) { if (e) e[i] = 0.0; continue; }
        build_phi(r, i, r->uh, phi);
        double den = lam, yhat = 0.0;
        for (int a = 0; a < np; a++) {
            const double *Pa = P + (size_t)a * np;
            double s = 0.0;
            for (int b = 0; b < np; b++) s += Pa[b] * phi[b];
            Pphi[a] = s;
            den += phi[a] * s;
            yhat += phi[a] * p[a];
        }
        if (!(den > 0.0) || !isfinite(den))
            return cs_fail(err, CS_ERR_DIVERGED, "RLS covariance update of output %d failed (lambda + phi^T P phi = %g); "
                           "reset the covariance or bound its trace", i, den);
        const double res = y[i] - yhat, iden = 1.0 / den;
        if (e) e[i] = res;
        for (int a = 0; a < np; a++) p[a] += Pphi[a] * iden * res;
        /* P = (P - g phi^T P)/lambda with g phi^T P = Pphi Pphi^T / den (P symmetric): symmetric by construction. */
        double tr = 0.0;
        for (int a = 0; a < np; a++) {
            const double ga = Pphi[a] * iden;
            for (int b = a; b < np; b++) {
                double v = (P[(size_t)a * np + b] - ga * Pphi[b]) * ilam;
                P[(size_t)a * np + b] = v;
                P[(size_t)b * np + a] = v;
            }
            tr += P[(size_t)a * np + a];
        }
        if (r->trace_max > 0.0 && tr > r->trace_max) {
            const double s = r->trace_max / tr;
            for (int a = 0; a < np * np; a++) P[a] *= s;
        }
    }
    if (na > 0) {
        for (int i = 0; i < r->ny; i++) {
            double *h = r->yh + (size_t)i * na;
            memmove(h + 1, h, sizeof(double) * (na - 1));
            h[0] = y[i];
        }
    }
    r->ny_seen++;
    return CS_OK;
}

int cs_rls_update_many(cs_rls *r, int N, const double *U, const double *Y, double *E, cs_err *err) {
    for (int k = 0; k < N; k++) {
        if (!(k & 1023) && cs_interrupted()) return cs_interrupt_fail(err, -1.0);   /* Ctrl-C every 1024 samples */
        int rc = cs_rls_update(r, U + (size_t)k * r->nu, Y + (size_t)k * r->ny, E ? E + (size_t)k * r->ny : NULL, err);
        if (rc) { cs_err_prefix(err, "sample %d: ", k); return rc; }
    }
    return CS_OK;
}

void cs_rls_predict(const cs_rls *r, const double *u_next, double *yhat) {
    const int np = r->np, na = r->na, nb = r->nb;
    for (int i = 0; i < r->ny; i++) {
        const double *p = r->p + (size_t)i * np;
        double s = 0.0;
        for (int l = 0; l < na; l++) s += p[l] * r->yh[(size_t)i * na + l];
        for (int j = 0; j < r->nu; j++) {
            const double *h = r->uh + (size_t)j * nb, *bj = p + na + (size_t)j * nb;
            if (nb > 0) s += bj[0] * u_next[j];
            for (int l = 1; l < nb; l++) s += bj[l] * h[l - 1];   /* the stored inputs shift one place back */
        }
        yhat[i] = s;
    }
}

void cs_rls_get_params(const cs_rls *r, double *a, double *b) {
    const int np = r->np, na = r->na, nb = r->nb;
    for (int i = 0; i < r->ny; i++) {
        if (a) memcpy(a + (size_t)i * na, r->p + (size_t)i * np, sizeof(double) * na);
        if (b) memcpy(b + (size_t)i * r->nu * nb, r->p + (size_t)i * np + na, sizeof(double) * (size_t)r->nu * nb);
    }
}

void cs_rls_set_params(cs_rls *r, const double *a, const double *b) {
    const int np = r->np, na = r->na, nb = r->nb;
    for (int i = 0; i < r->ny; i++) {
        if (a) memcpy(r->p + (size_t)i * np, a + (size_t)i * na, sizeof(double) * na);
        if (b) memcpy(r->p + (size_t)i * np + na, b + (size_t)i * r->nu * nb, sizeof(double) * (size_t)r->nu * nb);
    }
}

void cs_rls_get_cov(const cs_rls *r, double *P) { memcpy(P, r->P, sizeof(double) * (size_t)r->ny * r->np * r->np); }
void cs_rls_set_cov(cs_rls *r, const double *P) { memcpy(r->P, P, sizeof(double) * (size_t)r->ny * r->np * r->np); }

int cs_rls_state_size(const cs_rls *r) {
    return r->ny * r->np + r->ny * r->np * r->np + r->ny * r->na + r->nu * r->nb + 2;
}

void cs_rls_get_state(const cs_rls *r, double *s) {
    size_t o = 0, n;
    n = (size_t)r->ny * r->np; memcpy(s + o, r->p, sizeof(double) * n); o += n;
    n = (size_t)r->ny * r->np * r->np; memcpy(s + o, r->P, sizeof(double) * n); o += n;
    n = (size_t)r->ny * r->na; memcpy(s + o, r->yh, sizeof(double) * n); o += n;
    n = (size_t)r->nu * r->nb; memcpy(s + o, r->uh, sizeof(double) * n); o += n;
    s[o++] = (double)r->ny_seen;
    s[o++] = (double)r->nu_seen;
}

int cs_rls_set_state(cs_rls *r, const double *s, cs_err *err) {
    const int ns = cs_rls_state_size(r);
    for (int k = 0; k < ns; k++)
        if (!isfinite(s[k])) return cs_fail(err, CS_ERR_ARG, "state: contains NaN or infinite values");
    if (s[ns - 2] < 0 || s[ns - 1] < 0 || s[ns - 2] != floor(s[ns - 2]) || s[ns - 1] != floor(s[ns - 1]))
        return cs_fail(err, CS_ERR_ARG, "state: sample counters must be non-negative integers");
    if (s[ns - 2] > 9007199254740992.0 || s[ns - 1] > 9007199254740992.0)   /* 2^53: exact in a double, fits a 64-bit long */
        return cs_fail(err, CS_ERR_ARG, "state: sample counters must be <= 2^53");
    size_t o = 0, n;
    n = (size_t)r->ny * r->np; memcpy(r->p, s + o, sizeof(double) * n); o += n;
    n = (size_t)r->ny * r->np * r->np; memcpy(r->P, s + o, sizeof(double) * n); o += n;
    n = (size_t)r->ny * r->na; memcpy(r->yh, s + o, sizeof(double) * n); o += n;
    n = (size_t)r->nu * r->nb; memcpy(r->uh, s + o, sizeof(double) * n); o += n;
    r->ny_seen = (long)s[o++];
    r->nu_seen = (long)s[o++];
    return CS_OK;
}
