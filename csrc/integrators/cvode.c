/* SUNDIALS CVODE stepper (BDF or Adams-Moulton, dense Newton), SUNDIALS 6.x with a SUNDIALS 7 path.
 *
 * At every macro point the integrator is re-initialised (CVodeReInit): the coupling input may jump or have a
 * kink at T_N, and a multistep history across it would be wrong. CVodeSetStopTime lands exactly on T_{N+1}.
 * The re-initialisation also makes (t, x) the complete state, so rollback is exact. With `continue_smooth`, the
 * master may ask to keep the history where the input is continuous (EXTRIPOL): fewer restarts of BDF at order 1.
 * With `continue_agreeing` the history is also kept where an input that may jump (Lagrange, ZOH, ...) agrees at
 * T_N with the old one to the tolerance (input_agrees), and under step control; a rolled-back step restarts (the
 * public API cannot save the Nordsieck history: kraft2021 §12.1's workspace dump is out of reach). With
 * `warm_start` a re-initialisation at a state the integrator reached itself (a jump, a rollback, a side run from
 * T_N) starts with the step size it had there (CVodeSetInitStep) instead of CVODE's estimate (warm_h0). With
 * `continue_jumps` the history is kept across any jump (T25: kraft2021's IDA at fixed H is never re-initialised). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_version.h>
#include <sunlinsol/sunlinsol_band.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_band.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "integrators/stepper.h"

/* SUNDIALS 7 compatibility: communicator argument and error-handler API changed. */
#if SUNDIALS_VERSION_MAJOR >= 7
#define CS_SUN_COMM_NULL SUN_COMM_NULL
#else
#define CS_SUN_COMM_NULL NULL
#endif

/* One CVODE integrator with its linear solver. `tag` names the stepper state (cs_stepper.gen) it stands at with
 * its history, 0 when none (re-initialised, failed, or stepping). */
typedef struct cvode_slot {
    void *mem;
    SUNMatrix J;
    SUNLinearSolver LS;
    int initialized;
    long initialized_steps; /* steps since the last re-initialisation */
    long tag;
    double *u_end;        /* nu: the input at the end of its last step (continue_agreeing) */
} cvode_slot;

typedef struct cvode_content {
    SUNContext sunctx;
    N_Vector y;
    /* With continue_agreeing two integrators: a restart re-initialises the spare one, so that the history of the
     * last step survives a side integration from a restored state (kraft2021 §8.2/8.3's comparative runs, dense
     * output), and restoring that step's state (cs_stepper_restore) resumes it (cvode_resume). One otherwise. */
    cvode_slot slot[2];
    int nslots;
    cvode_slot *a;        /* the active one */
    long gen;             /* the last cs_stepper.gen handed out */
    const cs_input *in;   /* input of the current macro step */
    cs_stepper *st;
    cs_err cb_err;        /* error of a model callback, reported after CVode returns */
    char sun_msg[256];    /* last message from SUNDIALS' error handler */
    int continue_smooth;  /* keep the history where the master says the input is continuous (CS_SMOOTH) */
    int continue_agreeing; /* and where the input's value agrees (CS_JUMPS), also under step control */
    int continue_jumps;   /* and where it does not (the thesis' IDA, which kraft2021 never re-initialises) */
    double *f_new, *f_old; /* nx scratch of input_agrees */
    N_Vector ewt;         /* CVODE's error weights (input_agrees) */
    double *jac_buf;      /* nx * nx row-major */
    int warm_start;       /* a restart at a known state starts with the step size CVODE had there */
    long warm_gen[2];     /* the states (cs_stepper.gen) whose first step is known ... */
    double warm_h[2];     /* ... and that step (warm_h0) */
    N_Vector dky;         /* y'' at the end of a step (warm_h0) */
    int band;             /* band linear solver (linear_solver="band") */
    int ml, mu;           /* its half-bandwidths (< 0: found from the model at the first step) */
} cvode_content;

static int cv_rhs(sunrealtype t, N_Vector y, N_Vector ydot, void *user) {
    cvode_content *c = user;
    cs_stepper *st = c->st;
    cs_input_eval(c->in, t, st->u);
    int rc = cs_model_rhs(st->model, t, N_VGetArrayPointer(y), st->u, N_VGetArrayPointer(ydot), &c->cb_err);
    return rc ? -1 : 0; /* unrecoverable: a model callback failed */
}

