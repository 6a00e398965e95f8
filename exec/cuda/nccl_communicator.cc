#include "exec/cuda/nccl_communicator.h"

#include "exec/comm/mpi_check.h"
#include "exec/cuda/cuda_check.h"

namespace splitbrain::exec::cuda {

ncclComm_t nccl_communicator_over(MPI_Comm group) {
  int me = 0;
  int members = 1;
  SB_MPI_CHECK(MPI_Comm_rank(group, &me));
  SB_MPI_CHECK(MPI_Comm_size(group, &members));
  ncclUniqueId id{};
  if (me == 0) SB_NCCL_CHECK(ncclGetUniqueId(&id));
  SB_MPI_CHECK(MPI_Bcast(&id, static_cast<int>(sizeof id), MPI_BYTE, 0, group));
  ncclComm_t comm = nullptr;
  SB_NCCL_CHECK(ncclCommInitRank(&comm, members, id, me));
  return comm;
}

}  // namespace splitbrain::exec::cuda
