/* ECCO estimator and PI step controller: see control/ecco.h. */
#include "control/ecco.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ecco_est {
    int nbonds, ndim;
    int *off, *sig;
    double rtol, atol;
    double *res;        /* per bond |P_a - P_b| H */
} ecco_est;

static int check_spec(const cs_ecco_spec *s, cs_err *err) {
    if (s->nbonds < 1) return cs_fail(err, CS_ERR_ARG, "power_bonds: need at least one bond");
    if (!(s->rtol >= 0) || !(s->atol >= 0) || !(s->rtol + s->atol > 0))
        return cs_fail(err, CS_ERR_ARG, "rtol/atol: must be >= 0 and not both 0");
    if (!(s->kP >= 0)) return cs_fail(err, CS_ERR_ARG, "kP: must be >= 0");
    if (!(s->kI >= 0)) return cs_fail(err, CS_ERR_ARG, "kI: must be >= 0");
    if (!(s->safety > 0)) return cs_fail(err, CS_ERR_ARG, "safety: must be > 0");
    if (!(s->H_min > 0) || !isfinite(s->H_min)) return cs_fail(err, CS_ERR_ARG, "H_min: must be positive and finite");
    if (!(s->H_max >= s->H_min) || !isfinite(s->H_max)) return cs_fail(err, CS_ERR_ARG, "H_min/H_max: need H_min <= H_max");
    if (!(s->r_min > 0) || !(s->r_max >= s->r_min) || !isfinite(s->r_max))
        return cs_fail(err, CS_ERR_ARG, "r_min/r_max: need 0 < r_min <= r_max");
    return CS_OK;
}

static double val(const cs_estimate_view *v, int code) { return code >= 0 ? v->y1[code] : v->upre[-code - 1]; }

static int ecco_estimate(cs_estimator *e, const cs_estimate_view *v, cs_estimate *est, cs_err *err) {
    ecco_est *c = e->content;
    const double H = v->plan->H;
    double sum = 0.0;
    for (int b = 0; b < c->nbonds; b++) {
        double Pa = 0.0, Pb = 0.0;
        for (int d = c->off[b]; d < c->off[b + 1]; d++) {
            const int *q = c->sig + 4 * d;
            Pa += val(v, q[0]) * val(v, q[1]);
            Pb += val(v, q[2]) * val(v, q[3]);
        }
        const double r = fabs(Pa - Pb) * H, level = fmax(fabs(Pa), fabs(Pb)) * H;
        c->res[b] = r;
        const double w = r / (c->atol + c->rtol * level);
        sum += w * w;
    }
    est->eps = sqrt(sum / c->nbonds);
    est->tested = 1;
    if (!isfinite(est->eps))
        return cs_fail(err, CS_ERR_DIVERGED, "ECCO: the energy residual is not finite (diverging co-simulation?)");
    return CS_OK;
}

static void ecco_est_destroy(cs_estimator *e) {
    ecco_est *c = e->content;
    if (!c) return;
    free(c->off); free(c->sig); free(c->res);
    free(c);
    e->content = NULL;
}

static const cs_estimator_ops ECCO_EST_OPS = {.estimate = ecco_estimate, .destroy = ecco_est_destroy};

