#include "master/series.h"

#include <stdlib.h>
#include <string.h>

typedef struct series {
    long cap, n_rec;
    int n;
    const double *src;
    double *t, *v;
} series;

static int series_record(cs_observer *o, const cs_run_view *view, cs_err *err) {
    series *s = o->content;
    if (s->n_rec >= s->cap)
        return cs_fail(err, CS_ERR_ARG, "series recorder: more than %ld points (capacity)", s->cap);
    s->t[s->n_rec] = view->t;
    if (s->n) memcpy(s->v + (size_t)s->n_rec * s->n, s->src, sizeof(double) * s->n);
    s->n_rec++;
    return CS_OK;
}

static void series_destroy(cs_observer *o) { free(o->content); o->content = NULL; }

static const cs_observer_ops SERIES_OPS = {.on_start = series_record, .on_step = series_record,
                                           .destroy = series_destroy};

int cs_series_recorder_create(long cap, const double *src, int n, double *t, double *v, cs_observer **out,
                              cs_err *err) {
    *out = NULL;
    cs_observer *o = calloc(1, sizeof *o);
    series *s = calloc(1, sizeof *s);
    if (!o || !s) { free(o); free(s); return cs_fail(err, CS_ERR_NOMEM, "series recorder: out of memory"); }
    s->cap = cap; s->n = n; s->src = src; s->t = t; s->v = v;
    o->ops = &SERIES_OPS;
    o->content = s;
    *out = o;
    return CS_OK;
}

long cs_series_count(const cs_observer *o) { return ((const series *)o->content)->n_rec; }
