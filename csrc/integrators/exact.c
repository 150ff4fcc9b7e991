/* Exact integrator for LTI models: x(T+H) = Phi x(T) + sum_m Gam_m c_m for the polynomial input
 * u = sum_m c_m s^m (busch2016 eq. 20, evaluated with the Van Loan augmented exponential, linalg/expm.c).
 * Phi and Gam are cached for the last (H, deg); they change only during start-up and at a shortened last step.
 * The input is a polynomial in s = (t - in->T)/in->H; a step [T, T+H] other than the input's own window (dense
 * output re-integrates [T_N, t] with the step's input) re-expands it in s' = (t - T)/H. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/stepper.h"
#include "linalg/dense.h"
#include "linalg/expm.h"

/* One cached propagator: Phi = e^{AH} and Gam_m for inputs of degree deg over a step H. */
typedef struct propagator {
    double H;
    int deg;
    double *Phi, *Gam;
} propagator;

typedef struct exact_content {
    propagator slot[2];        /* [0]: whole windows (macro steps), [1]: other steps (dense output), so that dense
                                * output leaves the macro steps' propagator, and their results, bit for bit alone */
    double *work, *xn, *cs;    /* cs: the input's coefficients re-expanded for the step */
    int *ipiv;
} exact_content;

static int exact_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    exact_content *c = st->content;
    cs_model *m = st->model;
    int nx = m->nx, nu = m->nu;
    if (in->eval) /* the propagator integrates polynomials only (waveforms of waveform relaxation are not) */
        return cs_fail(err, CS_ERR_ARG, "subsystem %s: Exact() integrates polynomial inputs only (e.g. use RK4 or "
                       "CVODE with waveform='substeps')", m->name);
    /* On a uniform grid T_{N+1} - T_N varies by a few ulp of T (not of H), which must not trigger a new propagator
     * (Phi would change by rounding only): the key tolerates differences of that size. */
    propagator *p = &c->slot[T != in->T || H != in->H];
    if (!(fabs(H - p->H) <= 8e-16 * (fabs(T) + H)) || in->deg != p->deg) {
        CS_TRY(cs_poly_propagator(nx, nu, in->deg, m->lin.A, m->lin.B, H, p->Phi, p->Gam, c->work, c->ipiv, err));
        p->H = H;
        p->deg = in->deg;
    }
    const double *coef = in->c;
    if (T != in->T || H != in->H) {
        /* s = a + b s' with a = (T - in->T)/in->H, b = H/in->H: c'_j = sum_{m>=j} binom(m, j) a^(m-j) b^j c_m */
        const double a = (T - in->T) / in->H, b = H / in->H;
        for (int j = 0; j <= in->deg; j++) {
            double *cj = c->cs + (size_t)j * nu;
            for (int q = 0; q < nu; q++) cj[q] = 0.0;
            double bj = pow(b, j);
            for (int mm = j; mm <= in->deg; mm++) {
                double binom = 1.0;
                for (int r = 1; r <= j; r++) binom = binom * (mm - j + r) / r;
                const double f = binom * pow(a, mm - j) * bj;
                for (int q = 0; q < nu; q++) cj[q] += f * in->c[(size_t)mm * nu + q];
            }
        }
        coef = c->cs;
    }
    cs_matvec(nx, nx, p->Phi, st->x, c->xn, 0);
    for (int k = 0; k <= in->deg; k++)
        cs_matvec(nx, nu, p->Gam + (size_t)k * nx * nu, coef + (size_t)k * nu, c->xn, 1);
    memcpy(st->x, c->xn, sizeof(double) * nx);
    st->t = T + H;
    st->stats.steps++;
    return CS_OK;
}

static void exact_destroy(cs_stepper *st) {
    exact_content *c = st->content;
    if (c) { free(c->slot[0].Phi); free(c->ipiv); }
    free(c);
    st->content = NULL;
}

static const cs_stepper_ops EXACT_OPS = {exact_step, exact_destroy};

int cs_exact_create(cs_model *model, cs_stepper **out, cs_err *err) {
    if (!cs_model_linear(model))
        return cs_fail(err, CS_ERR_ARG, "solver: Exact() needs an LTI subsystem, but %s is not LTI", model->name);
    cs_stepper *st = cs_stepper_new_empty(model, &EXACT_OPS, err);
    if (!st) return CS_ERR_NOMEM;
    int nx = model->nx, nu = model->nu;
    size_t ws = cs_poly_propagator_work_size(nx, nu, CS_MAXDEG);
    exact_content *c = calloc(1, sizeof *c);
    const size_t prop = (size_t)nx * nx + (size_t)nx * nu * (CS_MAXDEG + 1);
    double *mem = malloc(sizeof(double) * (2 * prop + ws + nx + (size_t)nu * (CS_MAXDEG + 1) + 1));
    int *ipiv = malloc(sizeof(int) * ((size_t)nx + (size_t)nu * (CS_MAXDEG + 1) + 1));
    if (!c || !mem || !ipiv) {
        free(c); free(mem); free(ipiv);
        cs_stepper_free_empty(st);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < 2; k++) {
        c->slot[k].Phi = mem + k * prop;
        c->slot[k].Gam = c->slot[k].Phi + (size_t)nx * nx;
        c->slot[k].H = NAN;
        c->slot[k].deg = -1;
    }
    c->work = mem + 2 * prop;
    c->xn = c->work + ws;
    c->cs = c->xn + nx;
    c->ipiv = ipiv;
    st->content = c;
    *out = st;
    return CS_OK;
}
