#include "exec/runtime/stage_link.h"

#include <fmt/format.h>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"

#include <stdexcept>

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

int StageLink::send(const comm::LocalArray& array, const plans::Collective& transfer, int message_tag,
                    std::string_view label) {
  MPI_Request request = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Isend(array.values.data(), static_cast<int>(array.values.size()), MPI_FLOAT,
                         transfer.destination_index, message_tag, comm_, &request));
  communicator_.counter().add(label, transfer.kind, plans::bytes_sent(transfer, transfer.source_index));
  pending_[next_id_] = request;
  return next_id_++;
}

void StageLink::wait(int send_id) {
  const auto it = pending_.find(send_id);
  if (it == pending_.end()) throw std::logic_error(fmt::format("pipeline: wait for send {}, which is not pending", send_id));
  SB_MPI_CHECK(MPI_Wait(&it->second, MPI_STATUS_IGNORE));
  pending_.erase(it);
}

void StageLink::receive(comm::LocalArray& into, const plans::Collective& transfer, int message_tag) {
  SB_MPI_CHECK(MPI_Recv(into.values.data(), static_cast<int>(into.values.size()), MPI_FLOAT, transfer.source_index,
                        message_tag, comm_, MPI_STATUS_IGNORE));
}

void StageLink::progress() {
  for (auto& [id, request] : pending_) {
    int done = 0;
    if (request != MPI_REQUEST_NULL) SB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
  }
}

}  // namespace splitbrain::exec
