#include "network/network.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <suitesparse/klu.h>

/* J = I - G L in compressed columns for KLU. Every contribution -G_i[li][la] gain[k] of a feed-through unit i lands
 * at a fixed position of Ax, computed once (pos, in the loop order of assemble()); diag[j] is the position of J[j][j]. */
struct cs_network_klu {
    int n, nnz;
    int *Ap, *Ai;
    double *Ax;
    int *pos, *diag;
    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
    int factored_const;     /* J constant and factored: skip assembly */
};

static void klu_free_all(cs_network_klu *k) {
    if (!k) return;
    if (k->num) klu_free_numeric(&k->num, &k->common);
    if (k->sym) klu_free_symbolic(&k->sym, &k->common);
    free(k->Ap); free(k->Ai); free(k->Ax); free(k->pos); free(k->diag);
    free(k);
}

typedef struct entry { int col, row, id; } entry;

static int entry_cmp(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

/* Sparsity pattern of J and the position map; symbolic analysis once. */
static int klu_setup(cs_network *net, cs_err *err) {
    int ny = net->ny;
    long ncontrib = 0;
    for (int i = 0; i < net->nsub; i++) {
        if (!net->feedthrough[i]) continue;
        long nyi = net->yoff[i + 1] - net->yoff[i];
        ncontrib += nyi * (net->rowptr[net->uoff[i + 1]] - net->rowptr[net->uoff[i]]);
    }
    if (ncontrib > 0x3fffffffL) return cs_fail(err, CS_ERR_ARG, "connections: coupling loop too large");
    long ne = ncontrib + ny;
    entry *e = malloc(sizeof(entry) * (size_t)(ne + 1));
    cs_network_klu *k = calloc(1, sizeof *k);
    if (!e || !k) { free(e); free(k); return cs_fail(err, CS_ERR_NOMEM, "network: out of memory"); }
    long q = 0;
    for (int j = 0; j < ny; j++, q++) { e[q].col = j; e[q].row = j; e[q].id = (int)q; }
    for (int i = 0; i < net->nsub; i++) {
        if (!net->feedthrough[i]) continue;
        for (int row = net->yoff[i]; row < net->yoff[i + 1]; row++)
            for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++)
                for (int c = net->rowptr[a]; c < net->rowptr[a + 1]; c++, q++) {
                    e[q].col = net->col[c]; e[q].row = row; e[q].id = (int)q;
                }
    }
    qsort(e, (size_t)ne, sizeof *e, entry_cmp);
    k->n = ny;
    k->Ap = calloc((size_t)ny + 1, sizeof(int));
    k->Ai = malloc(sizeof(int) * (size_t)(ne + 1));
    k->Ax = malloc(sizeof(double) * (size_t)(ne + 1));
    k->pos = malloc(sizeof(int) * (size_t)(ne + 1));
    k->diag = malloc(sizeof(int) * (size_t)(ny + 1));
    if (!k->Ap || !k->Ai || !k->Ax || !k->pos || !k->diag) {
        free(e); klu_free_all(k);
        return cs_fail(err, CS_ERR_NOMEM, "network: out of memory");
    }
    int nnz = 0;
    for (long p = 0; p < ne; p++) {
        if (p == 0 || e[p].col != e[p - 1].col || e[p].row != e[p - 1].row) {
            k->Ai[nnz] = e[p].row;
            k->Ap[e[p].col + 1]++;
            nnz++;
        }
        k->pos[e[p].id] = nnz - 1;
    }
    for (int j = 0; j < ny; j++) { k->Ap[j + 1] += k->Ap[j]; k->diag[j] = k->pos[j]; }
    k->nnz = nnz;
    free(e);
    klu_defaults(&k->common);
    k->sym = klu_analyze(ny, k->Ap, k->Ai, &k->common);
    if (!k->sym) {
        klu_free_all(k);
        return cs_fail(err, CS_ERR_NOMEM, "network: sparse analysis of the coupling loop failed");
    }
    net->klu = k;
    return CS_OK;
}

/* The feed-through units in an order where every one comes after the feed-through units it reads (Kahn's
 * algorithm on the graph j -> i, "an input of i reads an output of j", both feed-through). Sets ft_order when the
 * graph has no cycle (then the coupling conditions have no algebraic loop); leaves it NULL otherwise. -1: no memory. */
