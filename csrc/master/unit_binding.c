/* See master/unit_binding.h: each op forwards to the unit interface (units/unit.h). */
#include "master/unit_binding.h"

#define U(i) (((cs_unit *const *)units)[i])

static const char *ua_name(const void *units, int i) { return U(i)->name; }
static int ua_nx(const void *units, int i) { return U(i)->nx; }
static int ua_nu(const void *units, int i) { return U(i)->nu; }
static int ua_set_trace(void *units, int i, int on, cs_err *err) { return cs_unit_set_trace(U(i), on, err); }
static int ua_trace_integral(void *units, int i, double T1, double H, double *yint) {
    return cs_unit_trace_integral(U(i), T1, H, yint);
}
static int ua_has_step_integral(const void *units, int i) { return cs_unit_has_step_integral(U(i)); }
static int ua_step_integral(const void *units, int i, double *Q) { return cs_unit_step_integral(U(i), Q); }
static int ua_has_states(const void *units, int i) { return cs_unit_has_states(U(i)); }
static const double *ua_states(const void *units, int i) { return cs_unit_states(U(i)); }
static void *ua_snapshot_create(void *units, int i) { return cs_unit_snapshot_create(U(i)); }
static void ua_snapshot_destroy(const void *units, int i, void *snap) { cs_unit_snapshot_destroy(U(i), snap); }
static void ua_save_state(void *units, int i, void *snap) { cs_unit_save_state(U(i), snap); }
static void ua_restore_state(void *units, int i, const void *snap) { cs_unit_restore_state(U(i), snap); }
static int ua_do_step(void *units, int i, double T, double H, const cs_input *in, int restart, cs_err *err) {
    return cs_unit_do_step(U(i), T, H, in, restart, err);
}

static const cs_unit_access_ops OPS = {
    .name = ua_name, .nx = ua_nx, .nu = ua_nu, .set_trace = ua_set_trace, .trace_integral = ua_trace_integral,
    .has_step_integral = ua_has_step_integral, .step_integral = ua_step_integral, .has_states = ua_has_states,
    .states = ua_states, .snapshot_create = ua_snapshot_create, .snapshot_destroy = ua_snapshot_destroy,
    .save_state = ua_save_state, .restore_state = ua_restore_state, .do_step = ua_do_step,
};

cs_unit_access cs_unit_access_of(cs_unit **units, int n) {
    return (cs_unit_access){.ops = &OPS, .units = units, .n = n};
}
