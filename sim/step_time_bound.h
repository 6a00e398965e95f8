#pragma once
// A lower bound on simulate()'s iteration time, from the passes' work alone, without compiling a
// step program: what lets the planner skip timing a plan that cannot beat one it already has.
//
// It counts only what the timeline (program_timeline.h) must spend on a stage's host: every
// forward, recompute and backward instruction of the stage's program costs its layer's compute
// and the collectives inside the op (simulation.cc's pricing), and runs after the stage has
// received its first micro-batch. Stage s of a pipeline (1F1B or GPipe: both start with the
// forward of micro-batch 0 and end with the backward of the last) then needs at least
//
//   start(s) + M x (forward + recompute + backward of s) + tail(s)
//
// where start(s) is the forward of micro-batch 0 on the stages that feed it (up to the layer that
// sends it), and tail(s) the backward of the last micro-batch on those stages after its gradient
// arrives (from the layer that receives it down). The chain follows the message of the first
// input of each stage's first layer; where the step compiler's order does not give such a chain
// (an input layer first on a stage, a message that skips a stage's send) that stage's term is
// left out, so the bound only gets weaker, never wrong. Hand-overs, redistributions, gradient
// reductions and the update are left out too.
//
// Cluster files with measured kernels (calibrate) are priced by how busy the node's neighbours
// are, which the simulator settles by iteration: for them the bound is 0.

#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

double iteration_seconds_lower_bound(const plans::Plan& plan, const plans::CompiledPlan& compiled,
                                     const Cluster& cluster);

}  // namespace splitbrain::sim
