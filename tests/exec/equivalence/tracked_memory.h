#pragma once
// The check every executor suite makes of a run's memory: the tracked peaks, category by category
// and at the worst moment, are exactly the walk of the rank's step program (plans/memory_walk.h).

#include <gtest/gtest.h>

#include <string>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/step_compiler.h"
#include "tests/exec/equivalence/plan_run.h"

namespace splitbrain::equivalence {

// Expects `run`'s tracked peaks on `rank` to equal its plan's walk (failures name `name`); returns
// the walk for the checks a suite adds.
inline plans::MemoryPeaks expect_tracked_memory_is_the_walk(const PlanOutcome& run, int rank, const std::string& name) {
  const plans::MemoryPeaks walk =
      plans::walk_memory(plans::compile_step(run.plan, plans::compile_plan(run.plan), rank));
  EXPECT_EQ(run.params_bytes, walk.of(plans::MemoryCategory::params)) << name;
  EXPECT_EQ(run.grads_bytes, walk.of(plans::MemoryCategory::grads)) << name;
  EXPECT_EQ(run.optimizer_bytes, walk.of(plans::MemoryCategory::optimizer)) << name;
  EXPECT_EQ(run.activations_bytes, walk.of(plans::MemoryCategory::activations)) << name;
  EXPECT_EQ(run.buffers_bytes, walk.of(plans::MemoryCategory::buffers)) << name;
  EXPECT_EQ(run.peak_bytes, walk.total) << name;
  return walk;
}

}  // namespace splitbrain::equivalence
