/* The MPI backend of share.h: MPI_Allgatherv of doubles and MPI_Bcast of bytes over the caller's communicator. */
#include "parallel/mpi_exchange.h"

#include <mpi.h>
#include <stdlib.h>

typedef struct mpi_ctx { MPI_Comm comm; } mpi_ctx;

static int mpi_allgatherv(void *ctx, const double *send, int count, double *recv, const int *counts,
                          const int *displs) {
    return MPI_Allgatherv(send, count, MPI_DOUBLE, recv, counts, displs, MPI_DOUBLE, ((mpi_ctx *)ctx)->comm);
}

static int mpi_bcast(void *ctx, void *buf, int nbytes, int root) {
    return MPI_Bcast(buf, nbytes, MPI_BYTE, root, ((mpi_ctx *)ctx)->comm);
}

cs_share_backend *cs_mpi_backend_create(void *comm_address, cs_err *err) {
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) {
        cs_fail(err, CS_ERR_ARG, "parallel: MPI is not initialised (import mpi4py.MPI first) or already finalised");
        return NULL;
    }
    if (!comm_address) {
        cs_fail(err, CS_ERR_ARG, "comm: no communicator address");
        return NULL;
    }
    const MPI_Comm comm = *(const MPI_Comm *)comm_address;
    if (comm == MPI_COMM_NULL) {
        cs_fail(err, CS_ERR_ARG, "comm: MPI_COMM_NULL");
        return NULL;
    }
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        cs_fail(err, CS_ERR_ARG, "comm: not a valid communicator");
        return NULL;
    }
    cs_share_backend *b = calloc(1, sizeof *b);
    mpi_ctx *c = calloc(1, sizeof *c);
    if (!b || !c) {
        free(b); free(c);
        cs_fail(err, CS_ERR_NOMEM, "parallel: out of memory");
        return NULL;
    }
    c->comm = comm;
    *b = (cs_share_backend){.ctx = c, .rank = rank, .size = size, .allgatherv = mpi_allgatherv, .bcast = mpi_bcast};
    return b;
}

void cs_mpi_backend_free(cs_share_backend *b) {
    if (!b) return;
    free(b->ctx);
    free(b);
}
