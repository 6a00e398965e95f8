#include "exec/runtime/optimizer.h"

#include <cmath>
#include <stdexcept>

namespace splitbrain::exec {

namespace {
constexpr int64_t kStateElementBytes = 4;
}

Optimizer::Optimizer(plans::OptimizerConfig config, MemoryTracker& memory) : config_(config), memory_(memory) {}

Optimizer::~Optimizer() {
  for (size_t i = 0; i < first_.size(); ++i) {
    memory_.release(MemoryCategory::optimizer,
                    static_cast<int64_t>(first_[i].size() + second_[i].size()) * kStateElementBytes);
  }
}

void Optimizer::add_parameter(int64_t elements) {
  const bool adam = config_.kind == plans::OptimizerKind::adam;
  first_.emplace_back(static_cast<size_t>(elements), 0.0f);
  second_.emplace_back(adam ? static_cast<size_t>(elements) : 0, 0.0f);
  memory_.allocate(MemoryCategory::optimizer, (adam ? 2 : 1) * elements * kStateElementBytes);
}

void Optimizer::step(const std::vector<comm::LocalArray*>& params, const std::vector<const comm::LocalArray*>& grads) {
  if (params.size() != first_.size() || grads.size() != first_.size()) {
    throw std::logic_error("Optimizer::step: parameter count differs from the registered one");
  }
  ++steps_;
  const auto lr = static_cast<float>(config_.learning_rate);
  const auto decay = static_cast<float>(config_.weight_decay);
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<float>& p = params[i]->values;
    const std::vector<float>& g = grads[i]->values;
    std::vector<float>& m = first_[i];
    if (config_.kind == plans::OptimizerKind::sgd_momentum) {
      const auto momentum = static_cast<float>(config_.momentum);
      for (size_t k = 0; k < p.size(); ++k) {
        const float gradient = g[k] + decay * p[k];
        m[k] = steps_ == 1 ? gradient : momentum * m[k] + gradient;  // torch: the buffer starts at g
        p[k] -= lr * m[k];
      }
    } else {
      std::vector<float>& v = second_[i];
      const double b1 = config_.beta1;
      const double b2 = config_.beta2;
      const double correction1 = 1.0 - std::pow(b1, static_cast<double>(steps_));
      const double correction2 = 1.0 - std::pow(b2, static_cast<double>(steps_));
      const double step_size = config_.learning_rate / correction1;
      for (size_t k = 0; k < p.size(); ++k) {
        const float gradient = g[k] + decay * p[k];
        m[k] = static_cast<float>(b1 * m[k] + (1 - b1) * gradient);
        v[k] = static_cast<float>(b2 * v[k] + (1 - b2) * gradient * gradient);
        const double denominator = std::sqrt(v[k] / correction2) + config_.epsilon;
        p[k] -= static_cast<float>(step_size * m[k] / denominator);
      }
    }
  }
}

}  // namespace splitbrain::exec
