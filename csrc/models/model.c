#include "models/model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cs_model *cs_model_new_empty(int nx, int nu, int ny, const char *name) {
    cs_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->nx = nx; m->nu = nu; m->ny = ny;
    snprintf(m->name, sizeof m->name, "%s", name ? name : "S");
    return m;
}

void cs_model_free_empty(cs_model *m) { free(m); }

void cs_model_attach(cs_model *m, const cs_model_ops *ops, void *content) {
    m->ops = ops;
    m->content = content;
    if (ops->linear_data) ops->linear_data(content, &m->lin);
}

void cs_model_destroy(cs_model *m) {
    if (!m) return;
    if (m->ops && m->ops->destroy) m->ops->destroy(m->content);
    free(m);
}

int cs_model_callback_failed(cs_model *m, const char *what, double t, int rc, cs_err *err) {
    return cs_fail(err, CS_ERR_CALLBACK, "subsystem %s: %s failed at t = %.17g (code %d)%s%s", m->name, what, t, rc,
                   m->msg[0] ? ": " : "", m->msg);
}

int cs_model_output_dt(cs_model *m, double t, const double *x, const double *u, const double *udot, double *ydot,
                       double *work, cs_err *err) {
    if (m->ops->output_dt) {
        int rc = m->ops->output_dt(m->content, t, x, u, udot, ydot);
        return rc ? cs_model_callback_failed(m, "output derivative", t, rc, err) : CS_OK;
    }
    /* Difference quotient along (1, f, u'); the step is scaled to the state's rate of change. */
    double *f = work, *y1 = work + m->nx, *up = y1 + m->ny;
    CS_TRY(cs_model_rhs(m, t, x, u, f, err));
    CS_TRY(cs_model_output(m, t, x, u, ydot, err));
    double xs = 1e-300, fs = 1e-300;
    for (int i = 0; i < m->nx; i++) { xs = fmax(xs, fabs(x[i])); fs = fmax(fs, fabs(f[i])); }
    double d = sqrt(2.2e-16) * fmax(1e-8, fmin(xs / fs, 1.0 + fabs(t)));
    for (int i = 0; i < m->nx; i++) f[i] = x[i] + d * f[i];
    for (int j = 0; j < m->nu; j++) up[j] = u[j] + (udot ? d * udot[j] : 0.0);
    CS_TRY(cs_model_output(m, t + d, f, up, y1, err));
    for (int i = 0; i < m->ny; i++) ydot[i] = (y1[i] - ydot[i]) / d;
    return CS_OK;
}

int cs_model_output_du(cs_model *m, double t, const double *x, const double *u, double *G, double *work, cs_err *err) {
    if (m->lin.D) {
        memcpy(G, m->lin.D, sizeof(double) * m->ny * m->nu);
        return CS_OK;
    }
    if (!m->feedthrough) {
        memset(G, 0, sizeof(double) * m->ny * m->nu);
        return CS_OK;
    }
    double *up = work, *y0 = work + m->nu, *y1 = y0 + m->ny;
    memcpy(up, u, sizeof(double) * m->nu);
    CS_TRY(cs_model_output(m, t, x, u, y0, err));
    for (int j = 0; j < m->nu; j++) {
        double d = sqrt(2.2e-16) * fmax(1.0, fabs(u[j]));
        up[j] = u[j] + d;
        CS_TRY(cs_model_output(m, t, x, up, y1, err));
        up[j] = u[j];
        for (int i = 0; i < m->ny; i++) G[(size_t)i * m->nu + j] = (y1[i] - y0[i]) / d;
    }
    return CS_OK;
}

void cs_affine_rows(int m, int n, int k, const double *restrict P, const double *restrict v,
                    const double *restrict Q, const double *restrict w, double *restrict z) {
    for (int i = 0; i < m; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += P[i * n + j] * v[j];
        for (int j = 0; j < k; j++) s += Q[i * k + j] * w[j];
        z[i] = s;
    }
}
