/* The units as couplings and step controllers see them. Coupling and control sit beside the units, not above them
 * (DESIGN.md §1), so they never include units/unit.h: the run lends them this small table of the unit ops they use,
 * bound to the unit interface in master/unit_binding.c. Each op takes the unit's index; the functions below call
 * them (units/unit.h documents each op). */
#ifndef COSIM_UNIT_ACCESS_H
#define COSIM_UNIT_ACCESS_H

#include "common.h"

struct cs_input;

typedef struct cs_unit_access_ops {
    const char *(*name)(const void *units, int i);
    int (*nx)(const void *units, int i);
    int (*nu)(const void *units, int i);
    /* NEPCE and the pre-step's intermediate-value correction: the micro-step trace and int y dt over the last step
     * from it (cs_unit_trace_integral) */
    int (*set_trace)(void *units, int i, int on, cs_err *err);
    int (*trace_integral)(void *units, int i, double T1, double H, double *yint);
    /* balance correction: the exact step integral of a unit with quadrature states */
    int (*has_step_integral)(const void *units, int i);
    int (*step_integral)(const void *units, int i, double *Q);
    /* the comparative integrations of exLE and exMD: rerun a unit from its saved state and read its states */
    int (*has_states)(const void *units, int i);
    const double *(*states)(const void *units, int i);
    void *(*snapshot_create)(void *units, int i);
    void (*snapshot_destroy)(const void *units, int i, void *snap);
    void (*save_state)(void *units, int i, void *snap);
    void (*restore_state)(void *units, int i, const void *snap);
    int (*do_step)(void *units, int i, double T, double H, const struct cs_input *in, int restart, cs_err *err);
} cs_unit_access_ops;

typedef struct cs_unit_access {
    const cs_unit_access_ops *ops;
    void *units;                /* the run's units (not owned) */
    int n;
} cs_unit_access;

static inline const char *cs_ua_name(const cs_unit_access *a, int i) { return a->ops->name(a->units, i); }
static inline int cs_ua_nx(const cs_unit_access *a, int i) { return a->ops->nx(a->units, i); }
static inline int cs_ua_nu(const cs_unit_access *a, int i) { return a->ops->nu(a->units, i); }
static inline int cs_ua_set_trace(const cs_unit_access *a, int i, int on, cs_err *err) {
    return a->ops->set_trace(a->units, i, on, err);
}
static inline int cs_ua_trace_integral(const cs_unit_access *a, int i, double T1, double H, double *yint) {
    return a->ops->trace_integral(a->units, i, T1, H, yint);
}
static inline int cs_ua_has_step_integral(const cs_unit_access *a, int i) {
    return a->ops->has_step_integral(a->units, i);
}
static inline int cs_ua_step_integral(const cs_unit_access *a, int i, double *Q) {
    return a->ops->step_integral(a->units, i, Q);
}
static inline int cs_ua_has_states(const cs_unit_access *a, int i) { return a->ops->has_states(a->units, i); }
static inline const double *cs_ua_states(const cs_unit_access *a, int i) { return a->ops->states(a->units, i); }
static inline void *cs_ua_snapshot_create(const cs_unit_access *a, int i) {
    return a->ops->snapshot_create(a->units, i);
}
static inline void cs_ua_snapshot_destroy(const cs_unit_access *a, int i, void *snap) {
    a->ops->snapshot_destroy(a->units, i, snap);
}
static inline void cs_ua_save_state(const cs_unit_access *a, int i, void *snap) {
    a->ops->save_state(a->units, i, snap);
}
static inline void cs_ua_restore_state(const cs_unit_access *a, int i, const void *snap) {
    a->ops->restore_state(a->units, i, snap);
}
static inline int cs_ua_do_step(const cs_unit_access *a, int i, double T, double H, const struct cs_input *in,
                                int restart, cs_err *err) {
    return a->ops->do_step(a->units, i, T, H, in, restart, err);
}

#endif