static int cv_jac(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix J, void *user, N_Vector t1, N_Vector t2,
                  N_Vector t3) {
    cvode_content *c = user;
    cs_stepper *st = c->st;
    int nx = st->model->nx;
    cs_input_eval(c->in, t, st->u);
    if (cs_model_jac(st->model, t, N_VGetArrayPointer(y), st->u, c->jac_buf)) return -1;
    for (int j = 0; j < nx; j++) {
        sunrealtype *col = SUNDenseMatrix_Column(J, j);
        for (int i = 0; i < nx; i++) col[i] = c->jac_buf[(size_t)i * nx + j];
    }
    st->stats.jac_evals++;
    return 0;
}

#if SUNDIALS_VERSION_MAJOR >= 7
static void cv_errhandler(int line, const char *func, const char *file, const char *msg, SUNErrCode code,
                          void *data, SUNContext ctx) {
    cvode_content *c = data;
    snprintf(c->sun_msg, sizeof c->sun_msg, "%s: %s", func ? func : "CVODE", msg ? msg : "");
}
#else
static void cv_errhandler(int code, const char *module, const char *function, char *msg, void *data) {
    cvode_content *c = data;
    snprintf(c->sun_msg, sizeof c->sun_msg, "%s: %s", function ? function : "CVODE", msg ? msg : "");
}
#endif

static void update_stats(cs_stepper *st) {
    cvode_content *c = st->content;
    long ns = 0, nef = 0, ncf = 0;
    CVodeGetNumSteps(c->a->mem, &ns);
    CVodeGetNumErrTestFails(c->a->mem, &nef);
    CVodeGetNumNonlinSolvConvFails(c->a->mem, &ncf);
    /* Counters restart with CVodeReInit: accumulate per macro step. */
    st->stats.steps += ns;
    st->stats.failures += nef + ncf;
}

/* Half-bandwidths (ml, mu) of df/dx from the model itself: one difference per state at two points, the current
 * state and a deterministic offset of it (so that a term whose derivative vanishes at the current state, e.g. a
 * cubic spring at rest, still shows); a non-finite difference counts as a dependence. Entries outside the band
 * found this way would only slow CVODE's Newton iteration down, never change its accuracy. Once per run. */
static int find_band(cs_stepper *st, double T, const cs_input *in, int *ml, int *mu, cs_err *err) {
    const int nx = st->model->nx;
    double *w = malloc(sizeof(double) * 4 * (size_t)nx);
    if (!w) return cs_fail(err, CS_ERR_NOMEM, "CVODE: out of memory (band)");
    double *x = w, *f0 = w + nx, *f1 = w + 2 * nx, *xp = w + 3 * nx;
    int lo = 0, up = 0, rc = CS_OK;
    cs_input_eval(in, T, st->u);
    for (int probe = 0; probe < 2 && !rc; probe++) {
        for (int j = 0; j < nx; j++) {
            double xj = st->x[j];
            x[j] = probe ? xj + 1e-3 * (1.0 + fabs(xj)) * (double)((j * 7) % 11 - 5) / 5.0 : xj;
        }
        rc = cs_model_rhs(st->model, T, x, st->u, f0, err);
        for (int j = 0; j < nx && !rc; j++) {
            memcpy(xp, x, sizeof(double) * nx);
            double d = 1.4901161193847656e-08 * fmax(fabs(x[j]), 1e-6);
            xp[j] = x[j] + d;
            rc = cs_model_rhs(st->model, T, xp, st->u, f1, err);
            for (int i = 0; i < nx && !rc; i++)
                if (!(f1[i] == f0[i])) {
                    if (i - j > lo) lo = i - j;
                    if (j - i > up) up = j - i;
                }
        }
    }
    free(w);
    *ml = lo;
    *mu = up;
    return rc;
}

