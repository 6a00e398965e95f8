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

std::string device_shortage(int ranks_on_node, int visible_devices) {
  if (visible_devices == 0) {
    return "no CUDA device is visible (cudaGetDeviceCount found none; check the driver and CUDA_VISIBLE_DEVICES), "
           "or run with --backend cpu";
  }
  if (ranks_on_node > visible_devices) {
    return fmt::format(
        "{} ranks run on this node but it has {} visible GPU{}; NCCL needs one GPU per rank: start at "
        "most {} rank{} per node (mpirun --map-by ppr:{}:node), or run with --backend cpu",
        ranks_on_node, visible_devices, visible_devices == 1 ? "" : "s", visible_devices,
        visible_devices == 1 ? "" : "s", visible_devices);
  }
  return "";
}

int select_device_for_this_rank() {
  MPI_Comm node = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  int local_rank = 0;
  int ranks_on_node = 1;
  SB_MPI_CHECK(MPI_Comm_rank(node, &local_rank));
  SB_MPI_CHECK(MPI_Comm_size(node, &ranks_on_node));
  SB_MPI_CHECK(MPI_Comm_free(&node));
  const int count = visible_device_count();
  // Every rank stops, not only those of a short node: the others would wait in NCCL's set-up.
  const std::string shortage = device_shortage(ranks_on_node, count);
  int any_short = shortage.empty() ? 0 : 1;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &any_short, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (any_short != 0) {
    throw InputError(fmt::format("--backend cuda: rank {}: {}", comm::world_rank(),
                                 shortage.empty() ? "another node cannot give each of its ranks a GPU (see its ranks' "
                                                    "messages)"
                                                  : shortage));
  }
  const int device = local_rank % count;
  SB_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

double l2_cache_bytes(int device) {
  int bytes = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrL2CacheSize, device));
  return static_cast<double>(bytes);
}

std::string current_device_name() {
  int device = 0;
  SB_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp properties{};
  SB_CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
  return properties.name;
}

}  // namespace splitbrain::exec::cuda
