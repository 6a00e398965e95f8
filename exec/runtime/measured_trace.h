#pragma once
// The measured timeline of the last training step as a Chrome trace (open it in Perfetto): one
// process per rank with a compute row and a communication row, like the simulator's predicted
// trace, so the two can be looked at side by side. Ranks on one machine share its time axis
// (shared_time_axis.h): a rank that started its step late, waiting for a core, starts late there.

#include <nlohmann/json.hpp>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

// Collective over all ranks; the document is complete on rank 0 only.
nlohmann::json gather_measured_trace(Trainer& trainer);

}  // namespace splitbrain::exec
