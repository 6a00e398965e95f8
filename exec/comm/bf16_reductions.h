#pragma once
// The MPI engine's bf16 reductions (CollectiveEngine::all_reduce_bf16, reduce_scatter_bf16): the
// members' 16-bit words summed by a user MPI operation that adds two bf16 values in fp32 and
// rounds the sum to bf16 (bf16.h), so every partial sum on the wire is 2 bytes per element, as a
// bf16 plan counts them. bf16 addition is commutative but not associative: the result depends on
// the order Open MPI's algorithm adds in, within bf16's rounding of each partial sum.

#include <mpi.h>

#include "exec/comm/local_array.h"

namespace splitbrain::exec::comm::ops {

// The element-wise bf16 sum of the group's arrays (element_bytes 2). `n`: the group's size; a
// group of one returns its input without communicating (comm may then be MPI_COMM_NULL).
LocalBytes all_reduce_bf16(MPI_Comm comm, int n, const LocalBytes& input);
// Block `me` along `dim` of that sum.
LocalBytes reduce_scatter_bf16(MPI_Comm comm, int n, const LocalBytes& input, int dim);

}  // namespace splitbrain::exec::comm::ops
