#pragma once
// How much longer a GPU step's host took to queue each layer pass than the simulator priced it:
// the fit behind sim::Device::instruction_host_seconds (pass_overhead_calibration.h).

#include <vector>

#include "exec/runtime/step_timing.h"
#include "model/model.h"
#include "sim/simulation.h"

namespace splitbrain::tools {

// For each forward and backward of one step's measured timeline (the step clock's host marks,
// exec::TimelineEvent::host_end_seconds, named as the step interpreter names them: "forward
// conv1 mb0"), the host's seconds to queue it (from the mark before) minus the span of its
// queuing in `prediction` (sim::LayerSpan), in the order the step ran them. Events that are no
// layer's pass, recomputed forwards and passes the prediction does not have are left out.
std::vector<double> pass_host_excess_seconds(const std::vector<exec::TimelineEvent>& step,
                                             const sim::Prediction& prediction, const model::Model& model);

}  // namespace splitbrain::tools
