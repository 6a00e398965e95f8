#pragma once
// DeviceCollectives: communication on a device's arrays (device.h): the plan's collectives and
// layout redistributions, the gradient buckets' reductions, ZeRO's gathers and the pipeline's
// hand-overs, each through the communicator or collective engine it is given.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/comm/communicator.h"
#include "exec/runtime/device_array.h"
#include "plans/plan.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {

class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;

  // The plan's collectives in turn (each one's output the next one's input), counted by the
  // communicator under `label`; `output` receives the last result.
  virtual void run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                               const DeviceArray& input, DeviceArray& output, std::string_view label) = 0;
  // plans::plan_redistribution's steps (comm/redistribution_runner.h); `input` is left as it was.
  virtual void redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                            std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                            std::string_view label) = 0;
  // Non-blocking reductions of gradient buckets (CollectiveEngine's contracts): the arrays stay
  // untouched until the returned operation completes.
  virtual std::unique_ptr<comm::PendingCollective> start_all_reduce(comm::CollectiveEngine& engine,
                                                                    const std::vector<int>& axes,
                                                                    DeviceArray& buffer) = 0;
  virtual std::unique_ptr<comm::PendingCollective> start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                        const std::vector<int>& axes,
                                                                        const DeviceArray& input,
                                                                        DeviceArray& output) = 0;
  // The members' arrays concatenated, member 0 first, outside the plan (not counted): a
  // checkpoint's gather of ZeRO 3's slices.
  virtual void all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                          DeviceArray& output) = 0;
  // Member j's piece (the j-th of n equal, contiguous pieces of `input`) to member j; `output`
  // holds the pieces received, member 0's first (a flat all-to-all, outside the plan: not counted).
  virtual void all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                          DeviceArray& output) = 0;
  // Point to point within the group over `axes` (a pipeline hand-over): a non-blocking send to
  // member `destination`, and the matching blocking receive from member `source`.
  virtual std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine& engine,
                                                              const std::vector<int>& axes, int destination, int tag,
                                                              const DeviceArray& array) = 0;
  virtual void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                       DeviceArray& into) = 0;
  // A receive the step program posts in one group with its next receive
  // (plans::StepInstruction::posted_with_next): a device that moves grouped hand-overs holds it
  // back and writes `into` by the time that receive returns; by default it is received now.
  virtual void hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                            DeviceArray& into) {
    receive(engine, axes, source, tag, into);
  }
  // Whether the plan's hand-overs complete as groups of rendezvous messages matched in order
  // (plans::hand_overs_complete_in_groups; the Trainer says so once): a device whose transport
  // works that way (NCCL's point-to-point calls, grouped_hand_overs.h) may then move them in its
  // own memory, and must keep tagged messages otherwise. Ignored by default.
  virtual void allow_grouped_hand_overs(bool /*allowed*/) {}
};

}  // namespace splitbrain::exec
