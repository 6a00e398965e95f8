#pragma once
// A long pipeline's step time from two short timelines. Once its stages are in their steady
// state, every further micro-batch of a 1F1B pipeline (every further round of `stages`
// micro-batches of an interleaved one) adds the same seconds to the step: the warm-up and the
// cool-down, the gradient reductions and the update are the same for any number of micro-batches.
// So a pipeline of M micro-batches takes
//
//   T(M) = T(long) + (M - long) / (long - short) x (T(long) - T(short))
//
// with `long` and `short` the two shortest counts past the warm-up (1F1B: stages + 2 and
// stages + 1; interleaved: 3 and 2 rounds of `stages`). The planner ranks its 1T GPT's pipelines of
// 192 micro-batches from timelines of 66 and 65 (a test compares with the full timeline on every
// family and variant). GPipe, unpipelined steps, short pipelines and cluster files with measured
// kernels (their pricing depends on the neighbours' load, settled by iteration) get the full
// timeline.

#include <cstdint>
#include <optional>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

// simulate(plan, compiled, cluster).iteration_seconds, up to rounding, from at most two shorter
// timelines.
double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster);

// The same when every rank of the plan holds at most `limit_bytes` (sim/memory_model.h's
// plan_fits_memory), else nullopt. The longer timeline's step programs are those the fit is walked
// on (memory_equivalent_micro_batches: the same count), so their peaks decide it and no program is
// compiled twice; stage 0 (under 1F1B the most micro-batches in flight) is walked alone first, so
// that most plans that do not fit cost one stage's walk.
std::optional<double> steady_pipeline_seconds_if_fits(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                                      const Cluster& cluster, int64_t limit_bytes);

}  // namespace splitbrain::sim
