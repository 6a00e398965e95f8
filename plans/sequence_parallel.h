#pragma once
// Megatron-LM's sequence parallelism (Korthikanti et al. 2022, Section 4.2.2) as a change of a
// plan: the layers that tensor parallelism leaves whole on every rank of its group (layer norms,
// dropouts, residual adds) split the sequence over the same mesh axes instead, and the saved
// inputs that all-gathers make whole stay split until the backward gathers them again
// (Plan::regather_saved_inputs). The layout algebra then turns each all-reduce of a row-parallel
// output into a reduce-scatter and puts an all-gather before each column-parallel linear, as
// Megatron does; nothing else is special-cased.

#include <optional>

#include "plans/plan.h"

namespace splitbrain::plans {

// The plan with sequence parallelism, named "<family> +sp"; nullopt when the plan has no tensor
// parallelism (no linear layer splits its features) or a layer to change cannot split its
// sequence over those axes (it does not divide).
std::optional<Plan> with_sequence_parallelism(const Plan& plan);

}  // namespace splitbrain::plans
