#pragma once
// The one number of the cost model for a gradient reduction beside the compute
// (sim::Cluster::communication_overlap), read off a measured step: the overlap at which the
// simulator charges the step's reductions what they cost the measured step.

#include <functional>

namespace splitbrain::tools {

// `priced_cost_seconds(overlap)`: what the simulator charges a step's host for its gradient
// reductions at that overlap; it must not increase with the overlap (more hidden, less charged).
// Returns the overlap in [-1, 1] at which it equals `measured_cost_seconds`: -1 where even that
// prices less than measured, 1 where even full overlap prices more (within 1e-6 of the overlap).
double overlap_matching_cost(const std::function<double(double)>& priced_cost_seconds, double measured_cost_seconds);

}  // namespace splitbrain::tools
