#pragma once
// A long pipeline's step time from shorter timelines. Once its stages are in their steady state,
// every further micro-batch of a 1F1B pipeline (every further round of `stages` micro-batches of
// an interleaved one) adds the same seconds to the step: the warm-up and the cool-down, the
// gradient reductions and the update are the same for any number of micro-batches. So a pipeline
// of M micro-batches takes T(M) = T(n) + (M - n) x slope once n is in the steady state. Where
// the stages are alike the steady state starts right after the warm-up; where they are not (a
// last stage with a 50k-word head, a stage idling for its slower neighbour), the slope grows
// for a while longer: a 16-stage GPT's took about 2 x stages micro-batches to settle, 11% above
// the slope past the warm-up. So the slope is measured through the first two counts past the
// warm-up (1F1B: stages + 1 and stages + 2; interleaved: 2 and 3 rounds of `stages`), then
// again through each doubling of the count, until two slopes in a row agree (a test compares
// with the full timeline on every family and variant, and on stages that differ). GPipe,
// unpipelined steps, pipelines of at most 4 x (warm-up + 2) micro-batches and cluster files with
// measured kernels (their pricing depends on the neighbours' load, settled by iteration) get the
// full timeline.

#include <cstdint>
#include <optional>

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/simulation.h"

namespace splitbrain::sim {

// simulate(plan, compiled, cluster).iteration_seconds, up to rounding, from shorter timelines.
double steady_pipeline_iteration_seconds(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                         const Cluster& cluster);

// The whole prediction of the plan, grown from the simulation of its steady-state cut where
// steady_pipeline_iteration_seconds draws a line (else the full simulation): the step time as
// that function gives it, the phases, collectives and bytes each rank sends for every
// micro-batch, the peaks; the timeline's passes are the cut's. What the planner reports for a
// plan it keeps: a 1T GPT's full step programs on 64 stages of 3,072 micro-batches would need
// more memory than the machine has.
Prediction steady_pipeline_prediction(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                      const Cluster& cluster);

// The same when every rank of the plan holds at most `limit_bytes` (sim/memory_model.h's
// plan_fits_memory), else nullopt. The longer timeline's step programs are those the fit is walked
// on (memory_equivalent_micro_batches: the same count), so their peaks decide it and no program is
// compiled twice; stage 0 (under 1F1B the most micro-batches in flight) is walked alone first, so
// that most plans that do not fit cost one stage's walk.
std::optional<double> steady_pipeline_seconds_if_fits(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                                      const Cluster& cluster, int64_t limit_bytes);

}  // namespace splitbrain::sim
