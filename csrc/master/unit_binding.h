/* The run's units lent to its couplings and step controllers: the table of unit_access.h bound to units/unit.h. */
#ifndef COSIM_UNIT_BINDING_H
#define COSIM_UNIT_BINDING_H

#include "unit_access.h"
#include "units/unit.h"

/* The access to units[0..n) (the array must outlive every object that keeps the access). */
cs_unit_access cs_unit_access_of(cs_unit **units, int n);

#endif
