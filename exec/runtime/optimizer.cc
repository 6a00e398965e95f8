#include "exec/runtime/optimizer.h"

#include <stdexcept>

namespace splitbrain::exec {

Optimizer::Optimizer(plans::OptimizerConfig config, Device& device, MemoryTracker& memory)
    : config_(config), device_(device), memory_(memory) {}

void Optimizer::add_parameter(int64_t elements) {
  first_.push_back(make_tracked(device_, memory_, MemoryCategory::optimizer, {elements}));
  second_.push_back(config_.kind == plans::OptimizerKind::adam
                        ? make_tracked(device_, memory_, MemoryCategory::optimizer, {elements})
                        : nullptr);
}

void Optimizer::step(const std::vector<DeviceArray*>& params, const std::vector<const DeviceArray*>& grads) {
  if (params.size() != first_.size() || grads.size() != first_.size()) {
    throw std::logic_error("Optimizer::step: parameter count differs from the registered one");
  }
  ++steps_;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i]->elements() != first_[i]->elements() || grads[i]->elements() != first_[i]->elements()) {
      throw std::logic_error("Optimizer::step: a parameter's size differs from the registered one");
    }
    device_.update(config_, steps_, *params[i], *grads[i], *first_[i], second_[i].get());
  }
}

}  // namespace splitbrain::exec
