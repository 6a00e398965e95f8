#pragma once
// Pipeline hand-overs with NCCL on device memory: a group of exec/runtime/grouped_hand_overs.h
// posted as one NCCL group of sends and receives on the engine's communication stream, after what
// the compute stream has queued (the sends' producers, the receives' buffers' last readers), its
// wait() making the compute stream follow it: the host never waits. Only for a plan whose
// hand-overs complete in such groups (plans::hand_overs_complete_in_groups): NCCL matches the
// messages between two ranks in order and blocks the stream until each has met its match.

#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "exec/runtime/grouped_hand_overs.h"

namespace splitbrain::exec::cuda {

class NcclHandOvers final : public HandOverTransport {
 public:
  // `compute`: the stream the device's kernels run on.
  explicit NcclHandOvers(cudaStream_t compute) : compute_(compute) {}
  // `engine` must be the NCCL engine (NcclCollectives).
  std::unique_ptr<comm::PendingCollective> post(comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                                std::span<const HandOver> group) override;

 private:
  cudaStream_t compute_;
};

}  // namespace splitbrain::exec::cuda
