#include "exec/runtime/host_collectives.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "exec/comm/pipeline_message.h"
#include "exec/comm/redistribution_runner.h"

namespace splitbrain::exec {
namespace {

// Moves a result into an array whose shape the program fixed.
void deliver(comm::LocalArray result, DeviceArray& into, const char* what) {
  if (static_cast<int64_t>(result.values.size()) != into.elements()) {
    throw std::logic_error(std::string("step program: ") + what + " delivers " + std::to_string(result.values.size()) +
                           " elements into a buffer of " + std::to_string(into.elements()));
  }
  comm::LocalArray& target = dynamic_cast<HostArray&>(into).array;
  target.values = std::move(result.values);
}

}  // namespace

void HostCollectives::run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                                      const DeviceArray& input, DeviceArray& output, std::string_view label) {
  if (collectives.empty()) throw std::logic_error("step program: a collective instruction without collectives");
  comm::LocalArray result = communicator.run(collectives.front(), HostArray::storage(input), label);
  for (size_t i = 1; i < collectives.size(); ++i) result = communicator.run(collectives[i], result, label);
  deliver(std::move(result), output, "a collective");
}

void HostCollectives::redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                                   std::string_view label) {
  comm::LocalArray result =
      comm::run_redistribution(communicator, steps, global_shape, HostArray::storage(input), label);
  deliver(std::move(result), output, "a redistribution");
}

std::unique_ptr<comm::PendingCollective> HostCollectives::start_all_reduce(comm::CollectiveEngine& engine,
                                                                           const std::vector<int>& axes,
                                                                           DeviceArray& buffer) {
  return engine.start_all_reduce(axes, HostArray::storage(buffer).values);
}

std::unique_ptr<comm::PendingCollective> HostCollectives::start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                               const std::vector<int>& axes,
                                                                               const DeviceArray& input,
                                                                               DeviceArray& output) {
  return engine.start_reduce_scatter(axes, HostArray::storage(input).values, HostArray::storage(output).values);
}

void HostCollectives::all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                                 DeviceArray& output) {
  deliver(comm::to_floats(engine.all_gather(axes, comm::to_bytes(HostArray::storage(input)), 0)), output, "a gather");
}

void HostCollectives::all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                                 DeviceArray& output) {
  // The engine's all-to-all of a [members, piece] array cut along dim 0 and joined along dim 1:
  // member j's row to member j, the rows received one after another.
  const auto n = static_cast<int64_t>(engine.group_size(axes));
  if (input.elements() % n != 0) throw std::logic_error("step program: an all-to-all the group does not divide");
  const comm::LocalArray rows{{n, input.elements() / n}, HostArray::storage(input).values};
  deliver(comm::to_floats(engine.all_to_all(axes, comm::to_bytes(rows), 1, 0)), output, "an all-to-all");
}

std::unique_ptr<comm::PendingCollective> HostCollectives::start_send(comm::CollectiveEngine& engine,
                                                                     const std::vector<int>& axes, int destination,
                                                                     int tag, const DeviceArray& array) {
  return comm::start_message(HostArray::storage(array).values, destination, tag, engine.communicators().get(axes));
}

void HostCollectives::receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                              DeviceArray& into) {
  comm::receive_message(HostArray::storage(into).values, source, tag, engine.communicators().get(axes));
}

}  // namespace splitbrain::exec