static int band_setup(cs_stepper *st, double T, const cs_input *in, cs_err *err) {
    cvode_content *c = st->content;
    int nx = st->model->nx;
    if (c->ml < 0 || c->mu < 0) {
        int ml = 0, mu = 0;
        CS_TRY(find_band(st, T, in, &ml, &mu, err));
        if (c->ml < 0) c->ml = ml;
        if (c->mu < 0) c->mu = mu;
    }
    if (c->ml > nx - 1) c->ml = nx - 1;
    if (c->mu > nx - 1) c->mu = nx - 1;
    for (int k = 0; k < c->nslots; k++) {
        cvode_slot *sl = &c->slot[k];
        sl->J = SUNBandMatrix(nx, c->mu, c->ml, c->sunctx);
        sl->LS = sl->J ? SUNLinSol_Band(c->y, sl->J, c->sunctx) : NULL;
        if (!sl->J || !sl->LS || CVodeSetLinearSolver(sl->mem, sl->LS, sl->J) != CV_SUCCESS)
            return cs_fail(err, CS_ERR_SOLVER, "subsystem %s: CVODE band linear solver set-up failed%s%s",
                           st->model->name, c->sun_msg[0] ? ": " : "", c->sun_msg);
    }
    return CS_OK;
}

int cs_cvode_bandwidth(const cs_stepper *st, int *ml, int *mu) {
    const cvode_content *c = st->content;
    if (!c || !c->band) return 0;
    *ml = c->ml;
    *mu = c->mu;
    return 1;
}

/* The master's restart code (input/input.h) against the options: 1 re-initialise, 0 keep the history, -1 keep it
 * if the input agrees (input_agrees). */
static int restart_rule(const cvode_content *c, int restart) {
    if (restart == CS_CONTINUE) return 0;
    if (restart == CS_RESTART) return 1;
    if ((restart & CS_MAY_ROLL_BACK) && !c->continue_agreeing) return 1;
    if ((restart & CS_SIDE_RUNS) && c->continue_agreeing) return 1;
    if ((restart & ~(CS_MAY_ROLL_BACK | CS_SIDE_RUNS)) == CS_SMOOTH)
        return !(c->continue_smooth || c->continue_agreeing);
    return c->continue_jumps ? 0 : c->continue_agreeing ? -1 : 1;
}

/* Whether the new input agrees at T with the one the history was built with: equal values, or a jump of the
 * right-hand side at (T, x) that moves the state over CVODE's next micro step h by no more than its error weights
 * allow, h ||f(T, x, u_new) - f(T, x, u_old)||_WRMS <= 1. The history then describes the new problem as well as
 * the error test asks; a larger jump restarts (the error test would cut h and the order down anyway). Two
 * right-hand sides per macro point where the values differ (counted in the model's rhs_calls). */
static int input_agrees(cs_stepper *st, double T, const cs_input *in, int *agrees, cs_err *err) {
    cvode_content *c = st->content;
    const int nx = st->model->nx, nu = st->model->nu;
    cs_input_eval(in, T, st->u);
    *agrees = 1;
    if (nu == 0 || !memcmp(st->u, c->a->u_end, sizeof(double) * (size_t)nu)) return CS_OK;
    sunrealtype h = 0.0;
    if (CVodeGetCurrentStep(c->a->mem, &h) != CV_SUCCESS || CVodeGetErrWeights(c->a->mem, c->ewt) != CV_SUCCESS) {
        *agrees = 0;
        return CS_OK;
    }
    CS_TRY(cs_model_rhs(st->model, T, st->x, st->u, c->f_new, err));
    CS_TRY(cs_model_rhs(st->model, T, st->x, c->a->u_end, c->f_old, err));
    const sunrealtype *w = N_VGetArrayPointer(c->ewt);
    double sum = 0.0;
    for (int i = 0; i < nx; i++) {
        double d = (c->f_new[i] - c->f_old[i]) * w[i];
        sum += d * d;
    }
    *agrees = (double)h * (double)h * sum <= (double)nx;   /* false for NaN */
    return CS_OK;
}

/* The first step of a warm restart at the state `a` stands at (the end of its last step): the step CVODE would
 * take next, at most half the step at which the order-1 start's local error h^2/2 ||y''||_WRMS reaches the error
 * test's bound (BDF and Adams restart at order 1; 1/2 is CVODE's own bias for its first step, cvHin), y'' from the
 * history where the order is >= 2. Kept for the state's gen; the older of the two records that is not the saved
 * state's gives way (a rollback to the saved state finds it). */
