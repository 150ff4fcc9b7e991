/* The MPI backend of share.h (built into the optional extension cosim._mpi only, where mpi.h is found). */
#ifndef COSIM_MPI_EXCHANGE_H
#define COSIM_MPI_EXCHANGE_H

#include "parallel/share.h"

/* A backend over the communicator at comm_address (mpi4py: MPI._addressof(comm), the address of an MPI_Comm
 * handle). MPI must be initialised (importing mpi4py.MPI does it). Returns NULL with a message in err. Free with
 * cs_mpi_backend_free. */
cs_share_backend *cs_mpi_backend_create(void *comm_address, cs_err *err);
void cs_mpi_backend_free(cs_share_backend *b);

#endif
