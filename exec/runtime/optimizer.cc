#include "exec/runtime/optimizer.h"

#include <stdexcept>
#include <vector>

namespace splitbrain::exec {

Optimizer::Optimizer(plans::OptimizerConfig config, Device& device, MemoryTracker& memory, bool keeps_master)
    : config_(config), device_(device), memory_(memory), keeps_master_(keeps_master) {}

void Optimizer::add_parameter(DeviceArray& value) {
  if (keeps_master_) {
    if (master_.size() != first_.size()) {
      throw std::logic_error("Optimizer: a parameter without its values registered beside master copies");
    }
    TrackedArray master = make_tracked(device_.memory(), memory_, MemoryCategory::optimizer, {value.elements()}, false);
    device_.memory().copy(value, 0, *master, 0, value.elements());
    device_.memory().round_to_bf16(value);
    master_.push_back(std::move(master));
  }
  add_parameter(value.elements());
}

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
  if (!keeps_master_) {
    device_.kernels().update_all(config_, steps_, params, grads, first, second);
    return;
  }
  if (master_.size() != params.size()) throw std::logic_error("Optimizer::step: a parameter without its master copy");
  std::vector<DeviceArray*> masters;
  for (const TrackedArray& master : master_) masters.push_back(master.get());
  device_.kernels().update_all(config_, steps_, masters, grads, first, second);
  for (size_t i = 0; i < params.size(); ++i) {
    device_.memory().copy(*master_[i], 0, *params[i], 0, params[i]->elements());
    device_.memory().round_to_bf16(*params[i]);
  }
}

}  // namespace splitbrain::exec
