#pragma once
// Runs training steps of a plan on this rank: sets up the rank's share of the model (its layers'
// ops, parameter shards, optimizer, ZeRO slices, the communicators the plan needs) and hands the
// step to the interpreter of the rank's step program (step_interpreter.h), the program the
// simulator prices. Data moves through the backend's collective engine; MPI itself carries only
// host bookkeeping (the logged loss, accuracy counts, barriers, reports) and the pipeline
// hand-overs (stage_link.h). Time, bytes and memory are measured in the simulator's categories.

#include <cstdint>
#include <string>
#include <memory>
#include <optional>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/runtime/backend.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/layer_op.h"
#include "exec/runtime/layer_parameters.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/mixed_precision.h"
#include "exec/runtime/optimizer.h"
#include "exec/runtime/stage_link.h"
#include "exec/runtime/step_interpreter.h"
#include "exec/runtime/step_timing.h"
#include "exec/runtime/tracked_array.h"
#include "exec/runtime/zero_sharding.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"

namespace splitbrain::exec {

struct StepResult {
  double loss = 0.0;  // mean over the global batch, identical on every rank
  StepSeconds seconds;
  double started_at_seconds = 0.0;             // this rank's steady clock when its step began (StepRun's)
  std::vector<double> seconds_by_instruction;  // this rank's, indexed as Trainer::instruction_names()
  HostTransfers host_transfers;  // this rank's, during the step (its input batches; a GPU's labels and loss)
  std::optional<RecordedCalls> recorded_calls;  // this rank's, during the step (DeviceKernels::recorded_calls)
  // The instructions of this rank's program in which its host waited for the device (StepRun's).
  std::optional<std::vector<int>> host_wait_instructions;
};

class Trainer {
 public:
  // Throws InputError for a plan the executor cannot run yet, naming why. The backend's engine
  // works on the mesh's communicators (collectives->communicators()), which must outlive this.
  Trainer(const plans::Plan& plan, Backend backend, uint64_t seed);
  ~Trainer();

  StepResult step(BatchSource& data);
  // Forward passes only (dropout off) over `steps` batches of `data`; returns the fraction of
  // samples whose highest logit is their label, and (when asked) the mean loss per batch.
  // Collective: every rank calls it.
  double evaluate(BatchSource& data, int64_t steps, double* mean_loss = nullptr);

  int64_t steps_taken() const { return steps_; }
  MemoryTracker& memory() { return memory_; }
  comm::Communicator& communicator() { return communicator_; }
  const std::string& backend_name() const { return backend_.name; }
  bool backend_tf32() const { return backend_.tf32; }
  // This rank's parameter shards, per model layer (empty for layers without parameters).
  std::vector<LayerParameters>& parameters() { return parameters_; }
  Optimizer& optimizer() { return *optimizer_; }
  void set_steps_taken(int64_t steps) { steps_ = steps; }
  const plans::CompiledPlan& compiled() const { return compiled_; }
  // This rank's local block of every parameter tensor of `layer`, whole (ZeRO 3 keeps only a
  // slice between uses: it is gathered here, outside the plan's collectives and uncounted).
  // Collective over the layer's gradient-sync group under ZeRO 3: every member calls it.
  std::vector<std::vector<float>> local_parameter_values(int layer);
  // ZeRO's per-bucket slices this rank owns (parameters under stage 3), for checkpoints.
  std::vector<DeviceArray*> sharded_state();
  // Where this rank's arrays live; its host transfers are the run's.
  Device& device() { return *backend_.device; }
  // What this rank did during the last step, in order.
  const std::vector<TimelineEvent>& last_step_timeline() const { return timeline_; }
  // When the last step began on this rank (StepRun::started_at_seconds).
  double last_step_started_at_seconds() const { return step_started_at_seconds_; }
  bool last_step_host_ran_ahead() const { return step_host_ran_ahead_; }  // StepRun::host_runs_ahead
  // The instructions whose seconds each StepResult gives (InstructionNames), in that order.
  const std::vector<std::string>& instruction_names() const { return instruction_names_.names(); }
  // This rank's step program, as it runs.
  const plans::StepProgram& program() const;

 private:
  double global_loss(double local_weighted_sum) const;

  const plans::Plan& plan_;
  plans::CompiledPlan compiled_;
  Backend backend_;  // before what uses its engine; its ops' shared state must outlive the ops
  comm::MeshCommunicators& communicators_;
  comm::Communicator communicator_;
  MemoryTracker memory_;
  uint64_t seed_;
  MixedPrecision precision_;  // how the plan's element types run (mixed_precision.h)
  int64_t steps_ = 0;
  BatchSource* data_ = nullptr;                // during a step (the loss op reads its labels)
  std::vector<std::unique_ptr<LayerOp>> ops_;  // per layer
  std::vector<OpContext> contexts_;
  std::vector<LayerParameters> parameters_;
  std::unique_ptr<Optimizer> optimizer_;
  bool counts_loss_ = false;         // this rank's loss rows are not duplicates of another rank's
  int stage_ = 0;                    // this rank's pipeline stage
  std::unique_ptr<StageLink> link_;  // hand-overs to the other stages
  ZeroSlices zero_;
  std::unique_ptr<StepInterpreter> training_;    // the step program
  std::unique_ptr<StepInterpreter> evaluation_;  // the forward passes' program
  std::vector<TimelineEvent> timeline_;
  InstructionNames instruction_names_;
  double step_started_at_seconds_ = 0.0;
  bool step_host_ran_ahead_ = false;
};

}  // namespace splitbrain::exec