static int feedthrough_order(cs_network *net) {
    const int n = net->nsub;
    int *indeg = calloc((size_t)n, sizeof(int)), *order = malloc(sizeof(int) * (size_t)n), nft = 0, head = 0;
    if (!indeg || !order) { free(indeg); free(order); return -1; }
    for (int i = 0; i < n; i++) {
        if (!net->feedthrough[i]) continue;
        nft++;
        for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++)
            for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++)
                if (net->gain[k] != 0.0 && net->feedthrough[net->out_sub[net->col[k]]]) indeg[i]++;
    }
    int m = 0;
    for (int i = 0; i < n; i++)
        if (net->feedthrough[i] && indeg[i] == 0) order[m++] = i;
    while (head < m) {
        const int j = order[head++];
        for (int i = 0; i < n; i++) {      /* units reading j (O(n * fan-in): once, at set-up) */
            if (!net->feedthrough[i] || indeg[i] == 0) continue;
            for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++)
                for (int k = net->rowptr[a]; k < net->rowptr[a + 1]; k++)
                    if (net->gain[k] != 0.0 && net->out_sub[net->col[k]] == j && --indeg[i] == 0) order[m++] = i;
        }
    }
    free(indeg);
    if (m == nft) { net->ft_order = order; net->nft = nft; }
    else free(order);
    return 0;
}

int cs_network_init(cs_network *net, int nsub, const int *nu, const int *ny, const int *feedthrough,
                    const int *linear, int nconn, const int *conn_in, const int *conn_out, const double *conn_gain,
                    const double *r, cs_err *err) {
    memset(net, 0, sizeof *net);
    if (nsub < 1) return cs_fail(err, CS_ERR_ARG, "system: need at least one unit");
    if (nconn < 0) return cs_fail(err, CS_ERR_ARG, "connections: negative count");
    net->nsub = nsub;
    net->uoff = calloc((size_t)nsub + 1, sizeof(int));
    net->yoff = calloc((size_t)nsub + 1, sizeof(int));
    net->feedthrough = calloc((size_t)nsub, 1);
    net->linear = calloc((size_t)nsub, 1);
    if (!net->uoff || !net->yoff || !net->feedthrough || !net->linear) goto nomem;
    int maxblk = 1;
    for (int i = 0; i < nsub; i++) {
        if (nu[i] < 0 || ny[i] < 0) { cs_network_free(net); return cs_fail(err, CS_ERR_ARG, "unit %d: negative size", i); }
        net->uoff[i + 1] = net->uoff[i] + nu[i];
        net->yoff[i + 1] = net->yoff[i] + ny[i];
        net->feedthrough[i] = feedthrough[i] != 0 && nu[i] > 0 && ny[i] > 0;
        net->linear[i] = linear ? linear[i] != 0 : 0;
        net->any_feedthrough |= net->feedthrough[i];
        if (nu[i] * ny[i] > maxblk) maxblk = nu[i] * ny[i];
    }
    int NU = net->nu = net->uoff[nsub], NY = net->ny = net->yoff[nsub];
    net->in_sub = calloc((size_t)NU + 1, sizeof(int));
    net->out_sub = calloc((size_t)NY + 1, sizeof(int));
    net->rowptr = calloc((size_t)NU + 1, sizeof(int));
    net->col = calloc((size_t)nconn + 1, sizeof(int));
    net->gain = calloc((size_t)nconn + 1, sizeof(double));
    net->r = calloc((size_t)NU + 1, sizeof(double));
    net->F = calloc((size_t)NY + 1, sizeof(double));
    net->ytmp = calloc((size_t)NY + 1, sizeof(double));
    net->G = calloc((size_t)maxblk + 1, sizeof(double));
    if (!net->in_sub || !net->out_sub || !net->rowptr || !net->col || !net->gain || !net->r || !net->F || !net->ytmp ||
        !net->G)
        goto nomem;
    for (int i = 0; i < nsub; i++) {
        for (int a = net->uoff[i]; a < net->uoff[i + 1]; a++) net->in_sub[a] = i;
        for (int j = net->yoff[i]; j < net->yoff[i + 1]; j++) net->out_sub[j] = i;
    }
    for (int k = 0; k < nconn; k++) {
        if (conn_in[k] < 0 || conn_in[k] >= NU || conn_out[k] < 0 || conn_out[k] >= NY) {
            cs_network_free(net);
            return cs_fail(err, CS_ERR_ARG, "connections: index out of range in connection %d", k);
        }
        if (!isfinite(conn_gain[k])) {
            cs_network_free(net);
            return cs_fail(err, CS_ERR_ARG, "connections: gain of connection %d is not finite", k);
        }
        net->rowptr[conn_in[k] + 1]++;
    }
    for (int a = 0; a < NU; a++) net->rowptr[a + 1] += net->rowptr[a];
    int *fill = calloc((size_t)NU + 1, sizeof(int));
    if (!fill) goto nomem;
    for (int k = 0; k < nconn; k++) {
        int a = conn_in[k], p = net->rowptr[a] + fill[a]++;
        net->col[p] = conn_out[k];
        net->gain[p] = conn_gain[k];
    }
    free(fill);
    if (r) memcpy(net->r, r, sizeof(double) * NU);
    if (net->any_feedthrough && feedthrough_order(net) < 0) goto nomem;
    if (net->any_feedthrough && !net->ft_order) {
        int rc = klu_setup(net, err);
        if (rc) { cs_network_free(net); return rc; }
    }
    return CS_OK;
nomem:
    cs_network_free(net);
    return cs_fail(err, CS_ERR_NOMEM, "network: out of memory");
}

