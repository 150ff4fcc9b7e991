/* See master/registry.h. One entry per kind: its parameter table and the adapter that creates it from its spec. */
#include "master/registry.h"

#include <string.h>

#include "control/adaptive.h"
#include "control/ecco.h"
#include "control/kraft_pool.h"
#include "coupling/balance.h"
#include "coupling/nepce.h"
#include "coupling/prestep.h"
#include "coupling/signal.h"
#include "integrators/stepper.h"
#include "schemes/iterative.h"

/* ---- couplings ---- */

static int signal_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_signal_coupling_create(e->net, e->approx, e->rates_lagged, out, err);
}

#define P(name, type, field) CS_PARAM_FIELD(cs_prestep_spec, name, type, field)
static const cs_param prestep_params[] = {
    P("variant", CS_PARAM_INT, variant), P("ij_source", CS_PARAM_INT, ij_source),
    P("modified", CS_PARAM_INT, modified), P("hold", CS_PARAM_INT, hold), P("sbc_foh", CS_PARAM_INT, sbc_foh),
    P("Sy", CS_PARAM_DOUBLES, Sy), P("Su", CS_PARAM_DOUBLES, Su), P("Sd", CS_PARAM_DOUBLES, Sd),
    P("use_ede", CS_PARAM_INT, use_ede), P("ede_exact", CS_PARAM_INT, ede_exact),
    P("ede_steps", CS_PARAM_INT, ede_steps), P("extrap_exact", CS_PARAM_INT, extrap_exact),
    P("extrap_steps", CS_PARAM_INT, extrap_steps), P("dsm_steps", CS_PARAM_INT, dsm_steps),
    P("time_learning", CS_PARAM_DOUBLE, time_learning), P("time_switch", CS_PARAM_DOUBLE, time_switch),
    P("th_sbc", CS_PARAM_DOUBLE, th_sbc), P("th_mod", CS_PARAM_DOUBLE, th_mod),
    P("rls_lambda", CS_PARAM_DOUBLE, rls_lambda), P("rls_P0", CS_PARAM_DOUBLE, rls_P0),
    P("rls_na", CS_PARAM_INT, rls_na), P("rls_nb", CS_PARAM_INT, rls_nb),
    P("a0", CS_PARAM_DOUBLES, rls_a0), P("b0", CS_PARAM_DOUBLES, rls_b0), P("rtol", CS_PARAM_DOUBLE, rtol),
    P("moesp_cfg", CS_PARAM_DOUBLES, moesp_cfg), P("moesp_threshold", CS_PARAM_DOUBLE, moesp_threshold),
    P("moesp_refresh", CS_PARAM_INT, moesp_refresh), P("log_capacity", CS_PARAM_LONG, log_capacity),
    P("intermediate_correction", CS_PARAM_INT, intermediate_correction),
};
#undef P

static void prestep_defaults(void *spec) {
    cs_prestep_spec *s = spec;
    s->rls_na = s->rls_nb = 1;   /* the thesis's first-order RLS model */
}

static int prestep_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_prestep_coupling_create(e->net, e->units, spec, e->H, out, err);
}

static int prestep_log(const void *coupling, cs_fields *out, cs_err *err) {
    cs_prestep_log lg;
    CS_TRY(cs_prestep_get_log(coupling, &lg, err));
    cs_fields_array(out, "phase", CS_FIELD_BYTE, lg.n, 0, lg.phase);
    cs_fields_array(out, "eps_si", CS_FIELD_DOUBLE, lg.n, 0, lg.eps);
    cs_fields_array(out, "params", CS_FIELD_DOUBLE, lg.n, lg.nparams, lg.params);
    cs_fields_array(out, "delta", CS_FIELD_DOUBLE, lg.n, lg.ny, lg.delta);
    cs_fields_array(out, "u", CS_FIELD_DOUBLE, lg.n, lg.nu, lg.u);
    cs_fields_array(out, "rank", CS_FIELD_INT, lg.n, lg.nsub, lg.rank);
    if (lg.eps_cor) { /* intermediate-value correction: eps_cor per step, the trace / macro-point fallback counts */
        cs_fields_array(out, "eps_cor", CS_FIELD_DOUBLE, lg.n, lg.nu, lg.eps_cor);
        cs_fields_count(out, "traced_steps", lg.traced);
        cs_fields_count(out, "macro_point_steps", lg.fallback);
    }
    return CS_OK;
}

static const cs_param nepce_params[] = {
    CS_PARAM_FIELD(cs_nepce_spec, "K", CS_PARAM_DOUBLE, K), CS_PARAM_FIELD(cs_nepce_spec, "tau", CS_PARAM_DOUBLE, tau),
};

