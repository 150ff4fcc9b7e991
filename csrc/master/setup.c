#include "master/setup.h"

#include <stdlib.h>
#include <string.h>

#include "coupling/smooth.h"

void cs_run_destroy(cs_run *r) {
    if (!r) return;
    cs_algorithm_destroy(r->alg);
    cs_share_destroy(r->share);
    for (int k = 0; k < r->nobs; k++) cs_observer_destroy(r->observers[k]);
    cs_controller_destroy(r->controller);
    cs_estimator_destroy(r->estimator);
    cs_scheme_destroy(r->scheme);
    cs_coupling_destroy(r->coupling);
    if (r->units)
        for (int i = 0; i < r->nunits; i++) cs_unit_destroy(r->units[i]);
    free(r->units);
    if (r->have_unit_net) cs_network_free(&r->unit_net);
    cs_model_set_free(&r->models);
    if (r->have_net) cs_network_free(&r->net);
    free(r);
}

/* The network over the units to be made (prebuilt ones where given: un may be NULL); n = 1 for the monolithic
 * composite's unit. */
static int make_network(cs_network *net, const cs_model_set *models, int n, cs_unit **un, int nconn, const int *ci,
                        const int *co, const double *g, const double *r, cs_err *err) {
    int *nu = malloc(sizeof(int) * (size_t)n), *ny = malloc(sizeof(int) * (size_t)n);
    int *ft = malloc(sizeof(int) * (size_t)n), *lin = malloc(sizeof(int) * (size_t)n);
    int rc;
    if (!nu || !ny || !ft || !lin) rc = cs_fail(err, CS_ERR_NOMEM, "out of memory");
    else {
        cs_model_set_ports(models, un, nu, ny, ft, lin);
        rc = cs_network_init(net, n, nu, ny, ft, lin, nconn, ci, co, g, r, err);
    }
    free(nu); free(ny); free(ft); free(lin);
    return rc;
}

/* The units: prebuilt ones (cfg.units, FMUs) as given; the others made by the model set (with quadrature states for
 * balance correction; the composite's for the monolithic reference). */
static int make_units(const cs_run_config *c, cs_run *r, cs_err *err) {
    CS_TRY(cs_model_set_units(&r->models, c->solvers, c->balance && !c->monolithic, r->units, err));
    for (int i = 0; i < r->nunits; i++) r->units[i]->timing = c->timing;
    r->unit_access = cs_unit_access_of(r->units, r->nunits);
    return CS_OK;
}

/* The coupling kind chosen (the signal-based one by default; the monolithic reference's is void), then the wrappers
 * (quintic smoothing, balance correction). */
static int make_coupling(const cs_run_config *c, cs_run *r, cs_network *net, const cs_approx_spec *approx,
                         cs_err *err) {
    const cs_kind *signal = cs_registry_capability("coupling")->kinds[0];   /* the registry's default */
    const cs_kind *kind = c->monolithic || !c->coupling.kind ? signal : c->coupling.kind;
    const cs_coupling_env env = {.net = net, .units = &r->unit_access, .approx = approx,
                                 .rates_lagged = c->rates_lagged, .integral_of = c->integral_of,
                                 .integral_of_n = c->integral_of_n, .H = c->H};
    CS_TRY(kind->create.coupling(kind == c->coupling.kind ? c->coupling.spec : NULL, &env, &r->coupling, err));
    r->coupling_kind = kind;
    if (c->smooth && !c->monolithic) {
        if (kind != signal)
            return cs_fail(err, CS_ERR_ARG, "approximation: smoothing applies to the signal-based coupling only");
        cs_coupling *inner = r->coupling;
        r->coupling = NULL;
        CS_TRY(cs_smooth_coupling_create(inner, net, &r->coupling, err));
    }
    if (c->balance && !c->monolithic) {
        cs_coupling *inner = r->coupling;
        r->coupling = NULL;
        CS_TRY(cs_balance_coupling_create(inner, net, &r->unit_access, c->balance_corrected, c->balance, &r->coupling,
                                          err));
        r->balance_cum = cs_balance_cumulative(r->coupling);
    }
    return CS_OK;
}

