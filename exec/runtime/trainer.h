#pragma once
// Runs training steps of a plan on this rank: the backend-neutral runtime. For every layer of
// the rank's stage it moves the inputs into the layouts the plan chose (plans::
// plan_redistribution, the same steps the simulator costs), calls the backend's op, runs the
// backward pass the same way in reverse, synchronises the gradient buckets of the compiled plan,
// and updates the parameters. Data moves through the backend's collective engine; MPI itself
// carries only host bookkeeping (the logged loss, accuracy counts, barriers, reports) and the
// pipeline hand-overs (stage_link.h). Time, bytes and memory are measured in the simulator's
// categories.

#include <chrono>
#include <cstdint>
#include <string>
#include <memory>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/runtime/backend.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/layer_op.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/optimizer.h"
#include "exec/runtime/stage_link.h"
#include "exec/runtime/tracked_array.h"
#include "plans/compiled_plan.h"
#include "plans/pipeline_order.h"
#include "plans/plan.h"

namespace splitbrain::exec {

// Seconds of one step on this rank, by phase (the prediction's vocabulary).
struct StepSeconds {
  double total = 0.0;
  double compute_forward = 0.0;
  double compute_backward = 0.0;
  double communication = 0.0;   // redistribution and collectives inside layers (blocking)
  double gradient_sync = 0.0;   // gradient buckets (after backward: not overlapped)
  double optimizer = 0.0;
};

struct StepResult {
  double loss = 0.0;  // mean over the global batch, identical on every rank
  StepSeconds seconds;
};

// One interval of the last step on this rank, for the measured Chrome trace.
struct TimelineEvent {
  std::string name;
  bool communication = false;  // else compute
  double start_seconds = 0.0;  // since the step began
  double seconds = 0.0;
};

struct LayerParameters {
  std::vector<TrackedArray> values;
  std::vector<TrackedArray> grads;
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
  std::vector<std::vector<float>*> sharded_state();
  // What this rank did during the last step, in order.
  const std::vector<TimelineEvent>& last_step_timeline() const { return timeline_; }

 private:
  struct MicroBatchState;
  void forward(int micro, MicroBatchState& state, StepSeconds& seconds);
  void backward(int micro, MicroBatchState& state, StepSeconds& seconds);
  // Activation recompute (activation_recompute.cc): after a micro-batch's forward only the
  // stage's inputs stay (what sim::stage_memory counts); its forward runs again, without
  // reading or receiving anything, right before its backward.
  void drop_recomputable(int micro, MicroBatchState& state);
  void recompute_forward(int micro, MicroBatchState& state, StepSeconds& seconds);
  // activation_release.cc: after layer v's forward, let go of what no backward reads; and count
  // what an op keeps itself (LayerOp::kept_bytes) as activations, given its figure before.
  void release_after_forward(int v, MicroBatchState& state);
  void count_kept_by_op(int v, int64_t kept_before);
  void synchronise_gradients(StepSeconds& seconds);
  // Overlap (plan.overlap_gradient_sync): a bucket's all-reduce (ZeRO: reduce-scatter) starts
  // as soon as backward has produced its last gradient, and the engine is nudged between layers
  // so it progresses meanwhile.
  void start_bucket(size_t bucket);
  void progress_buckets();
  std::vector<float> pack_bucket(const plans::GradientBucket& bucket);
  void unpack_bucket(const plans::GradientBucket& bucket, const std::vector<float>& flat);
  double global_loss(double local_weighted_sum) const;
  TrackedArray read_input(int layer, int micro);

  const plans::Plan& plan_;
  plans::CompiledPlan compiled_;
  Backend backend_;  // before what uses its engine; its ops' shared state must outlive the ops
  comm::MeshCommunicators& communicators_;
  comm::Communicator communicator_;
  MemoryTracker memory_;
  uint64_t seed_;
  int64_t steps_ = 0;
  BatchSource* data_ = nullptr;  // during a step
  std::vector<std::unique_ptr<LayerOp>> ops_;  // per layer
  std::vector<OpContext> contexts_;
  std::vector<LayerParameters> parameters_;
  std::unique_ptr<Optimizer> optimizer_;
  bool counts_loss_ = false;  // this rank's loss rows are not duplicates of another rank's
  struct PendingBucket {
    size_t bucket = 0;
    std::vector<float> flat;
    std::unique_ptr<comm::PendingCollective> reduction;  // started on `flat` (and `slice`)
    std::vector<float> slice;  // ZeRO: where the reduce-scatter puts this rank's part
  };
  int stage_ = 0;                      // this rank's pipeline stage
  std::unique_ptr<StageLink> link_;    // hand-overs to the other stages
  bool on_my_stage(int layer) const { return compiled_.layers[static_cast<size_t>(layer)].stage == stage_; }
  void send_forward(int producer, int micro, const TrackedArray& output);
  void record(std::string name, bool communication, std::chrono::steady_clock::time_point start);
  std::vector<TimelineEvent> timeline_;

  // ZeRO (zero_sharding.cc). A layer is sharded when its gradients sync over a group of more
  // than one rank (it sits in a gradient bucket); the others keep whole model states.
  struct ZeroState;
  std::unique_ptr<ZeroState> zero_;
  bool zero_shards(int layer) const;
  // After the parameters exist: the buckets' slices (optimizer state, stage 2-3 gradients, stage
  // 3 parameters, which then leave the whole tensors unallocated between uses).
  void setup_zero();
  // Stage 3: gathers `layer`'s parameters before its forward or backward (the plan's
  // parameter_gathers) and frees them afterwards. No-ops for unsharded layers and other stages.
  void gather_parameters(int layer, StepSeconds& seconds);
  void release_gathered_parameters(int layer);
  // Stages 2-3: the whole gradients of a sharded layer live only from its backward until its
  // bucket is reduce-scattered (a communication buffer, not the kept gradient).
  void ensure_gradient_accumulators(int layer);
  // A bucket's gradients packed for its reduce-scatter (stage 3: member by member); stages 2-3
  // free the whole gradients they came from.
  std::vector<float> pack_for_reduce_scatter(size_t zero_bucket);
  // Overlap: the reduce-scatter of compiled bucket `bucket` starts (the engine's
  // start_reduce_scatter).
  void start_sharded_bucket(size_t bucket);
  // The step's end under ZeRO: reduce-scatter every bucket, update this rank's slices, gather
  // the updated parameters back (stages 1-2).
  void update_sharded(StepSeconds& seconds);
  std::chrono::steady_clock::time_point step_start_;
  bool overlap_ = false;
  std::vector<std::vector<size_t>> buckets_ready_after_;  // per layer: buckets started after its last backward
  std::vector<std::pair<plans::PassKind, int>> passes_;   // this stage's passes, from the step program
  std::vector<PendingBucket> pending_;
};

}  // namespace splitbrain::exec
