#include "exec/runtime/stage_link.h"

#include <fmt/format.h>

#include <stdexcept>

#include "model/errors.h"

namespace splitbrain::exec {
namespace {
constexpr int kPositions = 8;  // inputs per layer the tag scheme leaves room for
}

StageLink::StageLink(comm::Communicator& communicator, DeviceCollectives& device, int pipe_axis, int micro_batches)
    : communicator_(communicator), device_(device), micro_batches_(micro_batches) {
  if (pipe_axis >= 0) pipe_axes_ = {pipe_axis};
}

int StageLink::tag(int consumer, int position, int micro, bool backward) const {
  const int64_t value =
      ((static_cast<int64_t>(consumer) * kPositions + position) * micro_batches_ + micro) * 2 + (backward ? 1 : 0);
  if (value > 32767 || position >= kPositions) {  // MPI guarantees tags up to 32767
    throw InputError(fmt::format(
        "pipeline: too many layers x micro-batches for message tags (layer {}, micro-batch {})", consumer, micro));
  }
  return static_cast<int>(value);
}

int StageLink::send(const DeviceArray& array, const plans::Collective& transfer, int message_tag,
                    std::string_view label) {
  pending_[next_id_] =
      device_.start_send(communicator_.engine(), pipe_axes_, transfer.destination_index, message_tag, array);
  communicator_.count(label, transfer);  // called on the source only: its index is source_index
  return next_id_++;
}

void StageLink::wait(int send_id) {
  const auto it = pending_.find(send_id);
  if (it == pending_.end())
    throw std::logic_error(fmt::format("pipeline: wait for send {}, which is not pending", send_id));
  it->second->wait();
  pending_.erase(it);
}

void StageLink::receive(DeviceArray& into, const plans::Collective& transfer, int message_tag, bool posted_with_next) {
  if (posted_with_next) {
    device_.hold_receive(communicator_.engine(), pipe_axes_, transfer.source_index, message_tag, into);
  } else {
    device_.receive(communicator_.engine(), pipe_axes_, transfer.source_index, message_tag, into);
  }
}

void StageLink::progress() {
  for (auto& [id, pending] : pending_) pending->test();
}

}  // namespace splitbrain::exec
