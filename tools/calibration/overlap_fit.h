#pragma once
// The one number of the cost model for a gradient reduction beside the compute
// (sim::Cluster::communication_overlap), read off a measured step: the overlap at which the
// simulator charges the step's reductions what they cost the measured step.

#include <functional>
#include <optional>

namespace splitbrain::tools {

// `priced_cost_seconds(overlap)`: what the simulator charges a step's host for its gradient
// reductions at that overlap; it must not increase with the overlap (more hidden, less charged).
// Returns the overlap in [-1, 1] at which it equals `measured_cost_seconds` (within 1e-6 of the
// overlap); -1 where even that prices less than measured (a reduction beside the backward that
// slows it more than the cost model's bound: the closest reading). Where even full overlap prices
// more: 1 while the measured cost lies within `spread_seconds` (how much the measurement itself
// varies) of that price, nullopt below: the step ran faster than any overlap prices it, so another
// price is too high (the link's, on which the reductions still running at the step's end wait),
// and the overlap must not absorb it.
std::optional<double> overlap_matching_cost(const std::function<double(double)>& priced_cost_seconds,
                                            double measured_cost_seconds, double spread_seconds);

}  // namespace splitbrain::tools
