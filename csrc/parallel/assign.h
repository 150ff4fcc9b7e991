/* Which units (items) each worker steps: the one place that distributes the units of a macro step over workers
 * (threads of parallel/pool.c; the ranks of a distributed backend may use the same rule).
 *
 * Longest processing time first (LPT, Graham 1969): items sorted by cost, largest first, each to the worker with the
 * least load so far; ties by the lower item index and the lower worker index, so the same costs always give the same
 * assignment. Its largest load is at most 4/3 of the optimum. A worker's items are then listed in ascending index
 * (neighbouring units' data lie together). The results of a Jacobi step never depend on the assignment (the units
 * are independent within the step); the assignment only decides how long the step takes. No allocation: the caller
 * passes scratch of cs_assign_scratch_bytes. */
#ifndef COSIM_ASSIGN_H
#define COSIM_ASSIGN_H

#include <stddef.h>

/* Bytes of scratch cs_assign_balanced needs for count items on n workers. */
size_t cs_assign_scratch_bytes(int count, int n);

/* owner[i] in 0..n-1: the worker of item i (count >= 0, n >= 1, cost[i] >= 0; NaN counts as 0). Returns the largest
 * load (sum of the costs of one worker's items). */
double cs_assign_balanced(int count, const double *cost, int n, int *owner, void *scratch);

/* The largest load of an assignment: max_k sum_{owner[i] = k} cost[i]. load: n doubles of scratch. */
double cs_assign_max_load(int count, const double *cost, int n, const int *owner, double *load);

/* Lists from owners: worker k's items are order[start[k] .. start[k+1]) in ascending index (start: n + 1 ints). */
void cs_assign_lists(int count, const int *owner, int n, int *order, int *start);

/* Contiguous blocks of equal count (no costs known): worker k gets items [k count / n, (k + 1) count / n). */
void cs_assign_blocks(int count, int n, int *owner);

#endif
