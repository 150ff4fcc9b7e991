/* Fixed macro step controller: uniform grid T_k = T_base + k H, the Kraft start-up ramp, or an explicit grid. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "control/controller.h"

typedef struct fixed_content {
    double t0, t_end, H, factor;
    int startup;
    double *grid;
    long ngrid;
    /* state, advanced by commit only */
    int in_startup;
    long nsteps, k;
    double Tbase;
    /* test controller: steps to reject once */
    long *reject;
    unsigned char *rejected_once;
    int nreject;
} fixed_content;

static int fixed_propose(cs_controller *c, double T, cs_step_plan *p, cs_err *err) {
    fixed_content *f = c->content;
    double H = f->H, T1, Hnom = 0.0;
    p->T = T;
    if (f->grid) {
        if (f->nsteps + 1 >= f->ngrid) return cs_fail(err, CS_ERR_ARG, "grid: exhausted before t_end");
        T1 = f->grid[f->nsteps + 1];
    } else if (f->in_startup) {
        /* kraft2021 Listing 5.1 */
        double Tst = f->t0 + 2.0 * H;
        T1 = T + f->factor * H * ldexp(1.0, (int)(f->nsteps < 1000 ? f->nsteps : 1000));
        if (T1 >= Tst * (1.0 - 1e-15) || T1 >= f->t_end) T1 = fmin(Tst, f->t_end);
    } else {
        T1 = f->Tbase + (double)(f->k + 1) * H;
        Hnom = H;
        if (T1 > f->t_end - 1e-9 * H) {
            if (fabs(T1 - f->t_end) > 1e-9 * H) Hnom = 0.0; /* shortened last step */
            T1 = f->t_end;
        }
    }
    p->T1 = T1;
    p->H = T1 - T;
    p->Hnom = Hnom;
    if (!(p->H > 0.0)) return cs_fail(err, CS_ERR_ARG, "H: macro step %ld at t = %.17g has no length", f->nsteps, T);
    return CS_OK;
}

static void fixed_commit(cs_controller *c, const cs_step_plan *p) {
    fixed_content *f = c->content;
    if (!f->grid && f->in_startup) {
        double Tst = f->t0 + 2.0 * f->H;
        if (p->T1 >= fmin(Tst, f->t_end)) {
            f->in_startup = 0;
            f->Tbase = p->T1;
            f->k = 0;
        }
    } else if (!f->grid) {
        f->k++;
    }
    f->nsteps++;
}

static int reject_judge(cs_controller *c, const cs_step_plan *p, const cs_estimate *est, int *accept, cs_err *err) {
    fixed_content *f = c->content;
    *accept = 1;
    for (int q = 0; q < f->nreject; q++)
        if (f->reject[q] == f->nsteps && !f->rejected_once[q]) {
            f->rejected_once[q] = 1;
            *accept = 0;
        }
    return CS_OK;
}

static void fixed_destroy(cs_controller *c) {
    fixed_content *f = c->content;
    if (f) { free(f->grid); free(f->reject); free(f->rejected_once); }
    free(f);
    c->content = NULL;
}

static const cs_controller_ops FIXED_OPS = {.propose = fixed_propose, .commit = fixed_commit, .destroy = fixed_destroy};
static const cs_controller_ops REJECT_OPS = {.propose = fixed_propose, .judge = reject_judge, .commit = fixed_commit,
                                             .destroy = fixed_destroy};

int cs_fixed_controller_create(double t0, double t_end, double H, int startup, double factor, const double *grid,
                               long ngrid, cs_controller **out, cs_err *err) {
    *out = NULL;
    if (!isfinite(t0) || !isfinite(t_end) || !(t_end >= t0)) return cs_fail(err, CS_ERR_ARG, "t_end: must be >= the start time");
    if (grid) {
        if (ngrid < 2 || grid[0] != t0 || grid[ngrid - 1] != t_end)
            return cs_fail(err, CS_ERR_ARG, "grid: must run from the start time %.17g to t_end %.17g", t0, t_end);
        for (long i = 1; i < ngrid; i++)
            if (!(grid[i] > grid[i - 1]) || !isfinite(grid[i]))
                return cs_fail(err, CS_ERR_ARG, "grid: macro time points must be finite and strictly increasing "
                                                "(point %ld: %.17g after %.17g)", i, grid[i], grid[i - 1]);
    } else if (!(H > 0.0) || !isfinite(H)) {
        return cs_fail(err, CS_ERR_ARG, "H: must be positive and finite, got %g", H);
    }
    if (startup == CS_STARTUP_KRAFT && !(factor > 0.0 && factor <= 1.0))
        return cs_fail(err, CS_ERR_ARG, "startup_factor: must be in (0, 1]");
    if (startup != CS_STARTUP_NONE && startup != CS_STARTUP_KRAFT)
        return cs_fail(err, CS_ERR_ARG, "startup: unknown start-up code %d", startup);
    cs_controller *c = calloc(1, sizeof *c);
    fixed_content *f = calloc(1, sizeof *f);
    if (!c || !f) { free(c); free(f); return cs_fail(err, CS_ERR_NOMEM, "controller: out of memory"); }
    c->ops = &FIXED_OPS;
    c->kind = CS_CTL_FIXED;
    c->content = f;
    f->t0 = t0; f->t_end = t_end; f->H = H; f->factor = factor;
    f->startup = grid ? CS_STARTUP_NONE : startup;
    f->in_startup = f->startup == CS_STARTUP_KRAFT;
    f->Tbase = t0;
    if (grid) {
        f->grid = malloc(sizeof(double) * (size_t)ngrid);
        if (!f->grid) { cs_controller_destroy(c); return cs_fail(err, CS_ERR_NOMEM, "controller: out of memory"); }
        memcpy(f->grid, grid, sizeof(double) * (size_t)ngrid);
        f->ngrid = ngrid;
    }
    *out = c;
    return CS_OK;
}

int cs_reject_controller_create(double t0, double t_end, double H, const long *reject, int nreject,
                                cs_controller **out, cs_err *err) {
    CS_TRY(cs_fixed_controller_create(t0, t_end, H, CS_STARTUP_NONE, 1.0, NULL, 0, out, err));
    cs_controller *c = *out;
    fixed_content *f = c->content;
    c->ops = &REJECT_OPS;
    c->kind = CS_CTL_REJECT_TEST;
    c->may_reject = 1;
    if (nreject > 0) {
        f->reject = malloc(sizeof(long) * (size_t)nreject);
        f->rejected_once = calloc((size_t)nreject, 1);
        if (!f->reject || !f->rejected_once) {
            cs_controller_destroy(c);
            *out = NULL;
            return cs_fail(err, CS_ERR_NOMEM, "controller: out of memory");
        }
        memcpy(f->reject, reject, sizeof(long) * (size_t)nreject);
        f->nreject = nreject;
    }
    return CS_OK;
}

long cs_fixed_controller_max_steps(const cs_controller *c) {
    const fixed_content *f = c->content;
    if (f->grid) return f->ngrid - 1;
    double n = ceil((f->t_end - f->t0) / f->H * (1.0 - 1e-12));
    if (!(n < 4e18)) return -1;
    return (long)n + 1 + (f->startup == CS_STARTUP_KRAFT ? 80 : 0);
}

void cs_controller_destroy(cs_controller *c) {
    if (!c) return;
    if (c->ops && c->ops->destroy) c->ops->destroy(c);
    free(c);
}
