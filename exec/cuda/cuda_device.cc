#include "exec/cuda/cuda_device.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <mpi.h>

#include "exec/comm/mpi_check.h"
#include "exec/cuda/cuda_check.h"
#include "model/errors.h"

namespace splitbrain::exec::cuda {

int visible_device_count() {
  int count = 0;
  // cudaErrorNoDevice and cudaErrorInsufficientDriver both mean: nothing to run on here.
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls report their own
    return 0;
  }
  return count;
}

int select_device_for_this_rank() {
  MPI_Comm node = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local_rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  SB_MPI_CHECK(MPI_Comm_free(&node));
  const int count = visible_device_count();
  if (count == 0) {
    throw InputError(fmt::format(
        "--backend cuda: no CUDA device is visible on rank {} (cudaGetDeviceCount found none; check the driver "
        "and CUDA_VISIBLE_DEVICES), or run with --backend cpu",
        comm::world_rank()));
  }
  const int device = local_rank % count;
  SB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

}  // namespace splitbrain::exec::cuda
