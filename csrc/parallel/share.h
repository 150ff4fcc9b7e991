/* Units distributed over processes (MPI ranks; kraft2021 §16: one process per subsystem, the macro point as the
 * synchronisation). Every process runs the whole master with the same data, so all of them take the same decisions
 * (step sizes, rejections, Newton iterations) in the same order; only the units' integrations are split: process p
 * steps the units first[p] .. first[p+1]-1 (contiguous blocks) and after each batch of integrations one collective
 * (an all-gather) hands every process the blocks the others computed. The results are those of one process bit for
 * bit: every number is computed by the same code on the same inputs, once, and copied.
 *
 * The communication itself is a backend of three functions (cs_share_backend), supplied by the optional extension
 * cosim._mpi (parallel/mpi_exchange.c, built only where an MPI library is found), so that the core links no MPI.
 * An exchange also agrees on failures: each process adds its status, and when any failed every process returns the
 * error of the lowest failing process (the lowest failing unit: blocks are ordered by process), its message
 * broadcast from there. Buffers grow to the largest exchange seen and are then reused (no allocation per step). */
#ifndef COSIM_SHARE_H
#define COSIM_SHARE_H

#include "common.h"

/* The communication (parallel/mpi_exchange.c). Each returns 0 or a nonzero error code of the library. */
typedef struct cs_share_backend {
    void *ctx;
    int rank, size;
    /* every process sends `count` doubles; recv gets counts[p] doubles from process p at displs[p] */
    int (*allgatherv)(void *ctx, const double *send, int count, double *recv, const int *counts, const int *displs);
    /* nbytes from process root to all */
    int (*bcast)(void *ctx, void *buf, int nbytes, int root);
} cs_share_backend;

typedef struct cs_share cs_share;

/* first: size+1 unit indices, first[0] = 0 <= first[1] <= ... <= first[size] = nunits (copied). */
int cs_share_create(const cs_share_backend *b, int nunits, const int *first, cs_share **out, cs_err *err);
void cs_share_destroy(cs_share *s);

/* Whether this process steps unit i (1 for every unit without a share: s NULL). */
int cs_share_owns(const cs_share *s, int i);

/* A unit's block of an exchange has off[i+1] - off[i] values (off: nunits+1 offsets): pack writes owned unit i's
 * block to dst; unpack reads another process's unit i from src. */
typedef void (*cs_share_pack)(void *ctx, int i, double *dst);
typedef void (*cs_share_unpack)(void *ctx, int i, const double *src);

/* One collective over the units i0..i1-1: every process packs its own of them, receives the others'. rc/err: this
 * process's status before the exchange (its lowest failing unit's error, or CS_OK). Returns the agreed status: CS_OK,
 * or the error of the lowest failing process in err on every process (then nothing is unpacked). */
int cs_share_exchange(cs_share *s, int i0, int i1, const int *off, cs_share_pack pack, cs_share_unpack unpack,
                      void *ctx, int rc, cs_err *err);
/* The same for a stacked array: unit i's block is buf[off[i] .. off[i+1]-1]. */
int cs_share_stacked(cs_share *s, double *buf, const int *off, int i0, int i1, int rc, cs_err *err);

int cs_share_rank(const cs_share *s);
int cs_share_size(const cs_share *s);

#endif
