#pragma once
// Small pieces the ops share.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "exec/runtime/layer_op.h"
#include "model/op.h"
#include "plans/kernel_problem.h"

namespace splitbrain::exec::ops {

// Under a split contraction the output is a partial sum, so only the first rank of that group
// adds the bias: the others give their kernel none (and still compute the bias gradient, to stay
// replicas).
inline const float* bias_to_add(bool adds_bias, ConstTensorSpan bias) { return adds_bias ? bias.data() : nullptr; }

// The layer's kernel problem under the plan (plans/kernel_problem.h), the one the simulator
// prices and calibrate times, for this op's micro-batch.
template <class Problem>
Problem planned_problem(const OpContext& op) {
  const std::optional<plans::KernelProblem> problem =
      plans::kernel_problem(*op.model, op.layer, *op.layouts, *op.mesh, op.output_global_shape.at(0));
  const Problem* of_kind = problem ? std::get_if<Problem>(&*problem) : nullptr;
  if (of_kind == nullptr) {
    throw std::logic_error("layer '" + op.model->layer(op.layer).name + "': the plan gives it no kernel problem");
  }
  return *of_kind;
}

// From host values [samples, positions] (one per position of each sample, as the data source
// gives labels and token ids), this rank's positions [first, first + count) of each sample, where
// the sequence is split; all of them, untouched, where it is not.
template <class T>
std::vector<T> own_positions(std::vector<T> all, int64_t samples, int64_t positions, int64_t first, int64_t count) {
  if (count == positions) return all;
  std::vector<T> mine;
  mine.reserve(static_cast<size_t>(samples * count));
  for (int64_t n = 0; n < samples; ++n) {
    const auto begin = all.begin() + n * positions + first;
    mine.insert(mine.end(), begin, begin + count);
  }
  return mine;
}

}  // namespace splitbrain::exec::ops