int cs_ecco_estimator_create(const cs_ecco_spec *s, int ny, int nu, cs_estimator **out, cs_err *err) {
    *out = NULL;
    CS_TRY(check_spec(s, err));
    if (!s->bond_off || !s->sig || s->bond_off[0] != 0) return cs_fail(err, CS_ERR_ARG, "power_bonds: malformed");
    for (int b = 0; b < s->nbonds; b++)
        if (s->bond_off[b + 1] <= s->bond_off[b])
            return cs_fail(err, CS_ERR_ARG, "power_bonds: bond %d has no effort/flow pair", b);
    const int ndim = s->bond_off[s->nbonds];
    for (int k = 0; k < 4 * ndim; k++) {
        int code = s->sig[k];
        if (code >= ny || -code - 1 >= nu)
            return cs_fail(err, CS_ERR_ARG, "power_bonds: signal code %d out of range (%d outputs, %d inputs)", code,
                           ny, nu);
    }
    cs_estimator *e = calloc(1, sizeof *e);
    ecco_est *c = calloc(1, sizeof *c);
    if (c) {
        c->off = malloc(sizeof(int) * ((size_t)s->nbonds + 1));
        c->sig = malloc(sizeof(int) * (4 * (size_t)ndim + 1));
        c->res = calloc((size_t)s->nbonds + 1, sizeof(double));
    }
    if (!e || !c || !c->off || !c->sig || !c->res) {
        if (c) { free(c->off); free(c->sig); free(c->res); }
        free(c); free(e);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(c->off, s->bond_off, sizeof(int) * ((size_t)s->nbonds + 1));
    memcpy(c->sig, s->sig, sizeof(int) * 4 * (size_t)ndim);
    c->nbonds = s->nbonds;
    c->ndim = ndim;
    c->rtol = s->rtol;
    c->atol = s->atol;
    e->ops = &ECCO_EST_OPS;
    e->content = c;
    e->kind = CS_EST_ECCO;
    *out = e;
    return CS_OK;
}

const double *cs_ecco_residuals(const cs_estimator *e) { return ((const ecco_est *)e->content)->res; }

/* --- PI controller ------------------------------------------------------------------------------------------- */

typedef struct ecco_ctl {
    cs_ecco_spec s;
    double t0, t_end;
    double H;            /* the next step */
    double eps, eps_prev;
} ecco_ctl;

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

static int ecco_propose(cs_controller *c, double T, cs_step_plan *p, cs_err *err) {
    ecco_ctl *k = c->content;
    double H = k->H, rest = k->t_end - T;
    double T1 = T + H;
    if (H >= rest * (1.0 - 1e-12)) T1 = k->t_end;                      /* the last step ends at t_end */
    else if (rest - H < 1e-3 * k->s.H_min) T1 = k->t_end;              /* no sliver step at the end */
    p->T = T;
    p->T1 = T1;
    p->H = T1 - T;
    p->Hnom = 0.0;
    if (!(p->H > 0)) return cs_fail(err, CS_ERR_ARG, "ECCO: no step left at t = %.10g", T);
    return CS_OK;
}

static int ecco_judge(cs_controller *c, const cs_step_plan *p, const cs_estimate *est, int *accept, cs_err *err) {
    ecco_ctl *k = c->content;
    const double eps = est->eps;
    k->eps = eps;
    *accept = 1;
    if (k->s.reject && eps > 1.0 && p->H > k->s.H_min * (1.0 + 1e-12)) {
        double f = clamp(k->s.safety * pow(eps, -k->s.kI - k->s.kP), k->s.r_min, 1.0);
        double Hn = fmax(k->s.H_min, f * p->H);
        if (Hn < p->H) { k->H = Hn; *accept = 0; }
    }
    return CS_OK;
}

static void ecco_commit(cs_controller *c, const cs_step_plan *p) {
    ecco_ctl *k = c->content;
    const double eps = k->eps;
    if (k->eps_prev == 0.0 || eps == 0.0) {    /* libcosim: keep the step, remember eps */
        k->eps_prev = eps;
        return;
    }
    double gain = k->s.safety * pow(eps, -k->s.kI - k->s.kP) * pow(k->eps_prev, k->s.kP);
    gain = clamp(gain, k->s.r_min, k->s.r_max);
    k->eps_prev = eps;
    /* a step shortened to hit t_end does not shrink the controller's step */
    double base = p->T1 >= k->t_end ? k->H : p->H;
    k->H = clamp(base * gain, k->s.H_min, k->s.H_max);
}

static void ecco_ctl_destroy(cs_controller *c) {
    free(c->content);
    c->content = NULL;
}

static const cs_controller_ops ECCO_CTL_OPS = {.propose = ecco_propose, .judge = ecco_judge, .commit = ecco_commit,
                                               .destroy = ecco_ctl_destroy};

int cs_ecco_controller_create(const cs_ecco_spec *s, double t0, double t_end, double H0, cs_controller **out,
                              cs_err *err) {
    *out = NULL;
    CS_TRY(check_spec(s, err));
    if (!isfinite(t0) || !isfinite(t_end) || !(t_end > t0)) return cs_fail(err, CS_ERR_ARG, "t_end: must be > t0");
    if (!(H0 >= s->H_min && H0 <= s->H_max))
        return cs_fail(err, CS_ERR_ARG, "H: the initial step %g must lie in [H_min, H_max] = [%g, %g]", H0, s->H_min,
                       s->H_max);
    cs_controller *c = calloc(1, sizeof *c);
    ecco_ctl *k = calloc(1, sizeof *k);
    if (!c || !k) { free(c); free(k); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    k->s = *s;
    k->s.bond_off = NULL;
    k->s.sig = NULL;
    k->t0 = t0;
    k->t_end = t_end;
    k->H = H0;
    c->ops = &ECCO_CTL_OPS;
    c->kind = CS_CTL_ECCO;
    c->content = k;
    c->may_reject = s->reject != 0;
    *out = c;
    return CS_OK;
}

long cs_ecco_max_steps(const cs_ecco_spec *s, double t0, double t_end) {
    double n = ceil((t_end - t0) / s->H_min);
    if (!(n < 1e15)) return -1;
    return (long)n + 2;
}

/* ---- the kind (master/registry.c) ---- */

#define P(name, type) CS_PARAM_FIELD(cs_ecco_spec, #name, type, name)
static const cs_param ecco_params[] = {
    CS_PARAM_VECTOR(cs_ecco_spec, "bond_off", CS_PARAM_INTS, bond_off, nbonds), P(sig, CS_PARAM_INTS),
    P(rtol, CS_PARAM_DOUBLE), P(atol, CS_PARAM_DOUBLE), P(safety, CS_PARAM_DOUBLE), P(kP, CS_PARAM_DOUBLE),
    P(kI, CS_PARAM_DOUBLE), P(H_min, CS_PARAM_DOUBLE), P(H_max, CS_PARAM_DOUBLE), P(r_min, CS_PARAM_DOUBLE),
    P(r_max, CS_PARAM_DOUBLE), P(reject, CS_PARAM_INT),
};
#undef P

static int ecco_create(const void *spec, cs_control_env *e, cs_controller **ctl, cs_estimator **est, cs_err *err) {
    const cs_ecco_spec *s = spec;
    CS_TRY(cs_ecco_estimator_create(s, e->net->ny, e->net->nu, est, err));
    CS_TRY(cs_ecco_controller_create(s, e->t0, e->t_end, e->H, ctl, err));
    e->max_steps = cs_ecco_max_steps(s, e->t0, e->t_end);
    if (e->max_steps < 0) return cs_fail(err, CS_ERR_ARG, "H_min: (t_end - t0)/H_min steps do not fit a long");
    return CS_OK;
}

const cs_kind cs_control_ecco_kind = {"ecco", ecco_params, CS_NPARAMS(ecco_params), sizeof(cs_ecco_spec), NULL,
                                      {.control = ecco_create}, NULL};
