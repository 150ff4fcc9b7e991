/* Descriptors of a spec struct's parameters (name, type, offset): the bindings fill any spec from a dict of named
 * values with one parser (csrc/py/params.c), so that a new kind declares its parameters instead of parsing them. */
#ifndef COSIM_PARAMS_H
#define COSIM_PARAMS_H

#include <stddef.h>

enum {
    CS_PARAM_INT,       /* int */
    CS_PARAM_LONG,      /* long */
    CS_PARAM_DOUBLE,    /* double */
    CS_PARAM_FLAG,      /* int 0/1 from any truth value */
    CS_PARAM_DOUBLES,   /* const double *: finite float64 vector (None: NULL) */
    CS_PARAM_INTS,      /* const int *: int vector */
    CS_PARAM_INDICES    /* const int *: int vector of indices >= 0 */
};

#define CS_PARAM_NO_LENGTH ((size_t)-1)

typedef struct cs_param {
    const char *name;
    int type;
    size_t offset;      /* of the field in the spec struct */
    size_t length;      /* vectors: offset of an int field that gets the length (vectors sharing it must agree), or
                         * CS_PARAM_NO_LENGTH */
} cs_param;

#define CS_PARAM_FIELD(T, name, type, field) {name, type, offsetof(T, field), CS_PARAM_NO_LENGTH}
#define CS_PARAM_VECTOR(T, name, type, field, len) {name, type, offsetof(T, field), offsetof(T, len)}
#define CS_NPARAMS(table) ((int)(sizeof table / sizeof table[0]))

#endif
