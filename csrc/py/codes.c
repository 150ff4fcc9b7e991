/* The codes of the C core's enums as `cosim._core.codes` ({kind: {name: code}}): the one table the Python layer
 * reads its option codes from (tests/test_codes.py ties every Python name to it and every C enumerator to a name).
 * A new enumerator is one line here; the kinds a run chooses (coupling, scheme, step_control) come from the
 * registry (master/registry.c: a kind's code is its index), so a new kind needs no line here. */
#include "py/pyutil.h"

#include "common.h"
#include "control/adaptive.h"
#include "control/controller.h"
#include "control/kraft.h"
#include "coupling/approx.h"
#include "coupling/balance.h"
#include "coupling/mbcorr.h"
#include "coupling/prestep.h"
#include "fmi/fmi.h"
#include "integrators/stepper.h"
#include "master/registry.h"
#include "network/network.h"
#include "schemes/iterative.h"
#include "sysid/moesp.h"

typedef struct code_name {
    const char *name;
    int code;
} code_name;

typedef struct code_kind {
    const char *kind;
    const code_name *names;
    int n;
} code_kind;

#define KIND(k, table) {k, table, (int)(sizeof table / sizeof table[0])}

static const code_name updates[] = {{"consistent", CS_UPDATE_CONSISTENT}, {"simplified", CS_UPDATE_SIMPLIFIED}};
static const code_name startups[] = {{"none", CS_STARTUP_NONE}, {"kraft", CS_STARTUP_KRAFT}};
static const code_name approximations[] = {{"lagrange", CS_APPROX_LAGRANGE}, {"extripol-c0", CS_APPROX_EXTRIPOL_C0},
                                           {"extripol-c1", CS_APPROX_EXTRIPOL_C1}, {"hermite", CS_APPROX_HERMITE},
                                           {"lsq", CS_APPROX_LSQ},
                                           {"acc", CS_APPROX_ACC}, {"acc-rel", CS_APPROX_ACC_REL}};
static const code_name solvers[] = {{"euler", CS_SOLVER_EULER}, {"rk4", CS_SOLVER_RK4}, {"exact", CS_SOLVER_EXACT},
                                    {"cvode", CS_SOLVER_CVODE}, {"ab2", CS_SOLVER_AB2}};
static const code_name ab2_starters[] = {{"euler", CS_AB2_EULER}, {"heun", CS_AB2_HEUN}};
static const code_name linear_solvers[] = {{"dense", CS_LINSOL_DENSE}, {"band", CS_LINSOL_BAND}};
static const code_name jacobians[] = {{"fd", CS_JAC_FD}, {"sap", CS_JAC_SAP}, {"exact", CS_JAC_EXACT},
                                     {"sap2", CS_JAC_SAP2}};
static const code_name accelerations[] = {{"none", CS_ACCEL_NONE}, {"aitken", CS_ACCEL_AITKEN},
                                          {"iqn-ils", CS_ACCEL_IQN_ILS}};
static const code_name waveforms[] = {{"polynomial", CS_WAVE_POLYNOMIAL}, {"substeps", CS_WAVE_SUBSTEPS}};
static const code_name on_failure[] = {{"raise", CS_ONFAIL_RAISE}, {"continue", CS_ONFAIL_CONTINUE}};
static const code_name estimators[] = {{"exLE", CS_EST_EXLE}, {"exMD", CS_EST_EXMD}, {"exCV", CS_EST_EXCV},
                                       {"imMD", CS_EST_IMMD}, {"imCV", CS_EST_IMCV}, {"waCV", CS_EST_WACV}};
static const code_name order_strategies[] = {{"ida", CS_ORDER_IDA}, {"conservative", CS_ORDER_CONSERVATIVE},
                                             {"fixed", CS_ORDER_FIXED}};
static const code_name monitor_groups[] = {{"pos", CS_GROUP_POS}, {"vel", CS_GROUP_VEL}};
static const code_name balance_kernels[] = {{"constant", CS_BALANCE_CONSTANT}, {"smooth", CS_BALANCE_SMOOTH}};
static const code_name balance_variants[] = {{"telescoping", CS_BALANCE_TELESCOPING}, {"literal", CS_BALANCE_LITERAL}};
static const code_name prestep_variants[] = {{"continuous", CS_PRESTEP_CONTINUOUS}, {"discrete", CS_PRESTEP_DISCRETE}};
static const code_name ij_sources[] = {{"given", CS_PRESTEP_IJ_GIVEN}, {"rls", CS_PRESTEP_IJ_RLS},
                                       {"moesp", CS_PRESTEP_IJ_MOESP}};
static const code_name prestep_phases[] = {{"learning", CS_PHASE_LEARNING}, {"sbc", CS_PHASE_SBC},
                                           {"mod", CS_PHASE_MOD}, {"mbc", CS_PHASE_MBC},
                                           {"fallback", CS_PHASE_FALLBACK}};
