#pragma once
// The scrambled test device's communication (scrambled_device.h). Its layout redistributions and
// the plan's collectives run as a GPU with NCCL runs them, in the device's memory through its own
// calls (exec/runtime/collectives_in_device_memory.h), and, where the plan allows, its pipeline
// hand-overs as NCCL's point-to-point calls behave (grouped_hand_overs.h over
// synchronous_hand_overs.h), so every family checks those paths too; the rest is HostCollectives'
// with the arrays plain until the operation completes.

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "exec/runtime/device_memory.h"
#include "exec/runtime/grouped_hand_overs.h"
#include "exec/runtime/host_collectives.h"
#include "tests/exec/equivalence/synchronous_hand_overs.h"

namespace splitbrain::equivalence {

class ScrambledCollectives final : public exec::HostCollectives {
 public:
  // `memory`: the device's, which the collectives in its memory copy through; must outlive this.
  explicit ScrambledCollectives(exec::DeviceMemory& memory) : memory_(memory) {}

  void run_collectives(exec::comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                       const exec::DeviceArray& input, exec::DeviceArray& output, std::string_view label) override;
  void redistribute(exec::comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                    std::span<const int64_t> global_shape, exec::DeviceArray& input, exec::DeviceArray& output,
                    std::string_view label) override;
  std::unique_ptr<exec::comm::PendingCollective> start_all_reduce(exec::comm::CollectiveEngine& engine,
                                                                  const std::vector<int>& axes,
                                                                  exec::DeviceArray& buffer) override;
  std::unique_ptr<exec::comm::PendingCollective> start_reduce_scatter(exec::comm::CollectiveEngine& engine,
                                                                      const std::vector<int>& axes,
                                                                      const exec::DeviceArray& input,
                                                                      exec::DeviceArray& output) override;
  void all_gather(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, const exec::DeviceArray& input,
                  exec::DeviceArray& output) override;
  void all_to_all(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, const exec::DeviceArray& input,
                  exec::DeviceArray& output) override;
  std::unique_ptr<exec::comm::PendingCollective> start_send(exec::comm::CollectiveEngine& engine,
                                                            const std::vector<int>& axes, int destination, int tag,
                                                            const exec::DeviceArray& array) override;
  void receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
               exec::DeviceArray& into) override;
  void hold_receive(exec::comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                    exec::DeviceArray& into) override;
  // Where allowed, pipeline hand-overs as NCCL's point-to-point calls behave (held back, grouped,
  // synchronous, matched in order); else HostCollectives' tagged MPI messages.
  void allow_grouped_hand_overs(bool allowed) override { grouped_hand_overs_ = allowed; }
  bool grouped_hand_overs() const { return grouped_hand_overs_; }

 private:
  exec::DeviceMemory& memory_;
  bool grouped_hand_overs_ = false;
  std::vector<exec::DeviceArray*> held_receives_;  // written when the next receive posts their group
  SynchronousMpiHandOvers transport_;
  exec::GroupedHandOvers hand_overs_{transport_};
};

}  // namespace splitbrain::equivalence
