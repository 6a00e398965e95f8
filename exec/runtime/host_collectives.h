#pragma once
// HostCollectives: HostDevice's communication (DeviceCollectives, device_collectives.h) on
// HostArrays' values: the plan's collectives through comm::Communicator (checked and counted
// there), redistributions through comm/redistribution_runner.h, the bucket reductions and
// gathers through the collective engine, pipeline hand-overs as tagged MPI messages. It keeps no
// state, so a GPU device stages what it cannot run in its own memory through one of these.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "exec/runtime/device_collectives.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::exec {

class HostCollectives : public DeviceCollectives {
 public:
  void run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                       const DeviceArray& input, DeviceArray& output, std::string_view label) override;
  void redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                    std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                    std::string_view label) override;
  std::unique_ptr<comm::PendingCollective> start_all_reduce(comm::CollectiveEngine& engine,
                                                            const std::vector<int>& axes, DeviceArray& buffer) override;
  std::unique_ptr<comm::PendingCollective> start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                const std::vector<int>& axes, const DeviceArray& input,
                                                                DeviceArray& output) override;
  void all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                  DeviceArray& output) override;
  void all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                  DeviceArray& output) override;
  std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                                      int destination, int tag, const DeviceArray& array) override;
  void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
               DeviceArray& into) override;
};

}  // namespace splitbrain::exec
