#pragma once
// The equivalence programs' shared run: every plan for the world size trained once
// (equivalence_test.cc), read by the test files of each concern.

#include <string>
#include <vector>

#include "tests/exec/equivalence/plan_run.h"
#include "tests/exec/equivalence/reference_file.h"

namespace splitbrain::equivalence {

struct Suite {
  Reference reference;
  std::vector<PlanOutcome> outcomes;
};

// How the tests name a plan in their messages: family and mesh.
inline std::string plan_name(const plans::Plan& plan) { return plan.family + " " + plan.mesh.to_string(); }

// Computed on first use (collective: every rank's first test calls it).
const Suite& suite();

// The run of the same plan without ZeRO and recompute, when `o` is such a variant.
const PlanOutcome* base_of(const PlanOutcome& o, const std::vector<PlanOutcome>& all);

}  // namespace splitbrain::equivalence
