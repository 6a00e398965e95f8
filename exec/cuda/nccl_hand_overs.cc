#include "exec/cuda/nccl_hand_overs.h"

#include <stdexcept>

#include "exec/cuda/cuda_array.h"
#include "exec/cuda/nccl_collectives.h"
#include "exec/cuda/stream_ordered_collectives.h"

namespace splitbrain::exec::cuda {

std::unique_ptr<comm::PendingCollective> NcclHandOvers::post(comm::CollectiveEngine& engine,
                                                             const std::vector<int>& axes,
                                                             std::span<const HandOver> group) {
  auto* nccl = dynamic_cast<NcclCollectives*>(&engine);
  if (nccl == nullptr) throw std::logic_error("NcclHandOvers: hand-overs over an engine other than NCCL");
  std::vector<PointToPoint> messages;
  for (const HandOver& h : group) {
    const DeviceArray& array = h.send != nullptr ? *h.send : *h.receive;
    messages.push_back({.send = h.send != nullptr ? CudaArray::data_of(*h.send) : nullptr,
                        .receive = h.receive != nullptr ? CudaArray::data_of(*h.receive) : nullptr,
                        .count = static_cast<size_t>(array.elements()),
                        .peer = h.peer});
  }
  return start_point_to_point({compute_, nccl->stream()}, nccl->communicator_for(axes), messages);
}

}  // namespace splitbrain::exec::cuda
