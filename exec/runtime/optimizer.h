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
  Optimizer(plans::OptimizerConfig config, Device& device, MemoryTracker& memory);

  // Registers a parameter (in update order) and allocates its state.
  void add_parameter(int64_t elements);
  void step(const std::vector<DeviceArray*>& params, const std::vector<const DeviceArray*>& grads);

  int64_t steps_taken() const { return steps_; }
  // The state, for checkpoints: per parameter, the first (momentum / Adam m) and second (Adam
  // v) moments; the second is null for SGD.
  const std::vector<TrackedArray>& first_moments() const { return first_; }
  const std::vector<TrackedArray>& second_moments() const { return second_; }
  void set_steps_taken(int64_t steps) { steps_ = steps; }

 private:
  plans::OptimizerConfig config_;
  Device& device_;
  MemoryTracker& memory_;
  std::vector<TrackedArray> first_;
  std::vector<TrackedArray> second_;
  int64_t steps_ = 0;
};

}  // namespace splitbrain::exec
