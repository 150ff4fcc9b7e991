/* FMI 2.0 / 3.0 binaries: dlopen, function tables, instances, status checks and the log queue (fmi/fmi.h). */
#include "fmi/fmi.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------------------------------- */
/* loading */

static void *sym(cs_fmi_lib *lib, const char *name) { return dlsym(lib->handle, name); }

#define REQ(field, name)                                                                                        \
    do {                                                                                                        \
        *(void **)(&(field)) = sym(lib, name);                                                                  \
        if (!(field)) { missing = name; goto fail; }                                                            \
    } while (0)
#define OPT(field, name) (*(void **)(&(field)) = sym(lib, name))

int cs_fmi_lib_open(const char *path, int version, int kind, cs_fmi_lib **out, cs_err *err) {
    *out = NULL;
    if (version != 2 && version != 3) return cs_fail(err, CS_ERR_ARG, "fmu: unsupported FMI version %d", version);
    cs_fmi_lib *lib = calloc(1, sizeof *lib);
    if (!lib) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    lib->log = calloc(CS_FMI_LOG_MAX, sizeof *lib->log);
    if (!lib->log) { free(lib); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
    if (pthread_mutex_init(&lib->lock, NULL)) {
        free(lib->log); free(lib);
        return cs_fail(err, CS_ERR_NOMEM, "fmu: cannot create a mutex");
    }
    lib->version = version;
    dlerror();
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) {
        const char *e = dlerror();
        cs_fail(err, CS_ERR_ARG, "fmu: cannot load the binary %s: %s", path, e ? e : "unknown error");
        cs_fmi_lib_close(lib);
        return CS_ERR_ARG;
    }
    const char *missing = NULL;
    if (version == 2) {
        cs_fmi2_fns *f = &lib->f2;
        REQ(f->instantiate, "fmi2Instantiate");
        REQ(f->freeInstance, "fmi2FreeInstance");
        REQ(f->setupExperiment, "fmi2SetupExperiment");
        REQ(f->enterInitializationMode, "fmi2EnterInitializationMode");
        REQ(f->exitInitializationMode, "fmi2ExitInitializationMode");
        REQ(f->terminate, "fmi2Terminate");
        REQ(f->getReal, "fmi2GetReal");
        REQ(f->setReal, "fmi2SetReal");
        REQ(f->setInteger, "fmi2SetInteger");
        REQ(f->setBoolean, "fmi2SetBoolean");
        OPT(f->getInteger, "fmi2GetInteger");
        OPT(f->setString, "fmi2SetString");
        OPT(f->getBoolean, "fmi2GetBoolean");
        OPT(f->setDebugLogging, "fmi2SetDebugLogging");
        OPT(f->getFMUstate, "fmi2GetFMUstate");
        OPT(f->setFMUstate, "fmi2SetFMUstate");
        OPT(f->freeFMUstate, "fmi2FreeFMUstate");
        OPT(f->getDirectionalDerivative, "fmi2GetDirectionalDerivative");
        if (kind == CS_FMI_CS) {
            REQ(f->doStep, "fmi2DoStep");
            OPT(f->setRealInputDerivatives, "fmi2SetRealInputDerivatives");
            OPT(f->getRealOutputDerivatives, "fmi2GetRealOutputDerivatives");
            OPT(f->getBooleanStatus, "fmi2GetBooleanStatus");
            OPT(f->getRealStatus, "fmi2GetRealStatus");
        } else {
            REQ(f->enterEventMode, "fmi2EnterEventMode");
            REQ(f->newDiscreteStates, "fmi2NewDiscreteStates");
            REQ(f->enterContinuousTimeMode, "fmi2EnterContinuousTimeMode");
            REQ(f->completedIntegratorStep, "fmi2CompletedIntegratorStep");
            REQ(f->setTime, "fmi2SetTime");
            REQ(f->setContinuousStates, "fmi2SetContinuousStates");
            REQ(f->getDerivatives, "fmi2GetDerivatives");
            REQ(f->getEventIndicators, "fmi2GetEventIndicators");
            REQ(f->getContinuousStates, "fmi2GetContinuousStates");
        }
    } else {
        cs_fmi3_fns *f = &lib->f3;
        if (kind == CS_FMI_CS) REQ(f->instantiateCoSimulation, "fmi3InstantiateCoSimulation");
        else REQ(f->instantiateModelExchange, "fmi3InstantiateModelExchange");
        REQ(f->freeInstance, "fmi3FreeInstance");
        REQ(f->enterInitializationMode, "fmi3EnterInitializationMode");
        REQ(f->exitInitializationMode, "fmi3ExitInitializationMode");
        REQ(f->terminate, "fmi3Terminate");
        REQ(f->getFloat64, "fmi3GetFloat64");
        REQ(f->setFloat64, "fmi3SetFloat64");
        REQ(f->setInt32, "fmi3SetInt32");
        REQ(f->setBoolean, "fmi3SetBoolean");
        if (kind == CS_FMI_CS) {
            REQ(f->doStep, "fmi3DoStep");
        } else {
            REQ(f->enterEventMode, "fmi3EnterEventMode");
            REQ(f->updateDiscreteStates, "fmi3UpdateDiscreteStates");
            REQ(f->enterContinuousTimeMode, "fmi3EnterContinuousTimeMode");
            REQ(f->completedIntegratorStep, "fmi3CompletedIntegratorStep");
            REQ(f->setTime, "fmi3SetTime");
            REQ(f->setContinuousStates, "fmi3SetContinuousStates");
            REQ(f->getContinuousStateDerivatives, "fmi3GetContinuousStateDerivatives");
            REQ(f->getEventIndicators, "fmi3GetEventIndicators");
            REQ(f->getContinuousStates, "fmi3GetContinuousStates");
        }
        OPT(f->getFMUState, "fmi3GetFMUState");
        OPT(f->setFMUState, "fmi3SetFMUState");
        OPT(f->freeFMUState, "fmi3FreeFMUState");
        OPT(f->getDirectionalDerivative, "fmi3GetDirectionalDerivative");
        OPT(f->getOutputDerivatives, "fmi3GetOutputDerivatives");
        OPT(f->setString, "fmi3SetString");
        OPT(f->setBinary, "fmi3SetBinary");
        static const char *const tn[CS_FMI_NTYPES] = {"Float64", "Float32", "Int8", "UInt8", "Int16", "UInt16",
                                                      "Int32", "UInt32", "Int64", "UInt64", "Boolean"};
        for (int k = 0; k < CS_FMI_NTYPES; k++) {
            char name[32];
            snprintf(name, sizeof name, "fmi3Get%s", tn[k]);
            OPT(lib->get3[k], name);
            snprintf(name, sizeof name, "fmi3Set%s", tn[k]);
            OPT(lib->set3[k], name);
        }
    }
    *out = lib;
    return CS_OK;
fail:
    cs_fail(err, CS_ERR_ARG, "fmu: the binary %s does not export %s", path, missing);
    cs_fmi_lib_close(lib);
    return CS_ERR_ARG;
}
#undef REQ
#undef OPT

