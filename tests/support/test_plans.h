#pragma once
// The plans the test suites and benchmarks build by hand, written once: the data-parallel rule
// (every layer's batch on the mesh's first axis) and the data-parallel plan most suites start
// from. Other plans come from plans::build_plan with a rule of the test's own.

#include <cstdint>
#include <string>

#include "plans/plan_builder.h"

namespace splitbrain::testing_support {

inline plans::LayerSharding batch_on_first_axis(const model::Layer&) { return plans::LayerSharding{{0}, {}, {}, {}}; }

// `zoo_spec` (or a model file) on `ranks` ranks of a "data" axis, `batch` samples a step.
inline plans::Plan data_parallel_plan(const std::string& zoo_spec, int ranks, int64_t batch) {
  return plans::build_plan(zoo_spec, plans::Mesh({{"data", ranks}}), batch, batch_on_first_axis);
}

}  // namespace splitbrain::testing_support
