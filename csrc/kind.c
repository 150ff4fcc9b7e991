#include "kind.h"

static void fields_add(cs_fields *out, cs_field f) {
    if (out->n < (int)(sizeof out->f / sizeof out->f[0])) out->f[out->n++] = f;
}

void cs_fields_array(cs_fields *out, const char *name, int type, long rows, int cols, const void *data) {
    fields_add(out, (cs_field){.name = name, .type = type, .rows = rows, .cols = cols, .data = data});
}

void cs_fields_count(cs_fields *out, const char *name, long count) {
    fields_add(out, (cs_field){.name = name, .type = CS_FIELD_COUNT, .count = count});
}