void cs_fmi_lib_close(cs_fmi_lib *lib) {
    if (!lib) return;
    if (lib->handle) dlclose(lib->handle);
    pthread_mutex_destroy(&lib->lock);
    free(lib->log);
    free(lib);
}

static void lib_log(cs_fmi_lib *lib, int status, const char *instance, const char *category, const char *text) {
    if (lib->sink) {
        cs_fmi_msg m;
        m.status = status;
        snprintf(m.instance, sizeof m.instance, "%s", instance ? instance : "");
        snprintf(m.category, sizeof m.category, "%s", category ? category : "");
        snprintf(m.text, sizeof m.text, "%s", text ? text : "");
        lib->sink(lib->sink_ctx, &m);
        return;
    }
    pthread_mutex_lock(&lib->lock);
    long slot;
    if (lib->log_count < CS_FMI_LOG_MAX) slot = (lib->log_first + lib->log_count++) % CS_FMI_LOG_MAX;
    else { /* full: the oldest message makes room */
        slot = lib->log_first;
        lib->log_first = (lib->log_first + 1) % CS_FMI_LOG_MAX;
        lib->log_dropped++;
    }
    cs_fmi_msg *m = &lib->log[slot];
    m->status = status;
    snprintf(m->instance, sizeof m->instance, "%s", instance ? instance : "");
    snprintf(m->category, sizeof m->category, "%s", category ? category : "");
    snprintf(m->text, sizeof m->text, "%s", text ? text : "");
    pthread_mutex_unlock(&lib->lock);
}

