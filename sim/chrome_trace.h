#pragma once
// The predicted timeline as a Chrome trace (the JSON "Trace Event Format"; open it in Perfetto
// or chrome://tracing): one process per rank, a compute row and a communication row each.

#include <nlohmann/json.hpp>

#include "plans/plan.h"
#include "sim/simulation.h"

namespace splitbrain::sim {

// Ranks of one stage share a timeline; only the first `max_ranks` ranks get a track, so the
// trace of a 1024-rank plan stays small enough to open. Each layer's op is drawn where the
// timeline ran it (ScheduledPass::layers), not at its price.
nlohmann::json prediction_trace(const plans::Plan& plan, const Prediction& prediction, int max_ranks = 64);

}  // namespace splitbrain::sim
