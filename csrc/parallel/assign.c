/* Balanced assignment of items to workers (assign.h): LPT with a binary min-heap of the workers' loads. */
#include "parallel/assign.h"

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

/* a goes before b: the larger cost first, equal costs by the lower index (a total order: the sort is unique) */
static inline int before(const item_cost *a, const item_cost *b) {
    return a->c > b->c || (a->c == b->c && a->i < b->i);
}

/* Heap sort in that order: in place (qsort may allocate, and this runs between macro steps). */
static void sift_items(item_cost *a, int n, int q) {
    for (;;) {
        int l = 2 * q + 1, r = l + 1, m = q;
        if (l < n && before(&a[m], &a[l])) m = l;   /* a max-heap of "goes last" */
        if (r < n && before(&a[m], &a[r])) m = r;
        if (m == q) return;
        item_cost t = a[q]; a[q] = a[m]; a[m] = t;
        q = m;
    }
}

static void sort_items(item_cost *a, int n) {
    for (int q = n / 2 - 1; q >= 0; q--) sift_items(a, n, q);
    for (int e = n - 1; e > 0; e--) {
        item_cost t = a[0]; a[0] = a[e]; a[e] = t;
        sift_items(a, e, 0);
    }
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
    sort_items(ic, count);
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
