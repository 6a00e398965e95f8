#pragma once
// The measured timeline of the last training step as a Chrome trace (open it in Perfetto): one
// process per rank with a compute row and a communication row, like the simulator's predicted
// trace, so the two can be looked at side by side. Ranks on one machine share its time axis
// (shared_time_axis.h): a rank that started its step late, waiting for a core, starts late there.

#include <nlohmann/json.hpp>

#include "exec/runtime/run_report.h"
#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

// Beside the events, `instruction_seconds_median` (one object per rank: each instruction's median
// seconds over the record's measured steps, exec::median_seconds_by_instruction) and
// `instruction_seconds_steps` (how many steps): one step's timeline on a shared host can hold a
// pause that the medians leave out, so `compare` reads its instruction table from them.
// Collective over all ranks; the document is complete on rank 0 only.
nlohmann::json gather_measured_trace(Trainer& trainer, const RunRecord& record);

}  // namespace splitbrain::exec