static void warm_record(cs_stepper *st, cvode_slot *a, long gen) {
    cvode_content *c = st->content;
    const int nx = st->model->nx;
    sunrealtype h = 0.0, t = 0.0;
    int q = 0;
    if (CVodeGetCurrentStep(a->mem, &h) != CV_SUCCESS || CVodeGetCurrentTime(a->mem, &t) != CV_SUCCESS ||
        CVodeGetCurrentOrder(a->mem, &q) != CV_SUCCESS)
        h = 0.0;
    if (h > 0.0 && q >= 2 && CVodeGetDky(a->mem, t, 2, c->dky) == CV_SUCCESS &&
        CVodeGetErrWeights(a->mem, c->ewt) == CV_SUCCESS) {
        const sunrealtype *d = N_VGetArrayPointer(c->dky), *w = N_VGetArrayPointer(c->ewt);
        double sum = 0.0;
        for (int i = 0; i < nx; i++) sum += (double)(d[i] * w[i]) * (double)(d[i] * w[i]);
        double ydd = sqrt(sum / nx);
        if (ydd > 0.0 && 0.5 * sqrt(2.0 / ydd) < h) h = 0.5 * sqrt(2.0 / ydd);
    }
    int k = c->warm_gen[0] == st->pinned ? 1 : c->warm_gen[1] == st->pinned ? 0
            : c->warm_gen[0] < c->warm_gen[1] ? 0 : 1;
    c->warm_gen[k] = gen;
    c->warm_h[k] = isfinite(h) && h > 0.0 ? (double)h : 0.0;
}

/* The first step of a restart at the state `gen`: the recorded one, 0 (CVODE estimates it) if none. */
static double warm_h0(const cvode_content *c, long gen) {
    for (int k = 0; gen > 0 && k < 2; k++)
        if (c->warm_gen[k] == gen) return c->warm_h[k];
    return 0.0;
}

/* The integrator a restart re-initialises: the active one, unless it stands at the state saved last (which a
 * restore may come back to: the step before a rollback, a comparative integration or a dense output); then the
 * other one. */
static cvode_slot *slot_to_restart(cvode_content *c) {
    if (c->nslots == 2 && c->a->tag && c->a->tag == c->st->pinned)
        c->a = c->a == &c->slot[0] ? &c->slot[1] : &c->slot[0];
    return c->a;
}