static int nepce_create(const void *spec, const cs_coupling_env *e, cs_coupling **out, cs_err *err) {
    return cs_nepce_coupling_create(e->net, e->units, e->approx, spec, out, err);
}

static int nepce_log(const void *coupling, cs_fields *out, cs_err *err) {
    long traced = 0, fallback = 0;
    CS_TRY(cs_nepce_counts(coupling, &traced, &fallback, err));
    cs_fields_count(out, "traced_steps", traced);
    cs_fields_count(out, "macro_point_steps", fallback);
    return CS_OK;
}

/* The first is the run's default. */
static const cs_kind couplings[] = {
    {"signal", NULL, 0, 0, NULL, {.coupling = signal_create}, NULL},
    {"prestep", prestep_params, CS_NPARAMS(prestep_params), sizeof(cs_prestep_spec), prestep_defaults,
     {.coupling = prestep_create}, prestep_log},
    {"nepce", nepce_params, CS_NPARAMS(nepce_params), sizeof(cs_nepce_spec), NULL, {.coupling = nepce_create},
     nepce_log},
};

/* ---- schemes ---- */

static int jacobi_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    return cs_jacobi_create_parallel(e->nunits, e->threads > 1 ? e->threads : 1, out, err);
}

static int gauss_seidel_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    return cs_gauss_seidel_create(e->nunits, e->order, out, err);
}

#define P(name, type) CS_PARAM_FIELD(cs_iter_opts, #name, type, name)
static const cs_param iter_params[] = {
    P(tol, CS_PARAM_DOUBLE), P(atol, CS_PARAM_DOUBLE), P(max_iter, CS_PARAM_INT), P(on_failure, CS_PARAM_INT),
    P(jacobian, CS_PARAM_INT), P(tau, CS_PARAM_DOUBLE), P(conv_y, CS_PARAM_INT), P(perturbation, CS_PARAM_DOUBLE),
    P(omega, CS_PARAM_DOUBLE), P(accel, CS_PARAM_INT), P(waveform, CS_PARAM_INT), P(gauss_seidel, CS_PARAM_INT),
    P(reuse, CS_PARAM_INT), P(filter, CS_PARAM_DOUBLE), P(kappa, CS_PARAM_INT),
};
#undef P

static int implicit_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    CS_TRY(cs_implicit_create(e->nunits, spec, out, err));
    return e->threads > 1 ? cs_implicit_use_threads(*out, e->threads, err) : CS_OK;
}

static int waveform_create(const void *spec, const cs_scheme_env *e, cs_scheme **out, cs_err *err) {
    cs_iter_opts o = *(const cs_iter_opts *)spec;
    o.threads = e->threads;   /* Jacobi sweeps on a pool (schemes/waveform.c) */
    return cs_waveform_create(e->nunits, e->order, &o, out, err);
}

/* The scheme objects' kind (CS_SCHEME_*, schemes/scheme.h) is their index here (tests/test_codes.py). */
static const cs_kind schemes[] = {
    {"jacobi", NULL, 0, 0, NULL, {.scheme = jacobi_create}},
    {"gauss-seidel", NULL, 0, 0, NULL, {.scheme = gauss_seidel_create}},
    {"implicit", iter_params, CS_NPARAMS(iter_params), sizeof(cs_iter_opts), NULL, {.scheme = implicit_create}},
    {"waveform", iter_params, CS_NPARAMS(iter_params), sizeof(cs_iter_opts), NULL, {.scheme = waveform_create}},
};

/* ---- step controllers with an error estimate (the fixed grid and the rejecting test controller are the run's
 * defaults, master/setup.c) ---- */

#define P(name, type) CS_PARAM_FIELD(cs_kraft_opts, #name, type, name)
#define V(name, type, len) CS_PARAM_VECTOR(cs_kraft_opts, #name, type, name, len)
static const cs_param kraft_params[] = {
    P(estimator, CS_PARAM_INT), P(rtol, CS_PARAM_DOUBLE), P(safety, CS_PARAM_DOUBLE), P(r_min, CS_PARAM_DOUBLE),
    P(r_max, CS_PARAM_DOUBLE), P(dead_zone, CS_PARAM_INT), P(order, CS_PARAM_INT), P(k_max, CS_PARAM_INT),
    P(H_init, CS_PARAM_DOUBLE), P(H_min, CS_PARAM_DOUBLE), P(H_max, CS_PARAM_DOUBLE),
    P(initial_phase, CS_PARAM_INT), V(state_index, CS_PARAM_INDICES, nstate),
    V(state_group, CS_PARAM_INDICES, nstate), V(state_atol, CS_PARAM_DOUBLES, nstate),
    V(in_index, CS_PARAM_INDICES, nin), V(in_atol, CS_PARAM_DOUBLES, nin),
};
#undef P
#undef V

