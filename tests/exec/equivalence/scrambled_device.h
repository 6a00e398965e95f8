#pragma once
// A backend double for issue 14's must-show 4: HostDevice with arrays whose memory is scrambled
// (each 32-bit word XORed with the array's own key) whenever no Device call is using them. A
// Device call unscrambles the arrays it is handed for its duration (a non-blocking one until it
// completes), so a run through the Device's contracts trains exactly like HostDevice; a runtime
// that read or wrote an array's values any other way (a host round trip behind the Device's
// back, an op reading an array it was not handed) would compute with garbage, and the
// equivalence checks against the 1-rank reference would fail. Its layout redistributions and the
// plan's collectives run as a GPU with NCCL runs them, in the device's memory through its own calls
// (exec/runtime/collectives_in_device_memory.h), and, where the plan allows, its pipeline
// hand-overs as NCCL's point-to-point calls behave (grouped_hand_overs.h over
// synchronous_hand_overs.h), so every family checks those paths too.

#include <memory>
#include <vector>

#include "exec/runtime/grouped_hand_overs.h"
#include "exec/runtime/host_device.h"
#include "tests/exec/equivalence/synchronous_hand_overs.h"

namespace splitbrain::equivalence {

class ScrambledDevice final : public exec::HostDevice {
 public:
  std::unique_ptr<exec::DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;

  void fill(exec::DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const exec::DeviceArray& from, int64_t from_first, exec::DeviceArray& into, int64_t into_first,
            int64_t count) override;
  void add(const exec::DeviceArray& from, exec::DeviceArray& into) override;
  void copy_block(const exec::DeviceArray& from, std::span<const int64_t> offset, exec::DeviceArray& block) override;
  void add_block(const exec::DeviceArray& block, exec::DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const exec::DeviceArray& from, int64_t from_first, exec::DeviceArray& into, int64_t into_first,
                 const exec::kernels::RowCopy& rows) override;
  void pack(std::span<const exec::DeviceArray* const> parts, exec::DeviceArray& flat) override;
  void unpack(const exec::DeviceArray& flat, std::span<exec::DeviceArray* const> parts) override;

  void forward(exec::LayerOp& op, int micro, int64_t step, std::span<const exec::DeviceArray* const> inputs,
               std::span<const exec::DeviceArray* const> params, exec::DeviceArray& output) override;
  void backward(exec::LayerOp& op, int micro, std::span<const exec::DeviceArray* const> inputs,
                const exec::DeviceArray& output, const exec::DeviceArray& output_grad,
                std::span<const exec::DeviceArray* const> params, std::span<exec::DeviceArray* const> input_grads,
                std::span<exec::DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, exec::DeviceArray& parameter,
              const exec::DeviceArray& gradient, exec::DeviceArray& first_moment,
              exec::DeviceArray* second_moment) override;

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
  // synchronous, matched in order); else HostDevice's tagged MPI messages.
  void allow_grouped_hand_overs(bool allowed) override { grouped_hand_overs_ = allowed; }
  bool grouped_hand_overs() const { return grouped_hand_overs_; }

  // Whether `array` holds scrambled values now (it is not in use by a Device call).
  static bool scrambled(const exec::DeviceArray& array);

 protected:
  void upload_values(std::span<const float> host, exec::DeviceArray& into) override;
  void download_values(const exec::DeviceArray& from, std::span<float> host) override;

 private:
  uint32_t next_key_ = 0x2545F491u;
  bool grouped_hand_overs_ = false;
  std::vector<exec::DeviceArray*> held_receives_;  // written when the next receive posts their group
  SynchronousMpiHandOvers transport_;
  exec::GroupedHandOvers hand_overs_{transport_};
};

}  // namespace splitbrain::equivalence
