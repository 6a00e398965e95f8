#pragma once
// The parameter update on each rank's local shards, with PyTorch's semantics so runs can be
// checked against it: SGD with momentum (buf = momentum * buf + g, starting at g; p -= lr * buf)
// and Adam (bias-corrected moments). Weight decay is added to the gradient (L2, as torch.optim).

#include <cstdint>
#include <vector>

#include "exec/comm/local_array.h"
#include "exec/runtime/memory_tracker.h"
#include "plans/plan.h"

namespace splitbrain::exec {

class Optimizer {
 public:
  Optimizer(plans::OptimizerConfig config, MemoryTracker& memory);
  ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Registers a parameter (in update order) and allocates its state.
  void add_parameter(int64_t elements);
  void step(const std::vector<comm::LocalArray*>& params, const std::vector<const comm::LocalArray*>& grads);

  int64_t steps_taken() const { return steps_; }
  // The state, for checkpoints: per parameter, the first (momentum / Adam m) and second (Adam v)
  // moments; the second is empty for SGD.
  std::vector<std::vector<float>>& first_moments() { return first_; }
  std::vector<std::vector<float>>& second_moments() { return second_; }
  void set_steps_taken(int64_t steps) { steps_ = steps; }

 private:
  plans::OptimizerConfig config_;
  MemoryTracker& memory_;
  std::vector<std::vector<float>> first_;
  std::vector<std::vector<float>> second_;
  int64_t steps_ = 0;
};

}  // namespace splitbrain::exec
