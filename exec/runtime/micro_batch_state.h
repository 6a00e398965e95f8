#pragma once
// What one micro-batch keeps between its forward and backward passes on this rank, per layer
// (the Trainer's own bookkeeping; every file of the Trainer sees it).

#include <map>
#include <utility>
#include <vector>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

struct Trainer::MicroBatchState {
  std::vector<TrackedArray> outputs;
  std::vector<std::vector<TrackedArray>> inputs;  // redistributed, per input position
  std::vector<TrackedArray> output_grads;
  // Recompute: what arrived from earlier stages, by (consumer, input position), kept as received
  // so the forward can run again without the pipeline.
  std::map<std::pair<int, int>, TrackedArray> received;
  bool recomputing = false;  // the forward runs again before the backward
  // Evaluation reads the logits after the forward: nothing is released (activation_release.cc).
  bool keeps_everything = false;
};

}  // namespace splitbrain::exec
