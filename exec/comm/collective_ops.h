#pragma once
// The collectives of plans/collective.h on one MPI communicator, with no plan bookkeeping: the
// MPI engine (mpi_collectives.h) runs its blocking kinds with these, and `splitbrain calibrate`
// times them on the world. `n` is the group size and `me` this rank's member index (its rank in
// `comm`). With n == 1 no MPI call is made and `comm` may be MPI_COMM_NULL. Each function is
// collective over `comm` (send_recv: over its two members).

#include <mpi.h>

#include <cstdint>

#include "exec/comm/local_array.h"

namespace splitbrain::exec::comm::ops {

// Concatenation along `dim` of the members' arrays, member 0 first.
LocalBytes all_gather(MPI_Comm comm, int n, const LocalBytes& input, int dim);
// The same on fp32 arrays, gathered straight into the result's storage (no byte copies around).
LocalArray all_gather(MPI_Comm comm, int n, const LocalArray& input, int dim);
// Block `me` along `dim` of the element-wise sum of the members' arrays.
LocalArray reduce_scatter(MPI_Comm comm, int n, const LocalArray& input, int dim);
// Element-wise sum of the members' arrays.
LocalArray all_reduce(MPI_Comm comm, int n, const LocalArray& input);
// Block j along `other_dim` goes to member j; the output concatenates what arrives along `dim`,
// in sender order.
LocalBytes all_to_all(MPI_Comm comm, int n, const LocalBytes& input, int dim, int other_dim);
// The input extended by halo_rows rows on both sides of `dim`: the neighbours' boundary rows, or
// zeros where there is no neighbour (the tensor's edges).
LocalBytes halo_exchange(MPI_Comm comm, int n, int me, const LocalBytes& input, int dim, int64_t halo_rows);
// Member `source` sends its array to member `destination`, whose output is that array (of its
// own input's shape); everyone else, the source included, returns its input.
LocalBytes send_recv(MPI_Comm comm, int me, const LocalBytes& input, int source, int destination);

}  // namespace splitbrain::exec::comm::ops
