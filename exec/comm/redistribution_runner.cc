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

LocalBytes reslice(const plans::RedistributionStep& step, const plans::Mesh& mesh,
                   std::span<const int64_t> global_shape, int rank, const LocalBytes& local) {
  const plans::LocalReslice r = plans::local_reslice(step.before, step.after, mesh, global_shape, rank);
  LocalBytes out = sub_array(local, r.offset, r.shape);
  // A rank off coordinate 0 of a newly partial axis holds zeros, so the group's sum stays the
  // value (all-bits-zero is 0 for floats and integers alike).
  if (r.zero) std::fill(out.bytes.begin(), out.bytes.end(), std::byte{0});
  return out;
}

// Shared by both overloads: `Array` is LocalArray or LocalBytes; `step_local` runs a local step.
template <typename Array, typename StepLocal>
Array run_steps(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                std::span<const int64_t> global_shape, Array local, std::string_view label, StepLocal step_local) {
  const plans::Mesh& mesh = communicator.mesh();
  for (const plans::RedistributionStep& step : steps) {
    check_shape(local.shape, step.before, mesh, global_shape, "before");
    if (step.collective) {
      local = communicator.run(*step.collective, local, label);
    } else {
      local = step_local(step, local);
    }
  }
  if (!steps.empty()) check_shape(local.shape, steps.back().after, mesh, global_shape, "after");
  return local;
}

}  // namespace

LocalArray run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, LocalArray local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(
      communicator, steps, global_shape, std::move(local), label,
      [&](const plans::RedistributionStep& step, const LocalArray& array) {
        return to_floats(reslice(step, communicator.mesh(), global_shape, communicator.rank(), to_bytes(array)));
      });
}

LocalBytes run_redistribution(Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                              std::span<const int64_t> global_shape, LocalBytes local, std::string_view label) {
  check_size(local, "run_redistribution");
  return run_steps(communicator, steps, global_shape, std::move(local), label,
                   [&](const plans::RedistributionStep& step, const LocalBytes& array) {
                     return reslice(step, communicator.mesh(), global_shape, communicator.rank(), array);
                   });
}

}  // namespace splitbrain::exec::comm
