#include "tools/training/nccl_collective_transport.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <stdexcept>
#include <vector>

#include "exec/comm/mpi_check.h"
#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_device.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/nccl_communicator.h"
#include "exec/cuda/release_in_destructor.h"

namespace splitbrain::tools {
namespace {

using exec::cuda::DeviceBuffer;
using plans::CollectiveKind;

// The world ranks of `comm`'s members, in its rank order: the key of its NCCL communicator. Not
// the handle: MPI hands a freed communicator's handle to the next one made, of other members.
std::vector<int> world_ranks_of(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL;
  MPI_Group world = MPI_GROUP_NULL;
  SB_MPI_CHECK(MPI_Comm_group(comm, &group));
  SB_MPI_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  int size = 0;
  SB_MPI_CHECK(MPI_Group_size(group, &size));
  std::vector<int> mine(static_cast<size_t>(size));
  std::vector<int> in_world(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) mine[static_cast<size_t>(i)] = i;
  SB_MPI_CHECK(MPI_Group_translate_ranks(group, size, mine.data(), world, in_world.data()));
  SB_MPI_CHECK(MPI_Group_free(&group));
  SB_MPI_CHECK(MPI_Group_free(&world));
  return in_world;
}

// Two device buffers of one timed collective, zeroed (reductions then add zeros, not stray NaNs).
struct DeviceBuffers {
  DeviceBuffer send;
  DeviceBuffer receive;
  DeviceBuffers(int64_t send_bytes, int64_t receive_bytes)
      : send(static_cast<size_t>(send_bytes)), receive(static_cast<size_t>(receive_bytes)) {
    SB_CUDA_CHECK(cudaMemset(send.data(), 0, send.bytes()));
    SB_CUDA_CHECK(cudaMemset(receive.data(), 0, receive.bytes()));
  }
};

class NcclCollectiveTransport final : public CollectiveTransport {
 public:
  NcclCollectiveTransport() {
    exec::cuda::select_device_for_this_rank();
    SB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~NcclCollectiveTransport() override {
    for (auto& entry : comms_) {
      exec::cuda::release_in_destructor([&] { SB_NCCL_CHECK(ncclCommDestroy(entry.second)); });
    }
    exec::cuda::release_in_destructor([&] { SB_CUDA_CHECK(cudaStreamDestroy(stream_)); });
  }
  NcclCollectiveTransport(const NcclCollectiveTransport&) = delete;
  NcclCollectiveTransport& operator=(const NcclCollectiveTransport&) = delete;

  std::string name() const override { return "NCCL on the ranks' GPUs"; }

  TimedCalls prepare_in(CollectiveKind kind, const Group& group, int64_t bytes, bool round_trip) override {
    const int me = group.rank;
    const int n = group.size;
    const ncclComm_t nccl = communicator_of(group.comm);
    const cudaStream_t stream = stream_;
    const int64_t piece = bytes / n;
    const int64_t send_bytes = kind == CollectiveKind::all_gather ? piece : bytes;
    const int64_t receive_bytes = kind == CollectiveKind::reduce_scatter ? piece : bytes;
    auto buffers = std::make_shared<DeviceBuffers>(send_bytes, receive_bytes);
    auto enqueue = [=]() {
      std::byte* send = buffers->send.as<std::byte>();
      std::byte* receive = buffers->receive.as<std::byte>();
      switch (kind) {
        case CollectiveKind::all_reduce:  // in place, as a gradient bucket is reduced
          SB_NCCL_CHECK(ncclAllReduce(send, send, static_cast<size_t>(bytes / 4), ncclFloat, ncclSum, nccl, stream));
          return;
        case CollectiveKind::reduce_scatter:
          SB_NCCL_CHECK(
              ncclReduceScatter(send, receive, static_cast<size_t>(piece / 4), ncclFloat, ncclSum, nccl, stream));
          return;
        case CollectiveKind::all_gather:
          SB_NCCL_CHECK(ncclAllGather(send, receive, static_cast<size_t>(piece), ncclUint8, nccl, stream));
          return;
        case CollectiveKind::all_to_all:  // one block to and from every member, as the engine does
          SB_NCCL_CHECK(ncclGroupStart());
          for (int peer = 0; peer < n; ++peer) {
            SB_NCCL_CHECK(ncclSend(send + peer * piece, static_cast<size_t>(piece), ncclUint8, peer, nccl, stream));
            SB_NCCL_CHECK(ncclRecv(receive + peer * piece, static_cast<size_t>(piece), ncclUint8, peer, nccl, stream));
          }
          SB_NCCL_CHECK(ncclGroupEnd());
          return;
        case CollectiveKind::send_recv:
          message(me, 0, 1, send, receive, bytes, nccl, stream);
          if (round_trip) message(me, 1, 0, send, receive, bytes, nccl, stream);
          return;
        case CollectiveKind::halo_exchange:
          break;
      }
      throw std::logic_error("calibrate: NCCL halo exchanges are not timed");
    };
    return [enqueue, stream](int calls) {
      for (int call = 0; call < calls; ++call) enqueue();
      SB_CUDA_CHECK(cudaStreamSynchronize(stream));
    };
  }

 private:
  // One message of `bytes` from member `from` to member `to`; the other members take no part.
  static void message(int me, int from, int to, std::byte* send, std::byte* receive, int64_t bytes, ncclComm_t nccl,
                      cudaStream_t stream) {
    if (me == from) SB_NCCL_CHECK(ncclSend(send, static_cast<size_t>(bytes), ncclUint8, to, nccl, stream));
    if (me == to) SB_NCCL_CHECK(ncclRecv(receive, static_cast<size_t>(bytes), ncclUint8, from, nccl, stream));
  }

  ncclComm_t communicator_of(MPI_Comm comm) {
    const std::vector<int> members = world_ranks_of(comm);
    if (auto found = comms_.find(members); found != comms_.end()) return found->second;
    // Every member asks about the same groups in the same order, so all of them get here together.
    const ncclComm_t made = exec::cuda::nccl_communicator_over(comm);
    comms_.emplace(members, made);
    return made;
  }

  cudaStream_t stream_ = nullptr;
  std::map<std::vector<int>, ncclComm_t> comms_;
};

}  // namespace

std::unique_ptr<CollectiveTransport> make_nccl_collective_transport() {
  return std::make_unique<NcclCollectiveTransport>();
}

}  // namespace splitbrain::tools
