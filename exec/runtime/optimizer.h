#pragma once
// The parameter update on each rank's local shards, with PyTorch's semantics so runs can be
// checked against it: SGD with momentum (buf = momentum * buf + g, starting at g; p -= lr * buf)
// and Adam (bias-corrected moments). Weight decay is added to the gradient (L2, as torch.optim).
// The state lives on the device, next to the parameters; the device does the arithmetic
// (DeviceKernels::update_all), all the parameters in one call.

#include <cstdint>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/tracked_array.h"
#include "plans/plan.h"

namespace splitbrain::exec {

class Optimizer {
 public:
  // `keeps_master`: a bf16 run's (mixed_precision.h): the update runs on an fp32 master copy of
  // each parameter, and the parameter the kernels read is that copy rounded to bf16.
  Optimizer(plans::OptimizerConfig config, Device& device, MemoryTracker& memory, bool keeps_master = false);

  // Registers a parameter (in update order) and allocates its state.
  void add_parameter(int64_t elements);
  // The same for a parameter whose values `value` holds: with a master copy, the copy is made of
  // them (counted as optimizer state, 4 bytes per element, as the simulator counts it) and
  // `value` rounded to bf16, as every update leaves it.
  void add_parameter(DeviceArray& value);
  void step(const std::vector<DeviceArray*>& params, const std::vector<const DeviceArray*>& grads);

  int64_t steps_taken() const { return steps_; }
  // The state, for checkpoints: per parameter, the first (momentum / Adam m) and second (Adam
  // v) moments; the second is null for SGD.
  const std::vector<TrackedArray>& first_moments() const { return first_; }
  const std::vector<TrackedArray>& second_moments() const { return second_; }
  // With a master copy: per parameter, its fp32 values (empty otherwise).
  const std::vector<TrackedArray>& master_copies() const { return master_; }
  void set_steps_taken(int64_t steps) { steps_ = steps; }

 private:
  plans::OptimizerConfig config_;
  Device& device_;
  MemoryTracker& memory_;
  std::vector<TrackedArray> first_;
  std::vector<TrackedArray> second_;
  bool keeps_master_ = false;
  std::vector<TrackedArray> master_;  // with keeps_master_: per parameter, its fp32 values
  int64_t steps_ = 0;
};

}  // namespace splitbrain::exec