static int cvode_step(cs_stepper *st, double T, double H, const cs_input *in, int restart, cs_err *err) {
    cvode_content *c = st->content;
    int nx = st->model->nx;
    if (c->band && !c->a->LS && nx > 0) CS_TRY(band_setup(st, T, in, err));
    c->in = in;
    int same_input = restart == CS_CONTINUE;
    c->cb_err.code = 0;
    c->sun_msg[0] = 0;
    sunrealtype *y = N_VGetArrayPointer(c->y);
    if (nx == 0) { st->t = T + H; return CS_OK; }
    restart = restart_rule(c, restart);
    if (!c->a->initialized || st->t != T) restart = 1;
    if (restart < 0) {
        int agrees = 0;
        CS_TRY(input_agrees(st, T, in, &agrees, err));
        restart = !agrees;
    }
    cvode_slot *a;
    int flag;
    sunrealtype tret = T;
attempt:
    a = restart ? slot_to_restart(c) : c->a;
    a->tag = 0;   /* leaves the state it stood at */
    if (restart) {
        memcpy(y, st->x, sizeof(double) * nx);
        if (CVodeReInit(a->mem, T, c->y) != CV_SUCCESS ||
            (c->warm_start && CVodeSetInitStep(a->mem, warm_h0(c, st->gen)) != CV_SUCCESS))
            return cs_fail(err, CS_ERR_SOLVER, "subsystem %s: CVodeReInit failed: %s", st->model->name, c->sun_msg);
        a->initialized = 1;
        a->initialized_steps = 0;
        st->stats.restarts++;
    }
    /* Land exactly on T+H when the next input may differ; when the same input continues (monolithic), let CVODE
     * step past output points and interpolate there (its dense output is accurate to the tolerance). */
    CVodeSetStopTime(a->mem, same_input && a->initialized_steps && !st->tracing ? 1e300 : T + H);
    tret = T;
    long ns0 = 0, nef0 = 0, ncf0 = 0;
    if (!restart) {
        CVodeGetNumSteps(a->mem, &ns0);
        CVodeGetNumErrTestFails(a->mem, &nef0);
        CVodeGetNumNonlinSolvConvFails(a->mem, &ncf0);
    }
    if (st->tracing) { /* one internal step at a time, each recorded (units/unit.h trace) */
        do {
            flag = CVode(a->mem, T + H, c->y, &tret, CV_ONE_STEP);
            if (flag >= 0) {
                memcpy(st->x, y, sizeof(double) * nx);
                int rc = cs_stepper_trace_push(st, (double)tret, err);
                if (rc) { a->initialized = 0; return rc; }
            }
        } while (flag >= 0 && tret < T + H);
    } else {
        flag = CVode(a->mem, T + H, c->y, &tret, CV_NORMAL);
    }
    if (restart) update_stats(st);
    else {
        long ns = 0, nef = 0, ncf = 0;
        CVodeGetNumSteps(a->mem, &ns);
        CVodeGetNumErrTestFails(a->mem, &nef);
        CVodeGetNumNonlinSolvConvFails(a->mem, &ncf);
        st->stats.steps += ns - ns0;
        st->stats.failures += (nef - nef0) + (ncf - ncf0);
    }
    a->initialized_steps++;
    if (flag < 0) {
        a->initialized = 0;
        /* a kept history CVODE could not continue with (a jump it could not absorb): once more, restarted (st->x
         * still holds x(T) unless traced) */
        if (!restart && !c->cb_err.code && !st->tracing) {
            restart = 1;
            c->sun_msg[0] = 0;
            goto attempt;
        }
        if (c->cb_err.code) {
            if (err) *err = c->cb_err;
            return c->cb_err.code;
        }
        return cs_fail(err, CS_ERR_SOLVER, "subsystem %s: CVODE failed at t = %.17g (flag %d)%s%s", st->model->name,
                       (double)tret, flag, c->sun_msg[0] ? ": " : "", c->sun_msg);
    }
    memcpy(st->x, y, sizeof(double) * nx);
    st->t = T + H;
    if (c->continue_agreeing) {
        cs_input_eval(in, T + H, a->u_end);
        a->tag = ++c->gen;
    }
    if (c->warm_start) {
        if (!c->continue_agreeing) ++c->gen;
        warm_record(st, a, c->gen);
    }
    if (c->continue_agreeing || c->warm_start) st->gen = c->gen;
    return CS_OK;
}

/* After cs_stepper_restore of the state `gen`: 1 (and that integrator active) if one of the two still stands
 * there with its history, 0 (restart) otherwise. */
static int cvode_resume(cs_stepper *st, long gen) {
    cvode_content *c = st->content;
    for (int k = 0; gen > 0 && k < c->nslots; k++)
        if (c->slot[k].tag == gen && c->slot[k].initialized) {
            c->a = &c->slot[k];
            return 1;
        }
    return 0;
}

static void cvode_destroy(cs_stepper *st) {
    cvode_content *c = st->content;
    if (!c) return;
    for (int k = 0; k < 2; k++) {
        cvode_slot *sl = &c->slot[k];
        if (sl->mem) CVodeFree(&sl->mem);
        if (sl->LS) SUNLinSolFree(sl->LS);
        if (sl->J) SUNMatDestroy(sl->J);
        free(sl->u_end);
    }
    if (c->y) N_VDestroy(c->y);
    if (c->ewt) N_VDestroy(c->ewt);
    if (c->dky) N_VDestroy(c->dky);
    if (c->sunctx) SUNContext_Free(&c->sunctx);
    free(c->jac_buf);
    free(c->f_new);
    free(c->f_old);
    free(c);
    st->content = NULL;
}

static const cs_stepper_ops CVODE_OPS = {cvode_step, cvode_destroy, 1, cvode_resume};

