#include "units/model_set.h"

#include <stdlib.h>
#include <string.h>

#include "models/composite.h"

int cs_model_set_init(cs_model_set *s, int n, cs_model *const *models, cs_err *err) {
    memset(s, 0, sizeof *s);
    s->models = malloc(sizeof(cs_model *) * (size_t)(n > 0 ? n : 1));
    if (!s->models) {
        for (int i = 0; i < n; i++) cs_model_destroy(models[i]);
        return cs_fail(err, CS_ERR_NOMEM, "out of memory");
    }
    memcpy(s->models, models, sizeof(cs_model *) * (size_t)n);
    s->n = n;
    return CS_OK;
}

void cs_model_set_ports(const cs_model_set *s, cs_unit *const *units, int *nu, int *ny, int *feedthrough,
                        int *linear) {
    const int n = s->composite ? 1 : s->n;
    cs_model *const *m = s->composite ? &s->composite : s->models;
    for (int i = 0; i < n; i++) {
        if (!s->composite && units && units[i]) {
            nu[i] = units[i]->nu; ny[i] = units[i]->ny;
            feedthrough[i] = units[i]->feedthrough; linear[i] = units[i]->linear;
        } else {
            nu[i] = m[i]->nu; ny[i] = m[i]->ny;
            feedthrough[i] = m[i]->feedthrough; linear[i] = cs_model_linear(m[i]) != NULL;
        }
    }
}

int cs_model_set_units(const cs_model_set *s, const cs_solver_opts *solvers, int quadrature, cs_unit **units,
                       cs_err *err) {
    if (s->composite) return units[0] ? CS_OK : cs_model_unit_create(s->composite, &solvers[0], &units[0], err);
    for (int i = 0; i < s->n; i++)
        if (!units[i])
            CS_TRY(quadrature ? cs_model_unit_create_quadrature(s->models[i], &solvers[i], &units[i], err)
                              : cs_model_unit_create(s->models[i], &solvers[i], &units[i], err));
    return CS_OK;
}

int cs_model_set_monolithic(cs_model_set *s, struct cs_network *net, cs_err *err) {
    return cs_composite_create(s->n, s->models, net, "monolithic", &s->composite, err);
}

void *cs_model_set_take_cause(const cs_model_set *s) {
    void *cause = NULL;
    for (int i = 0; i < s->n && !cause; i++)   /* FMU subsystems have no model here */
        if (s->models[i]) cause = cs_model_take_cause(s->models[i]);
    return cause;
}

void cs_model_set_free(cs_model_set *s) {
    cs_model_destroy(s->composite);
    if (s->models)
        for (int i = 0; i < s->n; i++) cs_model_destroy(s->models[i]);
    free(s->models);
    memset(s, 0, sizeof *s);
}