static const code_name mbcorr_shapes[] = {{"constant", CS_MBCORR_CONSTANT}, {"end", CS_MBCORR_END}};
static const code_name mbcorr_phases[] = {{"learning", CS_MBCORR_LEARNING}, {"corrected", CS_MBCORR_CORRECTED},
                                          {"fallback", CS_MBCORR_FALLBACK}};
static const code_name moesp_methods[] = {{"moesp", CS_MOESP_PLAIN}, {"po-moesp", CS_MOESP_PO}};
static const code_name fmu_kinds[] = {{"cs", CS_FMI_CS}, {"me", CS_FMI_ME}};
static const code_name fmu_types[] = {{"Float64", CS_FMI_F64}, {"Float32", CS_FMI_F32}, {"Int8", CS_FMI_I8},
                                      {"UInt8", CS_FMI_U8}, {"Int16", CS_FMI_I16}, {"UInt16", CS_FMI_U16},
                                      {"Int32", CS_FMI_I32}, {"UInt32", CS_FMI_U32}, {"Int64", CS_FMI_I64},
                                      {"UInt64", CS_FMI_U64}, {"Boolean", CS_FMI_BOOL}};
static const code_name statuses[] = {{"ok", CS_OK}, {"argument", CS_ERR_ARG}, {"memory", CS_ERR_NOMEM},
                                     {"linalg", CS_ERR_LINALG}, {"solver", CS_ERR_SOLVER},
                                     {"diverged", CS_ERR_DIVERGED}, {"callback", CS_ERR_CALLBACK},
                                     {"stopped", CS_STOPPED}, {"interrupted", CS_ERR_INTERRUPTED},
                                     {"convergence", CS_ERR_CONVERGENCE}, {"terminated", CS_TERMINATED}};

static const code_kind kinds[] = {
    KIND("update", updates), KIND("startup", startups),
    KIND("approximation", approximations), KIND("solver", solvers), KIND("ab2_starter", ab2_starters),
    KIND("linear_solver", linear_solvers), KIND("jacobian", jacobians), KIND("acceleration", accelerations),
    KIND("waveform", waveforms), KIND("on_failure", on_failure), KIND("estimator", estimators),
    KIND("order_strategy", order_strategies), KIND("monitor_group", monitor_groups),
    KIND("balance_kernel", balance_kernels), KIND("balance_variant", balance_variants),
    KIND("prestep_variant", prestep_variants), KIND("ij_source", ij_sources), KIND("prestep_phase", prestep_phases),
    KIND("mbcorr_shape", mbcorr_shapes), KIND("mbcorr_phase", mbcorr_phases),
    KIND("moesp_method", moesp_methods), KIND("fmu_kind", fmu_kinds), KIND("fmu_type", fmu_types),
    KIND("status", statuses),
};

/* out[kind] = {} (a borrowed reference, NULL on failure) */
static PyObject *new_kind(PyObject *out, const char *kind) {
    PyObject *d = PyDict_New();
    if (!d || PyDict_SetItemString(out, kind, d)) { Py_XDECREF(d); return NULL; }
    Py_DECREF(d);
    return d;
}

static int add_code(PyObject *d, const char *name, int code) {
    PyObject *v = PyLong_FromLong(code);
    int rc = !v || PyDict_SetItemString(d, name, v) ? -1 : 0;
    Py_XDECREF(v);
    return rc;
}

/* {kind: {name: code}}: the enum tables above, then the registry's chosen kinds by their index */
static PyObject *codes_dict(void) {
    PyObject *out = PyDict_New();
    for (size_t k = 0; out && k < sizeof kinds / sizeof kinds[0]; k++) {
        PyObject *d = new_kind(out, kinds[k].kind);
        for (int q = 0; d && q < kinds[k].n; q++)
            if (add_code(d, kinds[k].names[q].name, kinds[k].names[q].code)) d = NULL;
        if (!d) Py_CLEAR(out);
    }
    for (int c = 0; out && c < cs_registry_size; c++) {
        const cs_capability *cap = &cs_registry[c];
        if (!cs_registry_chosen(cap)) continue;
        PyObject *d = new_kind(out, cap->name);
        for (int q = 0; d && q < cap->nkinds; q++)
            if (add_code(d, cap->kinds[q]->name, q)) d = NULL;
        if (!d) Py_CLEAR(out);
    }
    return out;
}

int cs_py_add_codes(PyObject *module) {
    PyObject *d = codes_dict();
    if (!d) return -1;
    if (PyModule_AddObject(module, "codes", d) < 0) { Py_DECREF(d); return -1; }
    /* limits of the coupling polynomials: the Python option classes check against these */
    if (PyModule_AddIntConstant(module, "MAXDEG", CS_MAXDEG) < 0 ||
        PyModule_AddIntConstant(module, "MAXHIST", CS_MAXHIST) < 0)
        return -1;
    return 0;
}
