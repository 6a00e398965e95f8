#pragma once
// One training step of a plan on a cluster, predicted: compute per layer (roofline), the exact
// communication of the compiled plan costed by the alpha-beta model, and the timeline of the
// ranks' step programs priced with them (program_timeline.h: the pipeline schedule, gradient
// buckets overlapped with the backward, the optimizer step), with the memory of each program's
// walk and the bytes every rank sends.

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/prediction.h"

namespace splitbrain::sim {

// Throws PlanError/ClusterError when the plan does not fit the cluster (too few devices).
Prediction simulate(const plans::Plan& plan, const plans::CompiledPlan& compiled, const Cluster& cluster);
Prediction simulate(const plans::Plan& plan, const Cluster& cluster);

}  // namespace splitbrain::sim
