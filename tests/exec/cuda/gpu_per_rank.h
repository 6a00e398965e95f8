#pragma once
// For the tests that run one MPI rank per GPU: the world's size, and whether every rank has a GPU
// of its own (NCCL refuses two ranks on one device), the same answer on every rank so that a skip
// is collective.

#include <mpi.h>

#include "exec/cuda/cuda_device.h"

namespace splitbrain::exec::cuda::testing {

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

inline bool every_rank_has_a_gpu() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranks_on_node = 0;
  MPI_Comm_size(node, &ranks_on_node);
  MPI_Comm_free(&node);
  int enough = visible_device_count() >= ranks_on_node ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &enough, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return enough == 1;
}

}  // namespace splitbrain::exec::cuda::testing
