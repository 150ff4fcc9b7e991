#include "coupling/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "linalg/dense.h"

int cs_network_init(cs_network *net, int nsub, cs_model **models, int nconn, const int *conn_in, const int *conn_out,
                    const double *conn_gain, const double *r, cs_err *err) {
    memset(net, 0, sizeof *net);
    net->nsub = nsub;
    net->models = models;
    net->xoff = calloc(nsub + 1, sizeof(int));
    net->uoff = calloc(nsub + 1, sizeof(int));
    net->yoff = calloc(nsub + 1, sizeof(int));
    if (!net->xoff || !net->uoff || !net->yoff) goto nomem;
    for (int i = 0; i < nsub; i++) {
        net->xoff[i + 1] = net->xoff[i] + models[i]->nx;
        net->uoff[i + 1] = net->uoff[i] + models[i]->nu;
        net->yoff[i + 1] = net->yoff[i] + models[i]->ny;
        net->any_feedthrough |= models[i]->feedthrough;
    }
    int nu = net->nu = net->uoff[nsub], ny = net->ny = net->yoff[nsub];
    net->nx = net->xoff[nsub];
    net->in_sub = calloc(nu + 1, sizeof(int));
    net->out_sub = calloc(ny + 1, sizeof(int));
    net->rowptr = calloc(nu + 1, sizeof(int));
    net->col = calloc(nconn + 1, sizeof(int));
    net->gain = calloc(nconn + 1, sizeof(double));
    net->r = calloc(nu + 1, sizeof(double));
    int maxnu = 1;
    for (int i = 0; i < nsub; i++) maxnu = models[i]->nu > maxnu ? models[i]->nu : maxnu;
    size_t nyy = (size_t)ny * ny;
    net->J = calloc(nyy + 1, sizeof(double));
    net->G = calloc((size_t)ny * (maxnu) + 1, sizeof(double));
    net->F = calloc((size_t)ny + 1, sizeof(double));
    net->ytmp = calloc((size_t)ny + 1, sizeof(double));
    net->work = calloc(nyy + 2 * (size_t)ny + (size_t)maxnu + 16, sizeof(double));
    net->ipiv = calloc((size_t)ny + 1, sizeof(int));
    if (!net->in_sub || !net->out_sub || !net->rowptr || !net->col || !net->gain || !net->r || !net->J || !net->G ||
        !net->F || !net->ytmp || !net->work || !net->ipiv)
        goto nomem;
    for (int i = 0; i < nsub; i++) {
        for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++) net->in_sub[a] = i;
        for (int j = net->yoff[i]; j < net->yoff[i + 1]; j++) net->out_sub[j] = i;
    }
    for (int k = 0; k < nconn; k++) {
        if (conn_in[k] < 0 || conn_in[k] >= nu || conn_out[k] < 0 || conn_out[k] >= ny) {
            cs_network_free(net);
            return cs_fail(err, CS_ERR_ARG, "connections: index out of range in connection %d", k);
        }
        net->rowptr[conn_in[k] + 1]++;
    }
    for (int a = 0; a < nu; a++) net->rowptr[a + 1] += net->rowptr[a];
    int *fill = calloc(nu + 1, sizeof(int));
    if (!fill) goto nomem;
    for (int k = 0; k < nconn; k++) {
        int a = conn_in[k], pos = net->rowptr[a] + fill[a]++;
        net->col[pos] = conn_out[k];
        net->gain[pos] = conn_gain[k];
    }
    free(fill);
    if (r) memcpy(net->r, r, sizeof(double) * nu);
    return CS_OK;
nomem:
    cs_network_free(net);
    return cs_fail(err, CS_ERR_NOMEM, "out of memory");
}

void cs_network_free(cs_network *net) {
    free(net->xoff); free(net->uoff); free(net->yoff); free(net->in_sub); free(net->out_sub);
    free(net->rowptr); free(net->col); free(net->gain); free(net->r);
    free(net->J); free(net->G); free(net->F); free(net->ytmp); free(net->work); free(net->ipiv);
    memset(net, 0, sizeof *net);
}

void cs_network_inputs(const cs_network *net, const double *y, double *u) {
    for (int a = 0; a < net->nu; a++) {
        double s = net->r[a];
        for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++) s += net->gain[k] * y[net->col[k]];
        u[a] = s;
    }
}

static int eval_outputs(cs_network *net, double t, const double *x, const double *u, double *y, cs_err *err) {
    for (int i = 0; i < net->nsub; i++)
        CS_TRY(cs_model_output(net->models[i], t, x + net->xoff[i], u + net->uoff[i], y + net->yoff[i], err));
    return CS_OK;
}

int cs_network_consistent(cs_network *net, double t, const double *x, const double *u_guess, double *y, double *u,
                          cs_err *err) {
    int ny = net->ny;
    if (!u_guess) memset(u, 0, sizeof(double) * net->nu);
    else if (u_guess != u) memcpy(u, u_guess, sizeof(double) * net->nu);
    CS_TRY(eval_outputs(net, t, x, u, y, err));
    cs_network_inputs(net, y, u);
    if (!net->any_feedthrough) return CS_OK; /* y does not depend on u: done */
    for (int it = 0; it < 50; it++) {
        /* F(y) = y - g(x, L y + r) */
        CS_TRY(eval_outputs(net, t, x, u, net->ytmp, err));
        double fn = 0.0, yn = 0.0;
        for (int j = 0; j < ny; j++) {
            net->F[j] = y[j] - net->ytmp[j];
            fn = fmax(fn, fabs(net->F[j]));
            yn = fmax(yn, fabs(y[j]));
        }
        if (!isfinite(fn))
            return cs_fail(err, CS_ERR_DIVERGED, "algebraic coupling loop: non-finite outputs at t = %.10g", t);
        if (fn <= 1e-13 * (1.0 + yn)) { memcpy(y, net->ytmp, sizeof(double) * ny); cs_network_inputs(net, y, u); return CS_OK; }
        /* J = I - G L, G = blockdiag(dg_i/du_i) */
        cs_eye(ny, net->J);
        for (int i = 0; i < net->nsub; i++) {
            cs_model *m = net->models[i];
            if (!m->feedthrough) continue;
            CS_TRY(cs_model_output_du(m, t, x + net->xoff[i], u + net->uoff[i], net->G, net->work, err));
            for (int la = 0; la < m->nu; la++) {
                int a = net->uoff[i] + la;
                for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++)
                    for (int li = 0; li < m->ny; li++)
                        net->J[(size_t)(net->yoff[i] + li) * ny + net->col[k]] -= net->G[(size_t)li * m->nu + la] * net->gain[k];
            }
        }
        int rc = cs_solve(ny, 1, net->J, net->F, net->work, net->ipiv, err);
        if (rc) { cs_err_prefix(err, "algebraic coupling loop at t = %.10g (ill-posed coupling, I - D L singular): ", t); return rc; }
        for (int j = 0; j < ny; j++) y[j] -= net->F[j];
        cs_network_inputs(net, y, u);
        net->newton_iterations++;
    }
    return cs_fail(err, CS_ERR_SOLVER, "algebraic coupling loop did not converge at t = %.10g", t);
}