/* The scheme kind chosen (Jacobi by default and for the monolithic reference). */
static int make_scheme(const cs_run_config *c, cs_run *r, cs_err *err) {
    const cs_scheme_env env = {.nunits = r->nunits, .order = c->order, .threads = c->threads};
    const cs_kind *kind = c->monolithic || !c->scheme.kind ? NULL : c->scheme.kind;
    if (kind) return kind->create.scheme(c->scheme.spec, &env, &r->scheme, err);
    return cs_jacobi_create_parallel(r->nunits, c->threads > 1 ? c->threads : 1, &r->scheme, err);
}

/* The step controller (and its estimator): the kind chosen (Kraft's adaptive H and κ, ECCO), the rejecting test
 * controller, or the fixed grid. */
static int make_controller(const cs_run_config *c, cs_run *r, cs_network *net, cs_err *err) {
    if (c->step_control.kind && !c->monolithic) {
        cs_control_env env = {.t0 = c->t0, .t_end = c->t_end, .H = c->H, .net = net, .nunits = r->nunits,
                              .units = &r->unit_access, .coupling = r->coupling, .pool = cs_jacobi_pool(r->scheme)};
        int rc = c->step_control.kind->create.control(c->step_control.spec, &env, &r->controller, &r->estimator, err);
        r->max_steps = env.max_steps;
        r->adaptive = env.adaptive;
        return rc;
    }
    if (c->reject)
        return cs_reject_controller_create(c->t0, c->t_end, c->H, c->reject, c->nreject, &r->controller, err);
    return cs_fixed_controller_create(c->t0, c->t_end, c->H, c->startup, c->startup_factor, c->grid, c->ngrid,
                                      &r->controller, err);
}

/* Units distributed over processes: only what every process can reproduce bit for bit from the units' states (the
 * model units; schemes, estimators and the signal coupling that exchange what they need, share.h). */
static int make_share(const cs_run_config *c, cs_run *r, cs_err *err) {
    if (c->monolithic) return cs_fail(err, CS_ERR_ARG, "parallel: the monolithic reference runs in one process");
    if (c->threads > 1) return cs_fail(err, CS_ERR_ARG, "parallel: one thread per process (threads=1)");
    for (int i = 0; i < r->nunits; i++)
        if (r->units[i]->kind != CS_UNIT_GENERIC || !cs_unit_has_states(r->units[i]))
            return cs_fail(err, CS_ERR_ARG, "parallel: subsystem %s is not a model with states (FMUs run in one "
                           "process)", r->units[i]->name);
    if (c->balance || c->coupling.kind)
        return cs_fail(err, CS_ERR_ARG, "parallel: only the signal coupling (approximations) distributes its units");
    if (r->scheme->kind != CS_SCHEME_JACOBI && r->scheme->kind != CS_SCHEME_GAUSS_SEIDEL &&
        r->scheme->kind != CS_SCHEME_IMPLICIT)
        return cs_fail(err, CS_ERR_ARG, "parallel: scheme must be Jacobi, Gauss-Seidel or Implicit");
    return cs_share_create(c->share, r->nunits, c->share_first, &r->share, err);
}

