#include "exec/runtime/stage_link.h"

#include <fmt/format.h>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"

namespace splitbrain::exec {
namespace {
constexpr int kPositions = 8;  // inputs per layer the tag scheme leaves room for
}

StageLink::StageLink(comm::Communicator& communicator, int pipe_axis, int micro_batches)
    : communicator_(communicator), pipe_axis_(pipe_axis), micro_batches_(micro_batches) {
  if (pipe_axis_ >= 0) comm_ = communicator_.communicators().get({pipe_axis_});
}

int StageLink::tag(int consumer, int position, int micro, bool backward) const {
  const int64_t value = ((static_cast<int64_t>(consumer) * kPositions + position) * micro_batches_ + micro) * 2 + (backward ? 1 : 0);
  if (value > 32767 || position >= kPositions) {  // MPI guarantees tags up to 32767
    throw InputError(fmt::format("pipeline: too many layers x micro-batches for message tags (layer {}, micro-batch {})",
                                 consumer, micro));
  }
  return static_cast<int>(value);
}

void StageLink::send(std::shared_ptr<const comm::LocalArray> array, const plans::Collective& transfer, int message_tag,
                     std::string_view label) {
  const int edge = edge_of(message_tag);
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->edge != edge) continue;
    SB_MPI_CHECK(MPI_Wait(&it->request, MPI_STATUS_IGNORE));
    pending_.erase(it);
    break;
  }
  PendingSend pending{std::move(array), MPI_REQUEST_NULL, edge};
  SB_MPI_CHECK(MPI_Isend(pending.array->values.data(), static_cast<int>(pending.array->values.size()), MPI_FLOAT,
                         transfer.destination_index, message_tag, comm_, &pending.request));
  communicator_.counter().add(label, transfer.kind, plans::bytes_sent(transfer, transfer.source_index));
  pending_.push_back(std::move(pending));
}

comm::LocalArray StageLink::receive(std::vector<int64_t> shape, const plans::Collective& transfer, int message_tag) {
  comm::LocalArray array;
  array.values.resize(static_cast<size_t>(comm::element_count(shape)));
  array.shape = std::move(shape);
  SB_MPI_CHECK(MPI_Recv(array.values.data(), static_cast<int>(array.values.size()), MPI_FLOAT, transfer.source_index,
                        message_tag, comm_, MPI_STATUS_IGNORE));
  return array;
}

void StageLink::progress() {
  for (PendingSend& pending : pending_) {
    int done = 0;
    if (pending.request != MPI_REQUEST_NULL) SB_MPI_CHECK(MPI_Test(&pending.request, &done, MPI_STATUS_IGNORE));
  }
}

void StageLink::finish_sends() {
  for (PendingSend& pending : pending_) SB_MPI_CHECK(MPI_Wait(&pending.request, MPI_STATUS_IGNORE));
  pending_.clear();
}

}  // namespace splitbrain::exec
