#include "units/unit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

cs_unit *cs_unit_new_empty(const cs_unit_ops *ops, int nx, int nu, int ny, const char *name, cs_err *err) {
    if (nx < 0 || nu < 0 || ny < 0) { cs_fail(err, CS_ERR_ARG, "unit: negative size"); return NULL; }
    cs_unit *u = calloc(1, sizeof *u);
    if (!u) { cs_fail(err, CS_ERR_NOMEM, "out of memory"); return NULL; }
    u->ops = ops;
    u->nx = nx; u->nu = nu; u->ny = ny;
    snprintf(u->name, sizeof u->name, "%s", name ? name : "S");
    return u;
}

void cs_unit_free_empty(cs_unit *u) { free(u); }

void cs_unit_destroy(cs_unit *u) {
    if (u && u->ops && u->ops->destroy) u->ops->destroy(u);
    cs_unit_free_empty(u);
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

int cs_unit_do_step_timed(cs_unit *u, double T, double H, const cs_input *in, int restart, cs_err *err) {
    double t0 = now();
    int rc = u->ops->do_step(u, T, H, in, restart, err);
    u->wall += now() - t0;
    return rc;
}

int cs_unit_trace_integral(cs_unit *u, double T1, double H, double *yint) {
    cs_trace tr = {0};
    if (!u || cs_unit_trace(u, &tr) != CS_OK || tr.n < 2 || !tr.t || !tr.y ||
        !(fabs(tr.t[tr.n - 1] - T1) <= 1e-9 * H) || !(fabs(tr.t[0] - (T1 - H)) <= 1e-9 * H))
        return 0;
    const int ny = u->ny;
    for (int j = 0; j < ny; j++) {
        double s = 0.0;
        for (long q = 1; q < tr.n; q++)
            s += 0.5 * (tr.t[q] - tr.t[q - 1]) * (tr.y[(size_t)q * ny + j] + tr.y[(size_t)(q - 1) * ny + j]);
        yint[j] = s;
    }
    return 1;
}

int cs_unit_output_jacobian(cs_unit *u, double t, const double *uin, double *G, double *work, cs_err *err) {
    if (u->ops->output_jacobian) return u->ops->output_jacobian(u, t, uin, G, err);
    if (!u->feedthrough) {
        memset(G, 0, sizeof(double) * (size_t)u->ny * u->nu);
        return CS_OK;
    }
    double *up = work, *y0 = work + u->nu, *y1 = y0 + u->ny;
    memcpy(up, uin, sizeof(double) * u->nu);
    CS_TRY(cs_unit_get_outputs(u, t, uin, y0, err));
    for (int j = 0; j < u->nu; j++) {
        double d = sqrt(2.2e-16) * fmax(1.0, fabs(uin[j]));
        up[j] = uin[j] + d;
        CS_TRY(cs_unit_get_outputs(u, t, up, y1, err));
        up[j] = uin[j];
        for (int i = 0; i < u->ny; i++) G[(size_t)i * u->nu + j] = (y1[i] - y0[i]) / d;
    }
    return CS_OK;
}

void cs_unit_get_stats(const cs_unit *u, cs_unit_stats *s) {
    memset(s, 0, sizeof *s);
    if (u->ops->get_stats) u->ops->get_stats(u, s);
    s->wall = u->wall;
}
