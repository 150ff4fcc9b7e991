/* The monolithic (strongly coupled) form of a coupled system as one model: state = stacked subsystem states;
 * at every right-hand-side evaluation the coupling conditions u = L g(x, u) + r are solved exactly
 * (coupling/network.c), so the subsystems exchange their variables continuously. Reference solution for the
 * co-simulation (kraft2021 §17, genser2020 §10.1). */
#ifndef COSIM_COMPOSITE_H
#define COSIM_COMPOSITE_H

#include "coupling/network.h"

/* nx = net->nx, nu = 0, ny = net->ny (the consistent outputs). `net` must outlive the model. */
cs_model *cs_composite_new(cs_network *net, const char *name, cs_err *err);

#endif
