/* Balanced assignment of items to workers (assign.h): LPT with a binary min-heap of the workers' loads. */
#include "parallel/assign.h"

#include <stdlib.h>

typedef struct item_cost {
    double c;
    int i;
} item_cost;

typedef struct worker_load {
    double load;
    int k;
} worker_load;

size_t cs_assign_scratch_bytes(int count, int n) {
    return sizeof(item_cost) * (size_t)(count > 0 ? count : 1) + sizeof(worker_load) * (size_t)(n > 0 ? n : 1);
}

/* largest cost first; equal costs by the lower index: a total order, so qsort's result is unique */
static int by_cost(const void *pa, const void *pb) {
    const item_cost *a = pa, *b = pb;
    if (a->c != b->c) return a->c > b->c ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

static int lighter(const worker_load *a, const worker_load *b) {
    return a->load < b->load || (a->load == b->load && a->k < b->k);
}

static void sift_down(worker_load *h, int n, int q) {
    for (;;) {
        int l = 2 * q + 1, r = l + 1, m = q;
        if (l < n && lighter(&h[l], &h[m])) m = l;
        if (r < n && lighter(&h[r], &h[m])) m = r;
        if (m == q) return;
        worker_load t = h[q]; h[q] = h[m]; h[m] = t;
        q = m;
    }
}

double cs_assign_balanced(int count, const double *cost, int n, int *owner, void *scratch) {
    item_cost *ic = scratch;
    worker_load *h = (worker_load *)(ic + (count > 0 ? count : 1));
    for (int i = 0; i < count; i++) ic[i] = (item_cost){cost[i] > 0.0 ? cost[i] : 0.0, i};   /* NaN, < 0: 0 */
    qsort(ic, (size_t)count, sizeof *ic, by_cost);
    for (int k = 0; k < n; k++) h[k] = (worker_load){0.0, k};   /* all 0, ascending k: already a heap */
    double mx = 0.0;
    for (int q = 0; q < count; q++) {
        owner[ic[q].i] = h[0].k;           /* the least loaded worker takes the next largest item */
        h[0].load += ic[q].c;
        if (h[0].load > mx) mx = h[0].load;
        sift_down(h, n, 0);
    }
    return mx;
}

double cs_assign_max_load(int count, const double *cost, int n, const int *owner, double *load) {
    for (int k = 0; k < n; k++) load[k] = 0.0;
    for (int i = 0; i < count; i++) load[owner[i]] += cost[i] > 0.0 ? cost[i] : 0.0;
    double mx = 0.0;
    for (int k = 0; k < n; k++)
        if (load[k] > mx) mx = load[k];
    return mx;
}

void cs_assign_lists(int count, const int *owner, int n, int *order, int *start) {
    for (int k = 0; k <= n; k++) start[k] = 0;
    for (int i = 0; i < count; i++) start[owner[i] + 1]++;
    for (int k = 0; k < n; k++) start[k + 1] += start[k];
    for (int i = 0; i < count; i++) order[start[owner[i]]++] = i;   /* start[k] moves to the end of list k */
    for (int k = n; k > 0; k--) start[k] = start[k - 1];
    start[0] = 0;
}

void cs_assign_blocks(int count, int n, int *owner) {
    for (int k = 0; k < n; k++)
        for (long i = (long)k * count / n, e = (long)(k + 1) * count / n; i < e; i++) owner[i] = k;
}
