#include "tests/exec/equivalence/scrambled_collectives.h"

#include <utility>

#include "exec/runtime/collectives_in_device_memory.h"
#include "plans/collective_residence.h"
#include "tests/exec/equivalence/scrambled_array.h"

namespace splitbrain::equivalence {

using exec::DeviceArray;

void ScrambledCollectives::run_collectives(exec::comm::Communicator& communicator,
                                           std::span<const plans::Collective> collectives, const DeviceArray& input,
                                           DeviceArray& output, std::string_view label) {
  // As a GPU with NCCL runs them: in the device's memory, through its own calls.
  if (plans::runs_on_device_memory(collectives)) {
    exec::run_collectives_in_device_memory({memory_, *this}, communicator, collectives, input, output, label);
    return;
  }
  InUse use{&input, &output};
  HostCollectives::run_collectives(communicator, collectives, input, output, label);
}

void ScrambledCollectives::redistribute(exec::comm::Communicator& communicator,
                                        std::span<const plans::RedistributionStep> steps,
                                        std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                                        std::string_view label) {
  exec::redistribute_in_device_memory({memory_, *this}, communicator, steps, global_shape, input, output, label);
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledCollectives::start_all_reduce(
    exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, DeviceArray& buffer) {
  InUse use{&buffer};
  auto pending = HostCollectives::start_all_reduce(engine, axes, buffer);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledCollectives::start_reduce_scatter(
    exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  auto pending = HostCollectives::start_reduce_scatter(engine, axes, input, output);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

void ScrambledCollectives::all_gather(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                      const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  HostCollectives::all_gather(engine, axes, input, output);
}

void ScrambledCollectives::all_to_all(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                      const DeviceArray& input, DeviceArray& output) {
  InUse use{&input, &output};
  HostCollectives::all_to_all(engine, axes, input, output);
}

std::unique_ptr<exec::comm::PendingCollective> ScrambledCollectives::start_send(exec::comm::CollectiveEngine& engine,
                                                                                const std::vector<int>& axes,
                                                                                int destination, int tag,
                                                                                const DeviceArray& array) {
  // As a GPU with NCCL sends: held back and grouped with the next receive, matched in order.
  InUse use{&array};
  auto pending = grouped_hand_overs_ ? hand_overs_.start_send(engine, axes, destination, array)
                                     : HostCollectives::start_send(engine, axes, destination, tag, array);
  return std::make_unique<HeldPending>(std::move(pending), std::move(use));
}

void ScrambledCollectives::receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source,
                                   int tag, DeviceArray& into) {
  InUse use{&into};
  if (grouped_hand_overs_) {
    use.add_all(std::exchange(held_receives_, {}));  // their group is posted now
    hand_overs_.receive(engine, axes, source, into);
  } else {
    HostCollectives::receive(engine, axes, source, tag, into);
  }
}

void ScrambledCollectives::hold_receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source,
                                        int tag, DeviceArray& into) {
  if (!grouped_hand_overs_) {
    receive(engine, axes, source, tag, into);
    return;
  }
  hand_overs_.hold_receive(engine, axes, source, into);
  held_receives_.push_back(&into);
}

}  // namespace splitbrain::equivalence
