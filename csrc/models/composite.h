/* The monolithic (strongly coupled) form of a coupled system as one model: state = stacked sub-model states; at
 * every right-hand-side evaluation the coupling conditions u = L g(x, u) + r are solved exactly (network/), so the
 * sub-models exchange their variables continuously. Reference solution for the co-simulation (kraft2021 §17,
 * genser2020 §10.1). */
#ifndef COSIM_COMPOSITE_H
#define COSIM_COMPOSITE_H

#include "models/model.h"
#include "network/network.h"

/* nx = sum of the models' nx, nu = 0, ny = net->ny (the consistent outputs). `models` and `net` (built over the
 * same models) must outlive the composite. */
int cs_composite_create(int nsub, cs_model **models, cs_network *net, const char *name, cs_model **out, cs_err *err);

#endif
