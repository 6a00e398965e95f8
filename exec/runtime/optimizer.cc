#include "exec/runtime/optimizer.h"

#include <stdexcept>
#include <vector>

namespace splitbrain::exec {

Optimizer::Optimizer(plans::OptimizerConfig config, Device& device, MemoryTracker& memory)
    : config_(config), device_(device), memory_(memory) {}

void Optimizer::add_parameter(int64_t elements) {
  first_.push_back(make_tracked(device_.memory(), memory_, MemoryCategory::optimizer, {elements}));
  second_.push_back(config_.kind == plans::OptimizerKind::adam
                        ? make_tracked(device_.memory(), memory_, MemoryCategory::optimizer, {elements})
                        : nullptr);
}

void Optimizer::step(const std::vector<DeviceArray*>& params, const std::vector<const DeviceArray*>& grads) {
  if (params.size() != first_.size() || grads.size() != first_.size()) {
    throw std::logic_error("Optimizer::step: parameter count differs from the registered one");
  }
  std::vector<DeviceArray*> first;
  std::vector<DeviceArray*> second;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i]->elements() != first_[i]->elements() || grads[i]->elements() != first_[i]->elements()) {
      throw std::logic_error("Optimizer::step: a parameter's size differs from the registered one");
    }
    first.push_back(first_[i].get());
    if (second_[i] != nullptr) second.push_back(second_[i].get());
  }
  ++steps_;
  device_.kernels().update_all(config_, steps_, params, grads, first, second);
}

}  // namespace splitbrain::exec
