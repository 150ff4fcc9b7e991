/* Built-in models, chosen by name from a table (builtin.c). Each model's file exports its descriptor; adding one is
 * that file plus one line in builtin.c's table. */
#ifndef COSIM_BUILTIN_H
#define COSIM_BUILTIN_H

#include "models/model.h"

typedef struct cs_builtin_model {
    const char *name;
    /* params: nparams finite values (checked by cs_builtin_create); name: the subsystem's name */
    int (*create)(int nparams, const double *params, const char *name, cs_model **out, cs_err *err);
} cs_builtin_model;

extern const cs_builtin_model cs_model_dmo_force_impulse, cs_model_dmo_base_nonlinear;   /* two_mass.c */
extern const cs_builtin_model cs_model_chain_segment, cs_model_chain_element;            /* chain.c */
extern const cs_builtin_model cs_model_kraft_mass, cs_model_kraft_element;               /* kraft_models.c */

/* A model whose content is a zeroed struct of `size` bytes that starts with copies of the nparams parameters (the
 * built-in models' parameter structs hold their parameters in order; size >= nparams doubles). */
int cs_builtin_params_model(const cs_model_ops *ops, int nx, int nu, int ny, int feedthrough, size_t size, int nparams,
                            const double *params, const char *name, cs_model **out, cs_err *err);

/* The built-in model `kind` with its parameters. */
int cs_builtin_create(const char *kind, int nparams, const double *params, const char *name, cs_model **out,
                      cs_err *err);

#endif