int cs_run_create(const cs_run_config *c, cs_run **out, cs_err *err) {
    *out = NULL;
    cs_run *r = calloc(1, sizeof *r);
    if (r && c->units) { /* prebuilt units: owned by the run from here on */
        r->units = calloc((size_t)(c->nsub > 0 ? c->nsub : 1), sizeof(cs_unit *));
        if (r->units) {
            memcpy(r->units, c->units, sizeof(cs_unit *) * (size_t)c->nsub);
            r->nunits = c->nsub;
        } else { free(r); r = NULL; }
    }
    cs_model_set models;
    int rc = cs_model_set_init(&models, c->nsub, c->models, err);   /* owns the models from here on */
    if (!r) {
        if (!rc) cs_model_set_free(&models);
        if (c->units)
            for (int i = 0; i < c->nsub; i++) cs_unit_destroy(c->units[i]);
        return rc ? rc : cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    r->nsub = c->nsub;
    r->models = models;
    if (rc) {
        cs_run_destroy(r);
        return rc;
    }
#define FAIL(x) do { if ((rc = (x))) goto fail; } while (0)
    if (c->units && c->monolithic) FAIL(cs_fail(err, CS_ERR_ARG, "monolithic: not available with FMU subsystems"));
    FAIL(make_network(&r->net, &r->models, c->nsub, c->units ? r->units : NULL, c->nconn, c->conn_in, c->conn_out,
                      c->conn_gain, c->r, err));
    r->have_net = 1;
    cs_network *unit_net = &r->net;
    cs_approx_spec approx = c->approx;
    int update = c->update;
    if (c->monolithic) {
        /* one unit integrates the strongly coupled composite; it has no inputs, so the master's coupling is void */
        FAIL(cs_model_set_monolithic(&r->models, &r->net, err));
        FAIL(make_network(&r->unit_net, &r->models, 1, NULL, 0, NULL, NULL, NULL, NULL, err));
        r->have_unit_net = 1;
        unit_net = &r->unit_net;
        r->nunits = 1;
        approx = (cs_approx_spec){CS_APPROX_LAGRANGE, 0};
        update = CS_UPDATE_CONSISTENT;
    } else {
        r->nunits = c->nsub;
    }
    if (!r->units) r->units = calloc((size_t)r->nunits, sizeof(cs_unit *));
    if (!r->units) FAIL(cs_fail(err, CS_ERR_NOMEM, "out of memory"));
    FAIL(make_units(c, r, err));
    FAIL(make_coupling(c, r, unit_net, &approx, err));
    FAIL(make_scheme(c, r, err));
    FAIL(make_controller(c, r, unit_net, err));
    if (c->share) FAIL(make_share(c, r, err));
    cs_algorithm_config ac = {.nsub = r->nunits, .units = r->units, .net = unit_net, .coupling = r->coupling,
                              .scheme = r->scheme, .controller = r->controller, .estimator = r->estimator,
                              .observers = r->observers,
                              .nobs = 0, .update = update, .divergence_bound = c->divergence_bound,
                              .continue_always = c->monolithic, .t0 = c->t0, .t_end = c->t_end, .x0 = c->x0,
                              .t_out = c->t_out, .nout = c->nout, .timing = c->timing, .share = r->share};
    FAIL(cs_algorithm_create(&ac, &r->alg, err));
    r->nx = 0;
    for (int i = 0; i < r->nunits; i++) r->nx += r->units[i]->nx;
    r->ny = unit_net->ny;
    r->nu = unit_net->nu;
    *out = r;
    return CS_OK;
#undef FAIL
fail:
    cs_run_destroy(r);
    return rc;
}

/* The coupling's log (its kind's `log`); out->n = -1 where the kind keeps none. */
static int coupling_log(const cs_run *r, cs_fields *out, cs_err *err) {
    out->n = -1;
    if (!r->coupling_kind || !r->coupling_kind->log) return CS_OK;
    out->n = 0;
    return r->coupling_kind->log(r->coupling, out, err);
}

int cs_run_get_report(const cs_run *r, cs_run_report *out, cs_err *err) {
    memset(out, 0, sizeof *out);
    out->macro_steps = cs_algorithm_steps(r->alg);
    out->rejected_steps = cs_algorithm_rejected(r->alg);
    out->newton_iterations = r->net.newton_iterations;
    out->nunits = r->nunits;
    out->threads = cs_jacobi_threads(r->scheme, NULL);
    out->units = calloc((size_t)(r->nunits > 0 ? r->nunits : 1), sizeof *out->units);
    out->thread_idle = calloc((size_t)(out->threads > 0 ? out->threads : 1), sizeof(double));
    out->thread_busy = calloc((size_t)(out->threads > 0 ? out->threads : 1), sizeof(double));
    out->thread_stolen = calloc((size_t)(out->threads > 0 ? out->threads : 1), sizeof(long));
    out->thread_units = calloc((size_t)(out->threads > 0 ? out->threads : 1), sizeof(int));
    out->unit_cpu = calloc((size_t)(r->nunits > 0 ? r->nunits : 1), sizeof(double));
    out->unit_cpu_idle = calloc((size_t)(r->nunits > 0 ? r->nunits : 1), sizeof(double));
    out->unit_rhs = calloc((size_t)(r->nunits > 0 ? r->nunits : 1), sizeof(double));
    out->unit_rhs_idle = calloc((size_t)(r->nunits > 0 ? r->nunits : 1), sizeof(double));
    if (!out->units || !out->thread_idle || !out->thread_busy || !out->thread_stolen || !out->thread_units || !out->unit_cpu ||
        !out->unit_cpu_idle || !out->unit_rhs || !out->unit_rhs_idle) {
        cs_run_report_free(out);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    for (int i = 0; i < r->nunits; i++) {
        cs_unit_report *u = &out->units[i];
        cs_unit_get_stats(r->units[i], &u->stats);
        u->timed = r->units[i]->timing;
        u->idle = r->units[i]->idle;
        u->save_wall = r->units[i]->save_wall;
    }
    out->iterative = cs_scheme_iterations(r->scheme, out->macro_steps, &out->iterations_per_step, &out->iterations);
    out->has_step_records = cs_kraft_control_records(r->controller, &out->step_records);
    cs_algorithm_get_timing(r->alg, &out->timing);
    cs_jacobi_threads(r->scheme, out->thread_idle);
    out->has_thread_work = cs_jacobi_thread_work(r->scheme, out->thread_busy, out->thread_stolen,
                                                 out->thread_units, &out->cpu_critical);
    if (!cs_jacobi_cpu_times(r->scheme, r->nunits, out->unit_cpu, out->unit_cpu_idle, out->unit_rhs,
                             out->unit_rhs_idle)) {
        free(out->unit_cpu); free(out->unit_cpu_idle); free(out->unit_rhs); free(out->unit_rhs_idle);
        out->unit_cpu = out->unit_cpu_idle = out->unit_rhs = out->unit_rhs_idle = NULL;
    }
    if (coupling_log(r, &out->coupling_log, err)) {
        cs_run_report_free(out);
        return err->code;
    }
    /* last: what is handed over cannot be lost to a failure above */
    out->nx = r->nx; out->ny = r->ny; out->nu = r->nu;
    if (r->recorder) {
        out->records = cs_recorder_count(r->recorder);
        cs_recorder_hand_over(r->recorder, &out->records_t, &out->records_x, &out->records_y, &out->records_u);
    }
    out->model_cause = cs_model_set_take_cause(&r->models);
    return CS_OK;
}

void cs_run_report_free(cs_run_report *r) {
    free(r->records_t); free(r->records_x); free(r->records_y); free(r->records_u);
    free(r->units); free(r->thread_idle); free(r->thread_busy); free(r->thread_stolen); free(r->thread_units);
    free(r->unit_cpu); free(r->unit_cpu_idle); free(r->unit_rhs); free(r->unit_rhs_idle);
    memset(r, 0, sizeof *r);
}

long cs_run_capacity(const cs_run *r) {
    if (r->max_steps > 0) return r->max_steps + 1;
    if (r->adaptive) return 1024;
    long n = cs_fixed_controller_max_steps(r->controller);
    return n < 0 ? -1 : n + 1;
}

int cs_run_add_observer(cs_run *r, cs_observer *o, cs_err *err) {
    if (r->nobs >= (int)(sizeof r->observers / sizeof r->observers[0])) {
        cs_observer_destroy(o);
        return cs_fail(err, CS_ERR_ARG, "run: too many observers");
    }
    r->observers[r->nobs++] = o;
    return CS_OK;
}

int cs_run_add_recorder(cs_run *r, cs_observer *o, cs_err *err) {
    CS_TRY(cs_run_add_observer(r, o, err));
    r->recorder = o;
    return CS_OK;
}

int cs_run_execute(cs_run *r, cs_err *err) {
    cs_algorithm_set_observers(r->alg, r->observers, r->nobs);
    return cs_algorithm_run(r->alg, err);
}
