#include "schemes/scheme.h"

#include <stdlib.h>

void cs_scheme_destroy(cs_scheme *s) {
    if (!s) return;
    if (s->ops && s->ops->destroy) s->ops->destroy(s);
    free(s);
}

int cs_scheme_step_unit(cs_step_ctx *x, int i, double T, double H, cs_err *err) {
    cs_coupling *cpl = x->coupling;
    cs_unit *u = x->units[i];
    const cs_input *in = cpl->ops->input(cpl, i);
    x->used[i] = in;
    int restart = CS_CONTINUE;
    if (!x->continue_always) {
        int cont = cpl->ops->continuity ? cpl->ops->continuity(cpl, i) : CS_INPUT_JUMPS;
        restart = (x->first || cont == CS_INPUT_JUMPS || x->exact_rollback) ? CS_RESTART : CS_SMOOTH;
    } else if (x->first) {
        restart = CS_RESTART;
    }
    int rc = cs_unit_do_step(u, T, H, in, restart, err);
    if (rc) {
        cs_err_prefix(err, "macro step %ld [%.10g, %.10g]: ", x->step, T, T + H);
        return rc;
    }
    int a = x->net->uoff[i];
    cs_input_eval(in, T + H, x->uend + a);
    if (x->need_udot) cs_input_eval_dt(in, T + H, x->udot + a);
    return CS_OK;
}