void cs_network_free(cs_network *net) {
    free(net->ft_order);
    free(net->uoff); free(net->yoff); free(net->in_sub); free(net->out_sub); free(net->feedthrough);
    free(net->linear); free(net->rowptr); free(net->col); free(net->gain); free(net->r);
    free(net->F); free(net->ytmp); free(net->G);
    klu_free_all(net->klu);
    memset(net, 0, sizeof *net);
}

/* Ax <- I - G L at the current inputs; returns whether every feed-through unit is linear. */
static int assemble(cs_network *net, const cs_outputs *g, double t, const double *u, cs_err *err, int *rc) {
    cs_network_klu *k = net->klu;
    memset(k->Ax, 0, sizeof(double) * (size_t)k->nnz);
    for (int j = 0; j < net->ny; j++) k->Ax[k->diag[j]] = 1.0;
    int q = net->ny, all_linear = 1;
    for (int i = 0; i < net->nsub; i++) {
        if (!net->feedthrough[i]) continue;
        all_linear &= net->linear[i];
        int nui = net->uoff[i + 1] - net->uoff[i];
        if ((*rc = g->jacobian(g->ctx, i, t, u + net->uoff[i], net->G, err))) return 0;
        for (int li = 0; li < net->yoff[i + 1] - net->yoff[i]; li++)
            for (int la = 0; la < nui; la++) {
                int a = net->uoff[i] + la;
                double gij = net->G[(size_t)li * nui + la];
                for (int c = net->rowptr[a]; c < net->rowptr[a + 1]; c++, q++) k->Ax[k->pos[q]] -= gij * net->gain[c];
            }
    }
    return all_linear;
}

static int factor(cs_network *net, double t, cs_err *err) {
    cs_network_klu *k = net->klu;
    if (k->num && klu_refactor(k->Ap, k->Ai, k->Ax, k->sym, k->num, &k->common) && k->common.status == KLU_OK) {
        /* the pivot order of the first factorisation is reused; check it still suits (rcond is O(n)) */
        if (klu_rcond(k->sym, k->num, &k->common) && k->common.rcond > 1e-12) return CS_OK;
    }
    if (k->num) klu_free_numeric(&k->num, &k->common);
    k->num = klu_factor(k->Ap, k->Ai, k->Ax, k->sym, &k->common);
    if (!k->num || k->common.status != KLU_OK) {
        if (k->num) klu_free_numeric(&k->num, &k->common);
        if (k->common.status == KLU_OUT_OF_MEMORY) return cs_fail(err, CS_ERR_NOMEM, "network: out of memory");
        /* a failure of the run's algebraic solver (SolverError with the partial result), not of a linalg call */
        return cs_fail(err, CS_ERR_SOLVER, "algebraic coupling loop at t = %.10g: I - D L is singular (ill-posed "
                                           "coupling)", t);
    }
    return CS_OK;
}

