/* The kinds a run can choose per capability (coupling, scheme, step controller) and the parameter-only specs the
 * bindings fill (solver, balance). Each kind is a descriptor (cs_kind, kind.h) defined in its implementation file;
 * master/registry.c lists them, one line per kind. The bindings parse a kind's spec from its parameter table
 * (csrc/py/params.c); the run assembly (master/setup.c) creates it through `create` without knowing the kind. */
#ifndef COSIM_REGISTRY_H
#define COSIM_REGISTRY_H

#include "kind.h"

typedef struct cs_capability {
    const char *name;
    const cs_kind *const *kinds; /* a kind's code is its index (exported as `_core.codes[name]`, py/codes.c) */
    int nkinds;
} cs_capability;

/* coupling, scheme, step_control, and the parameter-only specs solver, balance (no create: the run builds them). */
extern const cs_capability cs_registry[];
extern const int cs_registry_size;
/* The capability of this name (NULL if none). */
const cs_capability *cs_registry_capability(const char *name);
/* Whether the capability's kinds are chosen per run and created through the registry (coupling, scheme,
 * step_control), not parameter-only specs (solver, balance). */
int cs_registry_chosen(const cs_capability *cap);
/* The kind of this name in a capability (NULL if none). */
const cs_kind *cs_registry_kind(const cs_capability *cap, const char *name);

/* A chosen kind and its spec (filled by the bindings). */
typedef struct cs_choice {
    const cs_kind *kind;        /* NULL: not chosen */
    const void *spec;
} cs_choice;

#endif
