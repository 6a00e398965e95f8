#pragma once
// The NCCL collective engine of the CUDA backend: every operation of comm/collective_engine.h
// with NCCL on this rank's GPU (select_device_for_this_rank() first). One NCCL communicator per
// group of a mesh-axis set, member k = member k of the MPI communicator MeshCommunicators gives
// that group: member 0 draws the unique id and broadcasts it over that MPI communicator, then
// every member calls ncclCommInitRank. All NCCL work runs on the engine's own stream, apart from
// the compute stream, and events tell when a started reduction has finished (test() polls them).
//
// The engine's own operations take HOST arrays (comm::LocalArray), so each call stages its data
// through a device buffer (staging_pool.h): upload, NCCL, download. The CUDA backend's device
// runs what it can on its arrays' device memory instead (stream_ordered_collectives.h), with the
// group's communicator and the engine's stream from communicator_for() and stream().
//
// One stream serves every group, so NCCL work runs in the order the runtime issues it, the same
// on every rank: a blocking collective issued while a bucket's reduction is in flight waits for
// it (the price of that simplicity; a second stream would let them overlap).
//
// all_to_all, halo_exchange and send_recv are point-to-point transfers grouped with
// ncclGroupStart/ncclGroupEnd. The block orders are exactly the MPI engine's (the same packing
// helpers of comm/local_array.h), so both engines return the same arrays.
//
// NCCL needs a GPU of its own per rank. Creating a group's communicator is collective over the
// group: prepare() creates every group up front (the Trainer calls it), since a send_recv, say,
// is entered by its two members only.

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <functional>
#include <map>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/cuda/staging_pool.h"

namespace splitbrain::exec::cuda {

class NcclCollectives final : public comm::CollectiveEngine {
 public:
  // On the current device; `communicators` must outlive the engine.
  explicit NcclCollectives(comm::MeshCommunicators& communicators);
  ~NcclCollectives() override;

  // MPI communicators for every set, then the NCCL communicator of every group of two or more.
  void prepare(const std::vector<std::vector<int>>& axis_sets) override;

  comm::LocalBytes all_gather(const std::vector<int>& axes, const comm::LocalBytes& input, int dim) override;
  comm::LocalArray reduce_scatter(const std::vector<int>& axes, const comm::LocalArray& input, int dim) override;
  comm::LocalArray all_reduce(const std::vector<int>& axes, const comm::LocalArray& input) override;
  void all_reduce_statistics(const std::vector<int>& axes, std::span<double> values) override;
  comm::LocalBytes all_to_all(const std::vector<int>& axes, const comm::LocalBytes& input, int dim,
                              int other_dim) override;
  comm::LocalBytes halo_exchange(const std::vector<int>& axes, const comm::LocalBytes& input, int dim,
                                 int64_t halo_rows) override;
  comm::LocalBytes send_recv(const std::vector<int>& axes, const comm::LocalBytes& input, int source,
                             int destination) override;

  std::unique_ptr<comm::PendingCollective> start_all_reduce(const std::vector<int>& axes,
                                                            std::span<float> buffer) override;
  std::unique_ptr<comm::PendingCollective> start_reduce_scatter(const std::vector<int>& axes,
                                                                std::span<const float> input,
                                                                std::span<float> output) override;

  // The NCCL communicator of this rank's group over `axes` (two or more members), created on first
  // use (collective over the group; prepare() creates them all up front).
  ncclComm_t communicator_for(const std::vector<int>& axes);
  // Where the engine queues its NCCL work, apart from the compute stream.
  cudaStream_t stream() const { return stream_; }

 private:
  // A blocking collective on staged data: uploads `send`, lets `issue` enqueue NCCL work from the
  // device copy of `send` into a device buffer of `receive_bytes`, and returns that buffer's
  // contents once the stream has finished.
  using Issue = std::function<void(const std::byte* device_send, std::byte* device_receive)>;
  std::vector<std::byte> staged(std::span<const std::byte> send, size_t receive_bytes, const Issue& issue);

  cudaStream_t stream_ = nullptr;
  std::map<std::vector<int>, ncclComm_t> comms_;
  StagingPool staging_;
};

}  // namespace splitbrain::exec::cuda
