#include "exec/comm/redistribution_runner.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <stdexcept>

namespace splitbrain::exec::comm {
namespace {

void check_shape(const std::vector<int64_t>& actual, const plans::TensorLayout& layout, const plans::Mesh& mesh,
                 std::span<const int64_t> global_shape, const char* when) {
  const std::vector<int64_t> expected = plans::local_shape(layout, mesh, global_shape);
  if (actual != expected) {
    throw std::invalid_argument(fmt::format("run_redistribution: {} layout {}: local shape [{}], expected [{}]", when,
                                            plans::to_string(layout, mesh), fmt::join(actual, ", "),
                                            fmt::join(expected, ", ")));
  }
}

// A rank off coordinate 0 of a newly partial axis holds zeros, so the group's sum stays the
// value (all-bits-zero is 0 for floats and integers alike).
void zero_fill(LocalArray& array) { std::fill(array.values.begin(), array.values.end(), 0.0f); }
void zero_fill(LocalBytes& array) { std::fill(array.bytes.begin(), array.bytes.end(), std::byte{0}); }

// A local step: this rank's `after` block cut out of its `before` block, one copy.
template <typename Array>
Array reslice(const plans::RedistributionStep& step, const plans::Mesh& mesh, std::span<const int64_t> global_shape,
              int rank, const Array& local) {
  const plans::LocalReslice r = plans::local_reslice(step.before, step.after, mesh, global_shape, rank);
  Array out = sub_array(local, r.offset, r.shape);
  if (r.zero) zero_fill(out);
  return out;
}

// Shared by both overloads: `Array` is LocalArray or LocalBytes. The first step reads `input`
// where it lies: a tensor the step keeps (a stage's input saved for backward) is not copied first.
template <typename Array>
Array run_steps(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                std::span<const int64_t> global_shape, const Array& input, std::string_view label) {
  const plans::Mesh& mesh = communicator.mesh();
  Array result;
  const Array* local = &input;
  for (const plans::RedistributionStep& step : steps) {
    check_shape(local->shape, step.before, mesh, global_shape, "before");
    result = step.collective ? communicator.run(*step.collective, *local, label)
                             : reslice(step, mesh, global_shape, communicator.rank(), *local);
    local = &result;
  }
  if (steps.empty()) return input;
  check_shape(result.shape, steps.back().after, mesh, global_shape, "after");
  return result;
}

}  // namespace

LocalArray run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, const LocalArray& local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(communicator, steps, global_shape, local, label);
}

LocalBytes run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, const LocalBytes& local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(communicator, steps, global_shape, local, label);
}

}  // namespace splitbrain::exec::comm