/* One integrator with its (dense) linear solver and options; nonzero on failure. */
static int slot_create(cvode_content *c, cvode_slot *sl, const cs_model *model, const cs_solver_opts *opts) {
    int nx = model->nx > 0 ? model->nx : 1;
    if (c->continue_agreeing && !(sl->u_end = calloc((size_t)model->nu + 1, sizeof(double)))) return 1;
    if (!c->band) { /* band: matrix and solver at the first step, when the bandwidth is known */
        sl->J = SUNDenseMatrix(nx, nx, c->sunctx);
        sl->LS = sl->J ? SUNLinSol_Dense(c->y, sl->J, c->sunctx) : NULL;
        if (!sl->LS) return 1;
    }
    sl->mem = CVodeCreate(opts->adams ? CV_ADAMS : CV_BDF, c->sunctx);
    if (!sl->mem) return 1;
#if SUNDIALS_VERSION_MAJOR < 7
    CVodeSetErrHandlerFn(sl->mem, cv_errhandler, c);
#endif
    N_VConst(0.0, c->y);
    if (CVodeInit(sl->mem, cv_rhs, 0.0, c->y) != CV_SUCCESS) return 1;
    if (CVodeSStolerances(sl->mem, opts->rtol, opts->atol) != CV_SUCCESS) return 1;
    if (CVodeSetUserData(sl->mem, c) != CV_SUCCESS) return 1;
    if (!c->band && CVodeSetLinearSolver(sl->mem, sl->LS, sl->J) != CV_SUCCESS) return 1;
    if (c->jac_buf) CVodeSetJacFn(sl->mem, cv_jac);
    CVodeSetMaxNumSteps(sl->mem, opts->max_steps > 0 ? opts->max_steps : 100000);
    if (opts->max_h > 0.0) CVodeSetMaxStep(sl->mem, opts->max_h);
    return 0;
}

int cs_cvode_create(cs_model *model, const cs_solver_opts *opts, cs_stepper **out, cs_err *err) {
    if (!(opts->rtol > 0.0) || !(opts->atol > 0.0))
        return cs_fail(err, CS_ERR_ARG, "CVODE: rtol and atol must be positive");
    cs_stepper *st = cs_stepper_new_empty(model, &CVODE_OPS, err);
    if (!st) return CS_ERR_NOMEM;
    cvode_content *c = calloc(1, sizeof *c);
    if (!c) goto nomem;
    st->content = c;
    c->st = st;
    c->continue_smooth = opts->continue_smooth;
    c->continue_agreeing = opts->continue_agreeing;
    c->warm_start = opts->warm_start;
    c->continue_jumps = opts->continue_jumps && c->continue_agreeing;
    c->nslots = c->continue_agreeing ? 2 : 1;
    c->a = &c->slot[0];
    int nx = model->nx > 0 ? model->nx : 1;
    if (c->continue_agreeing) {
        c->f_new = calloc((size_t)nx, sizeof(double));
        c->f_old = calloc((size_t)nx, sizeof(double));
        if (!c->f_new || !c->f_old) goto nomem;
    }
    /* a model's Jacobian is dense; the band solver uses CVODE's band differences */
    c->band = opts->linear_solver == CS_LINSOL_BAND;
    if (cs_model_has_jac(model) && !c->band && !(c->jac_buf = malloc(sizeof(double) * (size_t)nx * nx))) goto nomem;
    if (SUNContext_Create(CS_SUN_COMM_NULL, &c->sunctx) != 0) goto fail;
#if SUNDIALS_VERSION_MAJOR >= 7
    SUNContext_ClearErrHandlers(c->sunctx);
    SUNContext_PushErrHandler(c->sunctx, cv_errhandler, c);
#endif
    c->ml = opts->band_lower;
    c->mu = opts->band_upper;
    c->y = N_VNew_Serial(nx, c->sunctx);
    if (!c->y) goto fail;
    if ((c->continue_agreeing || c->warm_start) && !(c->ewt = N_VNew_Serial(nx, c->sunctx))) goto fail;
    if (c->warm_start && !(c->dky = N_VNew_Serial(nx, c->sunctx))) goto fail;
    for (int k = 0; k < c->nslots; k++)
        if (slot_create(c, &c->slot[k], model, opts)) goto fail;
    *out = st;
    return CS_OK;
nomem:
    cs_stepper_destroy(st);
    return cs_fail(err, CS_ERR_NOMEM, "CVODE: out of memory");
fail:
    cs_fail(err, CS_ERR_SOLVER, "CVODE: set-up failed for subsystem %s%s%s", model->name,
            c && c->sun_msg[0] ? ": " : "", c ? c->sun_msg : "");
    cs_stepper_destroy(st);
    return CS_ERR_SOLVER;
}
