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

// Shared by both overloads: `Array` is LocalArray or LocalBytes.
template <typename Array>
Array run_steps(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                std::span<const int64_t> global_shape, Array local, std::string_view label) {
  const plans::Mesh& mesh = communicator.mesh();
  for (const plans::RedistributionStep& step : steps) {
    check_shape(local.shape, step.before, mesh, global_shape, "before");
    if (step.collective) {
      local = communicator.run(*step.collective, local, label);
    } else {
      local = reslice(step, mesh, global_shape, communicator.rank(), local);
    }
  }
  if (!steps.empty()) check_shape(local.shape, steps.back().after, mesh, global_shape, "after");
  return local;
}

}  // namespace

LocalArray run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, LocalArray local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(communicator, steps, global_shape, std::move(local), label);
}

LocalBytes run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, LocalBytes local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(communicator, steps, global_shape, std::move(local), label);
}

}  // namespace splitbrain::exec::comm