int cs_network_consistent(cs_network *net, const cs_outputs *g, double t, const double *u_guess, double *y,
                          double *u, cs_err *err) {
    int ny = net->ny;
    const int *restrict uoff = net->uoff, *restrict yoff = net->yoff;
    if (net->ft_order) {
        /* no algebraic loop: units without feed-through first (y = g(x), with the guess as their input), then each
         * feed-through unit in order, its inputs final once the units it reads are evaluated */
        const double *ug = u_guess ? u_guess : u;
        if (!u_guess) memset(u, 0, sizeof(double) * net->nu);
        for (int i = 0; i < net->nsub; i++)
            if (!net->feedthrough[i]) CS_TRY(g->eval(g->ctx, i, t, ug + uoff[i], y + yoff[i], err));
        for (int k = 0; k < net->nft; k++) {
            const int i = net->ft_order[k];
            for (int a = uoff[i]; a < uoff[i + 1]; a++) u[a] = cs_network_input(net, y, a);
            CS_TRY(g->eval(g->ctx, i, t, u + uoff[i], y + yoff[i], err));
        }
        /* the feed-through units' inputs are final; those of the others, u = L y + r, now that y is */
        for (int i = 0; i < net->nsub; i++)
            if (!net->feedthrough[i])
                for (int a = uoff[i]; a < uoff[i + 1]; a++) u[a] = cs_network_input(net, y, a);
        return CS_OK;
    }
    if (!u_guess) memset(u, 0, sizeof(double) * net->nu);
    else if (u_guess != u) memcpy(u, u_guess, sizeof(double) * net->nu);
    for (int i = 0; i < net->nsub; i++) CS_TRY(g->eval(g->ctx, i, t, u + uoff[i], y + yoff[i], err));
    cs_network_inputs(net, y, u);
    if (!net->any_feedthrough) return CS_OK; /* y does not depend on u: done */
    cs_network_klu *k = net->klu;
    memset(net->F, 0, sizeof(double) * ny);
    for (int it = 0; it < 50; it++) {
        /* F(y) = y - g(L y + r); rows of units without feed-through stay 0 */
        double fn = 0.0, yn = 0.0;
        for (int i = 0; i < net->nsub; i++) {
            if (!net->feedthrough[i]) continue;
            CS_TRY(g->eval(g->ctx, i, t, u + net->uoff[i], net->ytmp + net->yoff[i], err));
            for (int j = net->yoff[i]; j < net->yoff[i + 1]; j++) {
                net->F[j] = y[j] - net->ytmp[j];
                fn = fmax(fn, fabs(net->F[j]));
                yn = fmax(yn, fabs(y[j]));
            }
        }
        if (!isfinite(fn))
            return cs_fail(err, CS_ERR_DIVERGED, "algebraic coupling loop: non-finite outputs at t = %.10g", t);
        if (fn <= 1e-13 * (1.0 + yn)) {
            for (int i = 0; i < net->nsub; i++)
                if (net->feedthrough[i])
                    memcpy(y + net->yoff[i], net->ytmp + net->yoff[i], sizeof(double) * (net->yoff[i + 1] - net->yoff[i]));
            cs_network_inputs(net, y, u);
            return CS_OK;
        }
        if (!k->factored_const) {
            int rc = CS_OK;
            int lin = assemble(net, g, t, u, err, &rc);
            if (rc) return rc;
            CS_TRY(factor(net, t, err));
            k->factored_const = lin;
        }
        if (!klu_solve(k->sym, k->num, ny, 1, net->F, &k->common))
            return cs_fail(err, CS_ERR_SOLVER, "algebraic coupling loop at t = %.10g: sparse solve failed", t);
        for (int j = 0; j < ny; j++) y[j] -= net->F[j];
        memset(net->F, 0, sizeof(double) * ny);
        cs_network_inputs(net, y, u);
        net->newton_iterations++;
    }
    return cs_fail(err, CS_ERR_SOLVER, "algebraic coupling loop did not converge at t = %.10g", t);
}