long cs_fmi_lib_drain(cs_fmi_lib *lib, cs_fmi_msg *out, long max, long *dropped) {
    pthread_mutex_lock(&lib->lock);
    long n = lib->log_count < max ? lib->log_count : max;
    for (long k = 0; k < n; k++) out[k] = lib->log[(lib->log_first + k) % CS_FMI_LOG_MAX];
    lib->log_first = (lib->log_first + n) % CS_FMI_LOG_MAX;
    lib->log_count -= n;
    *dropped = lib->log_dropped;
    lib->log_dropped = 0;
    pthread_mutex_unlock(&lib->lock);
    return n;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* callbacks */

static void record(cs_fmi_inst *in, int status, const char *category, const char *text) {
    if (status >= 1) snprintf(in->last, sizeof in->last, "%s", text ? text : "");
    lib_log(in->lib, status, in->name, category, text);
}

/* FMI 2 logger: printf-style message; '#r<vr>#' value references are left as they are. */
static void logger2(fmi2ComponentEnvironment env, fmi2String instance, fmi2Status status, fmi2String category,
                    fmi2String message, ...) {
    cs_fmi_inst *in = env;
    if (!in) return;
    char text[400];
    va_list ap;
    va_start(ap, message);
    if (message) vsnprintf(text, sizeof text, message, ap);
    else text[0] = 0;
    va_end(ap);
    record(in, (int)status, category, text);
}

static void logger3(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category, fmi3String message) {
    cs_fmi_inst *in = env;
    if (in) record(in, (int)status, category, message);
}

/* FMI 3 intermediate update (co-simulation, §4.2.2): inside doStep the FMU reports an intermediate time; where it
 * asks for inputs, the unit's hook sets them to the coupling polynomial at that time. Never returns early. */
static void update3(fmi3InstanceEnvironment env, fmi3Float64 t, fmi3Boolean set_requested, fmi3Boolean get_allowed,
                    fmi3Boolean step_finished, fmi3Boolean can_return_early, fmi3Boolean *early_requested,
                    fmi3Float64 *early_time) {
    cs_fmi_inst *in = env;
    if (early_requested) *early_requested = 0;
    if (early_time) *early_time = t;
    if (!in || !set_requested || !in->intermediate || in->cb_rc) return;
    cs_err e = {0};
    in->intermediate_calls++;
    if ((in->cb_rc = in->intermediate(in->intermediate_ctx, t, &e)) != CS_OK)
        snprintf(in->cb_msg, sizeof in->cb_msg, "%s", e.msg);
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* instances */

static const char *status_name(int version, int s) {
    static const char *const n2[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};
    static const char *const n3[] = {"fmi3OK", "fmi3Warning", "fmi3Discard", "fmi3Error", "fmi3Fatal"};
    if (version == 2 && s >= 0 && s <= 5) return n2[s];
    if (version == 3 && s >= 0 && s <= 4) return n3[s];
    return "an unknown status";
}

int cs_fmi_check(cs_fmi_inst *in, int status, const char *fn, double t, cs_err *err) {
    if (status == 0 || status == 1) return CS_OK;
    if (status == 4) in->fatal = 1;
    if (status == 3) in->failed = 1;
    const char *prefix = in->lib->version == 2 ? "fmi2" : "fmi3";
    if (in->last[0])
        return cs_fail(err, CS_ERR_SOLVER, "FMU %s: %s%s returned %s at t = %.10g: %s", in->name, prefix, fn,
                       status_name(in->lib->version, status), t, in->last);
    return cs_fail(err, CS_ERR_SOLVER, "FMU %s: %s%s returned %s at t = %.10g (the FMU logged no message)", in->name,
                   prefix, fn, status_name(in->lib->version, status), t);
}

#define CHECK(call, fn, t) CS_TRY(cs_fmi_check(in, (int)(call), fn, t, err))

/* the start values of other numeric types, Strings (both versions) and Binaries (FMI 3) */
static int set_starts_other(cs_fmi_inst *in, const cs_fmi_starts *st, double t, cs_err *err) {
    if (st->ntyped) {
        cs_fmi_io io;
        int *sig = malloc(sizeof(int) * (size_t)st->ntyped);
        if (!sig) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
        for (int k = 0; k < st->ntyped; k++) sig[k] = k;
        int rc = cs_fmi_io_init(&io, st->ntyped, st->vr_typed, st->type_typed, st->elem_typed, sig, err);
        free(sig);
        if (!rc) rc = cs_fmi_io_set(in, &io, st->typed, t, err);
        cs_fmi_io_free(&io);
        CS_TRY(rc);
    }
    if (st->nstr) {
        if (in->lib->version == 2) {
            if (!in->lib->f2.setString) return cs_fail(err, CS_ERR_ARG, "FMU %s: the binary does not export fmi2SetString", in->name);
            CHECK(in->lib->f2.setString(in->c, st->vr_str, (size_t)st->nstr, st->strs), "SetString", t);
        } else {
            if (!in->lib->f3.setString) return cs_fail(err, CS_ERR_ARG, "FMU %s: the binary does not export fmi3SetString", in->name);
            CHECK(in->lib->f3.setString(in->c, st->vr_str, (size_t)st->nstr, st->strs, (size_t)st->nstr), "SetString", t);
        }
    }
    if (st->nbin) {
        if (in->lib->version != 3 || !in->lib->f3.setBinary)
            return cs_fail(err, CS_ERR_ARG, "FMU %s: the binary does not export fmi3SetBinary", in->name);
        CHECK(in->lib->f3.setBinary(in->c, st->vr_bin, (size_t)st->nbin, st->bin_size, st->bins, (size_t)st->nbin),
              "SetBinary", t);
    }
    return CS_OK;
}

static int set_starts(cs_fmi_inst *in, const cs_fmi_starts *st, double t, cs_err *err) {
    if (!st) return CS_OK;
    CS_TRY(set_starts_other(in, st, t, err));
    if (in->lib->version == 2) {
        const cs_fmi2_fns *f = &in->lib->f2;
        if (st->nreal) CHECK(f->setReal(in->c, st->vr_real, (size_t)st->nreal, st->real), "SetReal", t);
        if (st->nint) CHECK(f->setInteger(in->c, st->vr_int, (size_t)st->nint, st->ints), "SetInteger", t);
        if (st->nbool) CHECK(f->setBoolean(in->c, st->vr_bool, (size_t)st->nbool, st->bools), "SetBoolean", t);
        return CS_OK;
    }
    const cs_fmi3_fns *f = &in->lib->f3;
    if (st->nreal)
        CHECK(f->setFloat64(in->c, st->vr_real, (size_t)st->nreal, st->real, (size_t)st->nreal), "SetFloat64", t);
    if (st->nint) {
        fmi3Int32 *v = malloc(sizeof *v * (size_t)st->nint);
        if (!v) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
        for (int k = 0; k < st->nint; k++) v[k] = st->ints[k];
        int s = f->setInt32(in->c, st->vr_int, (size_t)st->nint, v, (size_t)st->nint);
        free(v);
        CHECK(s, "SetInt32", t);
    }
    if (st->nbool) {
        fmi3Boolean *v = malloc(sizeof *v * (size_t)st->nbool);
        if (!v) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
        for (int k = 0; k < st->nbool; k++) v[k] = st->bools[k] != 0;
        int s = f->setBoolean(in->c, st->vr_bool, (size_t)st->nbool, v, (size_t)st->nbool);
        free(v);
        CHECK(s, "SetBoolean", t);
    }
    return CS_OK;
}

int cs_fmi_inst_create(cs_fmi_lib *lib, int kind, const char *name, const char *token, const char *resources,
                       int logging_on, const cs_fmi_starts *st, double t0, double tol, cs_fmi_inst **out,
                       cs_err *err) {
    *out = NULL;
    pthread_mutex_lock(&lib->lock);
    const int busy = lib->once && lib->live > 0;
    if (!busy) lib->live++;
    pthread_mutex_unlock(&lib->lock);
    if (busy)
        return cs_fail(err, CS_ERR_ARG, "FMU %s: the FMU can be instantiated only once per process "
                       "(canBeInstantiatedOnlyOncePerProcess) and an instance of this cosim.FMU is alive (a run in "
                       "another thread, or the same FMU twice in a system): give each its own cosim.FMU(path), "
                       "which loads its own copy of the binary", name);
    cs_fmi_inst *in = calloc(1, sizeof *in);
    if (!in) {
        pthread_mutex_lock(&lib->lock);
        lib->live--;
        pthread_mutex_unlock(&lib->lock);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    in->lib = lib;
    in->kind = kind;
    snprintf(in->name, sizeof in->name, "%s", name);
    int rc = CS_OK;
    if (lib->version == 2) {
        in->cb2 = (fmi2CallbackFunctions){logger2, calloc, free, NULL, in};
        in->c = lib->f2.instantiate(name, kind == CS_FMI_ME ? fmi2ModelExchange : fmi2CoSimulation, token, resources,
                                    &in->cb2, 0, logging_on != 0);
    } else if (kind == CS_FMI_ME) {
        in->c = lib->f3.instantiateModelExchange(name, token, resources, 0, logging_on != 0, in, logger3);
    } else {
        in->c = lib->f3.instantiateCoSimulation(name, token, resources, 0, logging_on != 0, 0, 0, NULL, 0, in,
                                                logger3, update3);
    }
    if (!in->c) {
        rc = cs_fail(err, CS_ERR_SOLVER, "FMU %s: fmi%dInstantiate failed%s%s", name, lib->version,
                     in->last[0] ? ": " : "", in->last);
        cs_fmi_inst_destroy(in);
        return rc;
    }
#define TRY(x) do { if ((rc = (x)) != CS_OK) goto fail; } while (0)
    if (lib->version == 2) {
        const cs_fmi2_fns *f = &lib->f2;
        TRY(cs_fmi_check(in, f->setupExperiment(in->c, tol > 0, tol > 0 ? tol : 0.0, t0, 0, 0.0), "SetupExperiment",
                         t0, err));
        TRY(set_starts(in, st, t0, err));
        TRY(cs_fmi_check(in, f->enterInitializationMode(in->c), "EnterInitializationMode", t0, err));
        TRY(cs_fmi_check(in, f->exitInitializationMode(in->c), "ExitInitializationMode", t0, err));
        in->initialized = 1;
        if (kind == CS_FMI_ME) { /* FMI 2: event mode after initialisation */
            int changed = 0;
            TRY(cs_fmi_me_event(in, t0, 1, &changed, err));
        }
    } else {
        const cs_fmi3_fns *f = &lib->f3;
        TRY(set_starts(in, st, t0, err));
        TRY(cs_fmi_check(in, f->enterInitializationMode(in->c, tol > 0, tol > 0 ? tol : 0.0, t0, 0, 0.0),
                         "EnterInitializationMode", t0, err));
        TRY(cs_fmi_check(in, f->exitInitializationMode(in->c), "ExitInitializationMode", t0, err));
        in->initialized = 1;
        if (kind == CS_FMI_ME) { /* FMI 3: event mode after initialisation */
            int changed = 0;
            TRY(cs_fmi_me_event(in, t0, 1, &changed, err));
        }
    }
#undef TRY
    *out = in;
    return CS_OK;
fail:
    cs_fmi_inst_destroy(in);
    return rc;
}

void cs_fmi_inst_destroy(cs_fmi_inst *in) {
    if (!in) return;
    /* After Fatal the standard allows no further call into the FMU (FMI 2.0.4 §2.1.3, FMI 3.0 §2.2.3): the
     * instance's own memory is then the FMU's loss, ours is freed. fmiTerminate only where the state machine
     * allows it: after initialisation and not after Error (then only fmiFreeInstance). */
    if (in->c && !in->fatal) {
        const int term = in->initialized && !in->failed;
        if (in->lib->version == 2) {
            if (term) in->lib->f2.terminate(in->c);
            in->lib->f2.freeInstance(in->c);
        } else {
            if (term) in->lib->f3.terminate(in->c);
            in->lib->f3.freeInstance(in->c);
        }
    }
    pthread_mutex_lock(&in->lib->lock);
    in->lib->live--;
    pthread_mutex_unlock(&in->lib->lock);
    free(in);
}

int cs_fmi_terminated(cs_fmi_inst *in, double t, cs_err *err) {
    in->terminated = 1;
    return cs_fail(err, CS_TERMINATED, "FMU %s asked to terminate the simulation at t = %.10g%s%s", in->name, t,
                   in->last[0] ? ": " : "", in->last);
}

/* FMI 2.0.4 §4.2.3: after fmi2Discard from doStep the master asks fmi2GetBooleanStatus(fmi2Terminated) whether
 * the FMU wants to end the simulation (then fmi2GetRealStatus(fmi2LastSuccessfulTime) says up to when). */
int cs_fmi2_discarded(cs_fmi_inst *in, double T, cs_err *err) {
    const cs_fmi2_fns *f = &in->lib->f2;
    fmi2Boolean term = 0;
    if (f->getBooleanStatus && f->getBooleanStatus(in->c, 3, &term) <= 1 && term) {
        fmi2Real last = T;
        if (!f->getRealStatus || f->getRealStatus(in->c, 2, &last) > 1) last = T;
        return cs_fmi_terminated(in, last, err);
    }
    in->failed = 1;   /* stepFailed without a terminate request: nothing more but fmi2FreeInstance from us */
    return cs_fmi_check(in, 2, "DoStep", T, err);
}

int cs_fmi3_do_step(cs_fmi_inst *in, double T, double H, cs_err *err) {
    fmi3Boolean event = 0, terminate = 0, early = 0;
    fmi3Float64 last = T + H;
    in->cb_rc = CS_OK;
    int s = in->lib->f3.doStep(in->c, T, H, 0, &event, &terminate, &early, &last);
    if (in->cb_rc) { /* the inputs of an intermediate update could not be set */
        if (s == 4) in->fatal = 1;
        return cs_fail(err, in->cb_rc, "%s", in->cb_msg);
    }
    CHECK(s, "DoStep", T);
    if (terminate) return cs_fmi_terminated(in, last, err);
    if (early)
        return cs_fail(err, CS_ERR_SOLVER, "FMU %s: fmi3DoStep returned early at t = %.10g (not requested)", in->name,
                       last);
    return CS_OK;
}

int cs_fmi_set_input_derivatives(cs_fmi_inst *in, const unsigned *vr, int n, int order, const double *v, double t,
                                 cs_err *err) {
    if (n == 0) return CS_OK;
    if (in->lib->version != 2 || !in->lib->f2.setRealInputDerivatives)
        return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot set input derivatives", in->name);
    fmi2Integer ord[64];
    for (int done = 0; done < n; done += 64) { /* orders in chunks: no allocation per step */
        int m = n - done < 64 ? n - done : 64;
        for (int k = 0; k < m; k++) ord[k] = order;
        CHECK(in->lib->f2.setRealInputDerivatives(in->c, vr + done, (size_t)m, ord, v + done),
              "SetRealInputDerivatives", t);
    }
    return CS_OK;
}

int cs_fmi_get_output_derivatives(cs_fmi_inst *in, const unsigned *vr, int n, int order, double *v, double t,
                                  cs_err *err) {
    if (n == 0) return CS_OK;
    int ord[64];
    for (int done = 0; done < n; done += 64) {
        int m = n - done < 64 ? n - done : 64;
        for (int k = 0; k < m; k++) ord[k] = order;
        if (in->lib->version == 2) {
            if (!in->lib->f2.getRealOutputDerivatives)
                return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot give output derivatives", in->name);
            CHECK(in->lib->f2.getRealOutputDerivatives(in->c, vr + done, (size_t)m, ord, v + done),
                  "GetRealOutputDerivatives", t);
        } else {
            if (!in->lib->f3.getOutputDerivatives)
                return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot give output derivatives", in->name);
            CHECK(in->lib->f3.getOutputDerivatives(in->c, vr + done, (size_t)m, ord, v + done, (size_t)m),
                  "GetOutputDerivatives", t);
        }
    }
    return CS_OK;
}

int cs_fmi_directional(cs_fmi_inst *in, const unsigned *unk, int nunk, const unsigned *kn, int nkn,
                       const double *seed, double *out, double t, cs_err *err) {
    if (in->lib->version == 2) {
        if (!in->lib->f2.getDirectionalDerivative)
            return cs_fail(err, CS_ERR_ARG, "FMU %s: no directional derivatives", in->name);
        CHECK(in->lib->f2.getDirectionalDerivative(in->c, unk, (size_t)nunk, kn, (size_t)nkn, seed, out),
              "GetDirectionalDerivative", t);
    } else {
        if (!in->lib->f3.getDirectionalDerivative)
            return cs_fail(err, CS_ERR_ARG, "FMU %s: no directional derivatives", in->name);
        CHECK(in->lib->f3.getDirectionalDerivative(in->c, unk, (size_t)nunk, kn, (size_t)nkn, seed, (size_t)nkn,
                                                   out, (size_t)nunk),
              "GetDirectionalDerivative", t);
    }
    return CS_OK;
}

int cs_fmi_has_state(const cs_fmi_inst *in) {
    if (in->lib->version == 2)
        return in->lib->f2.getFMUstate && in->lib->f2.setFMUstate && in->lib->f2.freeFMUstate;
    return in->lib->f3.getFMUState && in->lib->f3.setFMUState && in->lib->f3.freeFMUState;
}

int cs_fmi_get_state(cs_fmi_inst *in, void **state, cs_err *err) {
    if (!cs_fmi_has_state(in)) return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot get its state", in->name);
    if (in->lib->version == 2) CHECK(in->lib->f2.getFMUstate(in->c, state), "GetFMUstate", 0.0);
    else CHECK(in->lib->f3.getFMUState(in->c, state), "GetFMUState", 0.0);
    return CS_OK;
}

int cs_fmi_set_state(cs_fmi_inst *in, void *state, cs_err *err) {
    if (!cs_fmi_has_state(in) || !state) return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot set its state", in->name);
    if (in->lib->version == 2) CHECK(in->lib->f2.setFMUstate(in->c, state), "SetFMUstate", 0.0);
    else CHECK(in->lib->f3.setFMUState(in->c, state), "SetFMUState", 0.0);
    return CS_OK;
}

void cs_fmi_free_state(cs_fmi_inst *in, void **state) {
    if (!*state || in->fatal || !cs_fmi_has_state(in)) return;
    if (in->lib->version == 2) in->lib->f2.freeFMUstate(in->c, state);
    else in->lib->f3.freeFMUState(in->c, state);
    *state = NULL;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* model exchange (FMI 2.0 §3, FMI 3.0 §3) */

int cs_fmi_me_set_time(cs_fmi_inst *in, double t, cs_err *err) {
    if (in->lib->version == 2) CHECK(in->lib->f2.setTime(in->c, t), "SetTime", t);
    else CHECK(in->lib->f3.setTime(in->c, t), "SetTime", t);
    return CS_OK;
}

int cs_fmi_me_set_states(cs_fmi_inst *in, const double *x, int nx, double t, cs_err *err) {
    if (nx == 0) return CS_OK;
    if (in->lib->version == 2) CHECK(in->lib->f2.setContinuousStates(in->c, x, (size_t)nx), "SetContinuousStates", t);
    else CHECK(in->lib->f3.setContinuousStates(in->c, x, (size_t)nx), "SetContinuousStates", t);
    return CS_OK;
}

int cs_fmi_me_get_states(cs_fmi_inst *in, double *x, int nx, double t, cs_err *err) {
    if (nx == 0) return CS_OK;
    if (in->lib->version == 2) CHECK(in->lib->f2.getContinuousStates(in->c, x, (size_t)nx), "GetContinuousStates", t);
    else CHECK(in->lib->f3.getContinuousStates(in->c, x, (size_t)nx), "GetContinuousStates", t);
    return CS_OK;
}

int cs_fmi_me_derivatives(cs_fmi_inst *in, double *xdot, int nx, double t, cs_err *err) {
    if (nx == 0) return CS_OK;
    if (in->lib->version == 2) CHECK(in->lib->f2.getDerivatives(in->c, xdot, (size_t)nx), "GetDerivatives", t);
    else CHECK(in->lib->f3.getContinuousStateDerivatives(in->c, xdot, (size_t)nx), "GetContinuousStateDerivatives", t);
    return CS_OK;
}

int cs_fmi_me_indicators(cs_fmi_inst *in, double *z, int nz, double t, cs_err *err) {
    if (nz == 0) return CS_OK;
    if (in->lib->version == 2) CHECK(in->lib->f2.getEventIndicators(in->c, z, (size_t)nz), "GetEventIndicators", t);
    else CHECK(in->lib->f3.getEventIndicators(in->c, z, (size_t)nz), "GetEventIndicators", t);
    return CS_OK;
}


int cs_fmi_me_completed(cs_fmi_inst *in, double t, int *enter, cs_err *err) {
    *enter = 0;
    if (in->lib->version == 2) {
        fmi2Boolean e = 0, term = 0;
        CHECK(in->lib->f2.completedIntegratorStep(in->c, 1, &e, &term), "CompletedIntegratorStep", t);
        if (term) return cs_fmi_terminated(in, t, err);
        *enter = e != 0;
    } else {
        fmi3Boolean e = 0, term = 0;
        CHECK(in->lib->f3.completedIntegratorStep(in->c, 1, &e, &term), "CompletedIntegratorStep", t);
        if (term) return cs_fmi_terminated(in, t, err);
        *enter = e != 0;
    }
    return CS_OK;
}

int cs_fmi_me_event(cs_fmi_inst *in, double t, int from_init, int *states_changed, cs_err *err) {
    *states_changed = 0;
    int more = 1, next_defined = 0;
    double next_time = 0.0;
    if (in->lib->version == 2) {
        const cs_fmi2_fns *f = &in->lib->f2;
        if (!from_init) CHECK(f->enterEventMode(in->c), "EnterEventMode", t);
        if (in->event_io) CS_TRY(cs_fmi_io_set(in, in->event_io, in->event_u, t, err));
        for (int k = 0; more; k++) {
            if (k >= 1000) break;
            fmi2EventInfo ei = {0};
            CHECK(f->newDiscreteStates(in->c, &ei), "NewDiscreteStates", t);
            if (ei.terminateSimulation) return cs_fmi_terminated(in, t, err);
            more = ei.newDiscreteStatesNeeded;
            *states_changed |= ei.valuesOfContinuousStatesChanged != 0;
            next_defined = ei.nextEventTimeDefined != 0;
            next_time = ei.nextEventTime;
        }
        if (!more) CHECK(f->enterContinuousTimeMode(in->c), "EnterContinuousTimeMode", t);
    } else {
        const cs_fmi3_fns *f = &in->lib->f3;
        if (!from_init) CHECK(f->enterEventMode(in->c), "EnterEventMode", t);
        if (in->event_io) CS_TRY(cs_fmi_io_set(in, in->event_io, in->event_u, t, err));
        for (int k = 0; more; k++) {
            if (k >= 1000) break;
            fmi3Boolean need = 0, term = 0, nominals = 0, values = 0, defined = 0;
            fmi3Float64 next = 0.0;
            CHECK(f->updateDiscreteStates(in->c, &need, &term, &nominals, &values, &defined, &next),
                  "UpdateDiscreteStates", t);
            if (term) return cs_fmi_terminated(in, t, err);
            more = need != 0;
            *states_changed |= values != 0;
            next_defined = defined != 0;
            next_time = next;
        }
        if (!more) CHECK(f->enterContinuousTimeMode(in->c), "EnterContinuousTimeMode", t);
    }
    if (more) return cs_fail(err, CS_ERR_SOLVER, "FMU %s: event iteration did not converge at t = %.10g", in->name, t);
    in->next_defined = next_defined;
    in->next_time = next_time;
    return CS_OK;
}

/* ---------------------------------------------------------------------------------------------------------------- */
/* typed signals */

static const char *const type_names[CS_FMI_NTYPES] = {"Float64", "Float32", "Int8", "UInt8", "Int16", "UInt16",
                                                      "Int32", "UInt32", "Int64", "UInt64", "Boolean"};
static const double type_lo[CS_FMI_NTYPES] = {0, 0, -128.0, 0, -32768.0, 0, -2147483648.0, 0, -9223372036854775808.0,
                                              0, 0};
static const double type_hi[CS_FMI_NTYPES] = {0, 0, 127.0, 255.0, 32767.0, 65535.0, 2147483647.0, 4294967295.0,
                                              9223372036854775807.0, 18446744073709551615.0, 0};

int cs_fmi_io_init(cs_fmi_io *io, int n, const unsigned *vr, const int *type, const int *elem, const int *sig,
                   cs_err *err) {
    memset(io, 0, sizeof *io);
    io->n = n;
    int count[CS_FMI_NTYPES] = {0};
    for (int k = 0; k < n; k++) {
        if (type[k] < 0 || type[k] >= CS_FMI_NTYPES) return cs_fail(err, CS_ERR_ARG, "fmu: unknown type code %d", type[k]);
        /* an array's elements follow each other: element e > 0 continues element e - 1 of the same variable */
        if (elem && elem[k] != 0 && (elem[k] < 0 || k == 0 || elem[k - 1] != elem[k] - 1 || vr[k - 1] != vr[k] ||
                                     type[k - 1] != type[k]))
            return cs_fail(err, CS_ERR_ARG, "fmu: the elements of the array variable (value reference %u) must be "
                           "consecutive signals", vr[k]);
        count[type[k]]++;
    }
    io->buf = calloc((size_t)n + 1, 8);
    if (!io->buf) return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    for (int t = 0; t < CS_FMI_NTYPES; t++) {
        if (!count[t]) continue;
        cs_fmi_io_group *g = &io->g[io->ngroups++];
        g->type = t;
        g->vr = malloc(sizeof(unsigned) * (size_t)count[t]);
        g->vr_of = malloc(sizeof(unsigned) * (size_t)count[t]);
        g->sig = malloc(sizeof(int) * (size_t)count[t]);
        if (!g->vr || !g->vr_of || !g->sig) { cs_fmi_io_free(io); return cs_fail(err, CS_ERR_NOMEM, "out of memory"); }
        for (int k = 0; k < n; k++) {
            if (type[k] != t) continue;
            if (!elem || elem[k] == 0) g->vr[g->nvr++] = vr[k];
            g->vr_of[g->n] = vr[k];
            g->sig[g->n++] = sig[k];
        }
    }
    io->direct = io->ngroups == 1 && io->g[0].type == CS_FMI_F64 && io->g[0].nvr == n;
    for (int k = 0; io->direct && k < n; k++) io->direct = io->g[0].sig[k] == k;
    return CS_OK;
}

void cs_fmi_io_free(cs_fmi_io *io) {
    for (int k = 0; k < io->ngroups; k++) { free(io->g[k].vr); free(io->g[k].vr_of); free(io->g[k].sig); }
    free(io->buf);
    memset(io, 0, sizeof *io);
}

/* (scalars only: the derivative functions take one value per value reference) */
int cs_fmi_io_all_real(const cs_fmi_io *io) {
    return io->ngroups == 0 || (io->ngroups == 1 && io->g[0].type == CS_FMI_F64 && io->g[0].nvr == io->n);
}

int cs_fmi_io_set(cs_fmi_inst *in, cs_fmi_io *io, const double *v, double t, cs_err *err) {
    if (io->n == 0) return CS_OK;
    if (io->direct) return cs_fmi_set_real(in, io->g[0].vr, io->n, v, t, err);
    for (int q = 0; q < io->ngroups; q++) {
        const cs_fmi_io_group *g = &io->g[q];
        const int ty = g->type;
        for (int k = 0; k < g->n; k++) {
            const double x = v[g->sig[k]];
            if (ty == CS_FMI_F64) { ((double *)io->buf)[k] = x; continue; }
            if (ty == CS_FMI_F32) { ((float *)io->buf)[k] = (float)x; continue; }
            if (ty == CS_FMI_BOOL) {
                if (in->lib->version == 2) ((fmi2Boolean *)io->buf)[k] = x != 0.0;
                else ((fmi3Boolean *)io->buf)[k] = x != 0.0;
                continue;
            }
            const double r = nearbyint(x);
            if (!(r >= type_lo[ty] && r <= type_hi[ty]))
                return cs_fail(err, CS_ERR_SOLVER, "FMU %s: value %.17g for the %s variable (value reference %u) at "
                               "t = %.10g is out of its range", in->name, x, type_names[ty], g->vr_of[k], t);
            switch (ty) {
            case CS_FMI_I8: ((int8_t *)io->buf)[k] = (int8_t)r; break;
            case CS_FMI_U8: ((uint8_t *)io->buf)[k] = (uint8_t)r; break;
            case CS_FMI_I16: ((int16_t *)io->buf)[k] = (int16_t)r; break;
            case CS_FMI_U16: ((uint16_t *)io->buf)[k] = (uint16_t)r; break;
            case CS_FMI_I32: ((int32_t *)io->buf)[k] = (int32_t)r; break;
            case CS_FMI_U32: ((uint32_t *)io->buf)[k] = (uint32_t)r; break;
            case CS_FMI_I64: ((int64_t *)io->buf)[k] = r >= 9223372036854775807.0 ? INT64_MAX : (int64_t)r; break;
            default: ((uint64_t *)io->buf)[k] = r >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)r; break;
            }
        }
        if (in->lib->version == 2) {
            const cs_fmi2_fns *f = &in->lib->f2;
            if (g->nvr != g->n) return cs_fail(err, CS_ERR_ARG, "FMU %s: arrays in an FMI 2 FMU", in->name);
            if (ty == CS_FMI_F64) CHECK(f->setReal(in->c, g->vr, (size_t)g->n, io->buf), "SetReal", t);
            else if (ty == CS_FMI_I32) CHECK(f->setInteger(in->c, g->vr, (size_t)g->n, io->buf), "SetInteger", t);
            else if (ty == CS_FMI_BOOL) CHECK(f->setBoolean(in->c, g->vr, (size_t)g->n, io->buf), "SetBoolean", t);
            else return cs_fail(err, CS_ERR_ARG, "FMU %s: type %s in an FMI 2 FMU", in->name, type_names[ty]);
        } else {
            if (!in->lib->set3[ty])
                return cs_fail(err, CS_ERR_ARG, "FMU %s: the binary does not export fmi3Set%s", in->name,
                               type_names[ty]);
            CS_TRY(cs_fmi_check(in, (int)in->lib->set3[ty](in->c, g->vr, (size_t)g->nvr, io->buf, (size_t)g->n),
                                "Set", t, err));
        }
    }
    return CS_OK;
}

int cs_fmi_io_get(cs_fmi_inst *in, cs_fmi_io *io, double *v, double t, cs_err *err) {
    if (io->n == 0) return CS_OK;
    if (io->direct) return cs_fmi_get_real(in, io->g[0].vr, io->n, v, t, err);
    for (int q = 0; q < io->ngroups; q++) {
        const cs_fmi_io_group *g = &io->g[q];
        const int ty = g->type;
        if (in->lib->version == 2) {
            const cs_fmi2_fns *f = &in->lib->f2;
            if (g->nvr != g->n) return cs_fail(err, CS_ERR_ARG, "FMU %s: arrays in an FMI 2 FMU", in->name);
            if (ty == CS_FMI_F64) CHECK(f->getReal(in->c, g->vr, (size_t)g->n, io->buf), "GetReal", t);
            else if (ty == CS_FMI_I32 && f->getInteger)
                CHECK(f->getInteger(in->c, g->vr, (size_t)g->n, io->buf), "GetInteger", t);
            else if (ty == CS_FMI_BOOL && f->getBoolean)
                CHECK(f->getBoolean(in->c, g->vr, (size_t)g->n, io->buf), "GetBoolean", t);
            else
                return cs_fail(err, CS_ERR_ARG, "FMU %s: cannot get %s variables (type or function missing)",
                               in->name, type_names[ty]);
        } else {
            if (!in->lib->get3[ty])
                return cs_fail(err, CS_ERR_ARG, "FMU %s: the binary does not export fmi3Get%s", in->name,
                               type_names[ty]);
            CS_TRY(cs_fmi_check(in, (int)in->lib->get3[ty](in->c, g->vr, (size_t)g->nvr, io->buf, (size_t)g->n),
                                "Get", t, err));
        }
        for (int k = 0; k < g->n; k++) {
            double x;
            switch (ty) {
            case CS_FMI_F64: x = ((double *)io->buf)[k]; break;
            case CS_FMI_F32: x = ((float *)io->buf)[k]; break;
            case CS_FMI_I8: x = ((int8_t *)io->buf)[k]; break;
            case CS_FMI_U8: x = ((uint8_t *)io->buf)[k]; break;
            case CS_FMI_I16: x = ((int16_t *)io->buf)[k]; break;
            case CS_FMI_U16: x = ((uint16_t *)io->buf)[k]; break;
            case CS_FMI_I32: x = ((int32_t *)io->buf)[k]; break;
            case CS_FMI_U32: x = ((uint32_t *)io->buf)[k]; break;
            case CS_FMI_I64: x = (double)((int64_t *)io->buf)[k]; break;
            case CS_FMI_U64: x = (double)((uint64_t *)io->buf)[k]; break;
            default: x = in->lib->version == 2 ? ((fmi2Boolean *)io->buf)[k] != 0 : ((fmi3Boolean *)io->buf)[k] != 0;
            }
            v[g->sig[k]] = x;
        }
    }
    return CS_OK;
}
