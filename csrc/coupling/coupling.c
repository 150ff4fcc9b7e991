#include "coupling/coupling.h"

#include <stdlib.h>

void cs_coupling_destroy(cs_coupling *c) {
    if (!c) return;
    if (c->ops && c->ops->destroy) c->ops->destroy(c);
    free(c);
}

int cs_coupling_set_history_depth(cs_coupling *c, int depth, cs_err *err) {
    if (!c->ops->set_history_depth)
        return cs_fail(err, CS_ERR_ARG, "coupling: the history depth is a property of the signal-based coupling");
    return c->ops->set_history_depth(c, depth, err);
}