static int kraft_create(const void *spec, cs_control_env *e, cs_controller **ctl, cs_estimator **est, cs_err *err) {
    const cs_kraft_opts *o = spec;
    CS_TRY(cs_signal_coupling_set_depth(e->coupling, o->k_max + 2, err));
    CS_TRY(cs_kraft_control_create(o, e->t0, e->t_end, e->nunits, e->units, e->coupling, ctl, est, err));
    cs_kraft_estimator_use_pool(*est, cs_jacobi_pool(e->scheme));   /* threads=n: comparative runs */
    e->adaptive = 1;
    return CS_OK;
}

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

static const cs_kind controls[] = {
    {"kraft", kraft_params, CS_NPARAMS(kraft_params), sizeof(cs_kraft_opts), NULL, {.control = kraft_create}},
    {"ecco", ecco_params, CS_NPARAMS(ecco_params), sizeof(cs_ecco_spec), NULL, {.control = ecco_create}},
};

/* ---- parameter-only specs ---- */

#define P(name, type) CS_PARAM_FIELD(cs_solver_opts, #name, type, name)
static const cs_param solver_params[] = {
    P(kind, CS_PARAM_INT), P(substeps, CS_PARAM_INT), P(h, CS_PARAM_DOUBLE), P(rtol, CS_PARAM_DOUBLE),
    P(atol, CS_PARAM_DOUBLE), P(adams, CS_PARAM_INT), P(max_steps, CS_PARAM_LONG), P(max_h, CS_PARAM_DOUBLE),
    P(continue_smooth, CS_PARAM_FLAG), P(starter, CS_PARAM_INT), P(linear_solver, CS_PARAM_INT),
    P(band_lower, CS_PARAM_INT), P(band_upper, CS_PARAM_INT),
};
#undef P

static void solver_defaults(void *spec) {
    cs_solver_opts *o = spec;
    o->band_lower = o->band_upper = -1;   /* found from the model */
}

static const cs_param balance_params[] = {
    CS_PARAM_FIELD(cs_balance_spec, "kernel", CS_PARAM_INT, kernel),
    CS_PARAM_FIELD(cs_balance_spec, "spread", CS_PARAM_INT, spread),
    CS_PARAM_FIELD(cs_balance_spec, "variant", CS_PARAM_INT, variant),
};

static const cs_kind solver_spec[] = {
    {"solver", solver_params, CS_NPARAMS(solver_params), sizeof(cs_solver_opts), solver_defaults, {NULL}},
};
static const cs_kind balance_spec[] = {
    {"balance", balance_params, CS_NPARAMS(balance_params), sizeof(cs_balance_spec), NULL, {NULL}},
};

#define CAPABILITY(name, table) {name, table, (int)(sizeof table / sizeof table[0])}
const cs_capability cs_registry[] = {
    CAPABILITY("coupling", couplings), CAPABILITY("scheme", schemes), CAPABILITY("step_control", controls),
    CAPABILITY("solver", solver_spec), CAPABILITY("balance", balance_spec),
};
const int cs_registry_size = (int)(sizeof cs_registry / sizeof cs_registry[0]);

static void fields_add(cs_fields *out, cs_field f) {
    if (out->n < (int)(sizeof out->f / sizeof out->f[0])) out->f[out->n++] = f;
}

void cs_fields_array(cs_fields *out, const char *name, int type, long rows, int cols, const void *data) {
    fields_add(out, (cs_field){.name = name, .type = type, .rows = rows, .cols = cols, .data = data});
}

void cs_fields_count(cs_fields *out, const char *name, long count) {
    fields_add(out, (cs_field){.name = name, .type = CS_FIELD_COUNT, .count = count});
}

const cs_capability *cs_registry_capability(const char *name) {
    for (int c = 0; c < cs_registry_size; c++)
        if (strcmp(cs_registry[c].name, name) == 0) return &cs_registry[c];
    return NULL;
}

int cs_registry_chosen(const cs_capability *cap) {
    return cap->nkinds > 0 && cap->kinds[0].create.coupling != NULL;   /* any member: the union holds one pointer */
}

const cs_kind *cs_registry_kind(const cs_capability *cap, const char *name) {
    for (int k = 0; k < cap->nkinds; k++)
        if (strcmp(cap->kinds[k].name, name) == 0) return &cap->kinds[k];
    return NULL;
}
