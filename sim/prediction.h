#pragma once
// What the simulator predicts for one training step of a plan (simulation.h's simulate() makes
// it): the iteration time and its phases, each rank's memory and bytes sent, every collective
// with its cost, and the timeline of the stages' passes. Apart from simulate() so that what reads
// or builds a prediction's parts does not depend on the simulation itself.

#include <cstdint>
#include <string_view>
#include <vector>

#include "plans/collective.h"
#include "plans/plan.h"
#include "sim/compute_cost.h"
#include "sim/memory_model.h"
#include "sim/program_timeline.h"

namespace splitbrain::sim {

// Where a step's time goes on its slowest stage; they add up to the iteration time.
struct PhaseSeconds {
  double compute_forward = 0.0;
  double compute_backward = 0.0;
  double comm_exposed = 0.0;  // communication nothing else hides: activations, exposed gradient sync
  double bubble = 0.0;        // waiting for other pipeline stages
  double optimizer = 0.0;
};

enum class StepPhase { forward, backward, gradient_sync, parameter_gather };
std::string_view step_phase_name(StepPhase phase);

// One collective of the step: how often it runs per step and what one run costs.
struct CollectiveUse {
  int layer = -1;  // the layer it belongs to; -1 for gradient buckets
  int stage = 0;
  StepPhase phase = StepPhase::forward;
  plans::Collective collective;
  int count = 1;         // runs per step (micro-batches for activations, 1 for gradient buckets)
  double seconds = 0.0;  // one run, for the group of the stage's first rank
  int level = -1;        // the outermost cluster level that group crosses; -1: none (one rank)
};

struct LayerTiming {  // per micro-batch
  LayerComputeSeconds compute;
  double forward_comm_seconds = 0.0;
  double backward_comm_seconds = 0.0;
  // Activation recompute: the forward computed again inside the backward pass (its collectives
  // are in backward_comm_seconds).
  double recompute_seconds = 0.0;
};

// What one stage spends on one micro-batch, layer costs summed (reported; the timeline prices
// the program instruction by instruction).
struct StageWork {
  double forward_seconds = 0.0;
  double backward_seconds = 0.0;
  double send_forward_seconds = 0.0;   // activations to the next stage
  double send_backward_seconds = 0.0;  // gradients to the previous stage
};

struct StageTiming {
  StageWork work;                     // per micro-batch
  double backward_end_seconds = 0.0;  // last backward pass done
  double sync_end_seconds = 0.0;      // last gradient reduction done
  double optimizer_seconds = 0.0;
  double end_seconds = 0.0;
  // Where the device runs behind a queue (a GPU): the instructions of the stage's program in which
  // the host waits for the device (InstructionCost::host_waits), in order; what the executor's
  // run report measures as host_waits_per_step.
  std::vector<int> host_wait_instructions;
};

struct RankPrediction {
  int rank = 0;
  int stage = 0;
  MemoryBreakdown memory;
  int64_t comm_bytes_sent = 0;  // per step, every collective it takes part in
  // comm_bytes_sent split by the cluster level each message crosses (one entry per level,
  // innermost first; see plan_collective_cost.h's add_bytes_per_level).
  std::vector<int64_t> comm_bytes_sent_per_level;
};

struct Prediction {
  double iteration_seconds = 0.0;
  double samples_per_second = 0.0;
  PhaseSeconds phases;
  int critical_stage = 0;  // the stage that finishes last
  std::vector<RankPrediction> ranks;
  std::vector<CollectiveUse> collectives;
  std::vector<LayerTiming> layers;
  std::vector<StageTiming> stages;
  std::vector<ScheduledPass> passes;  // stage by stage, in the order each runs them
  std::vector<SyncInterval> gradient_sync;
  std::vector<InstructionSpan> other_instructions;  // the rest of what the stages' hosts spent time on
};

// The rank that stands for stage `stage` (its program is the one the timeline runs): coordinate
// `stage` on the pipeline axis, 0 elsewhere.
int first_rank_of_stage(const plans::Plan& plan, int stage);

// Sum over the step's collectives of seconds x count: all communication, hidden or not.
double total_communication_seconds(const Prediction& prediction);
int64_t peak_memory_bytes(const Prediction& prediction);  // max over ranks

}  // namespace splitbrain::sim
