#pragma once
// StepInterpreter: runs one rank's step program (plans/step_program.h) instruction by
// instruction. It decides nothing about order: which pass runs when, what is kept for the
// backward and when it goes, recompute, the pipeline hand-overs and their waits, the gradient
// buckets and ZeRO's gathers are all the program's (plans/step_compiler.h), the same program the
// simulator prices and walks for memory. Each instruction becomes a call: a layer's op, the
// collective engine, the pipeline link, the optimizer, or a copy between model tensors and flat
// buffers. Its time goes to the phase the prediction uses for it.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/comm/communicator.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/buffer_table.h"
#include "exec/runtime/device.h"
#include "exec/runtime/layer_op.h"
#include "exec/runtime/layer_parameters.h"
#include "exec/runtime/memory_tracker.h"
#include "exec/runtime/optimizer.h"
#include "exec/runtime/stage_link.h"
#include "exec/runtime/step_clock.h"
#include "exec/runtime/step_timing.h"
#include "exec/runtime/zero_sharding.h"
#include "plans/compiled_plan.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::exec {

// What the program's instructions act on: this rank's share of the model and its channels.
struct RankResources {
  const plans::Plan& plan;
  const plans::CompiledPlan& compiled;
  int rank = 0;
  std::vector<std::unique_ptr<LayerOp>>& ops;  // per layer (null off this stage)
  const std::vector<OpContext>& contexts;      // per layer
  std::vector<LayerParameters>& parameters;    // per layer
  ZeroSlices& zero;
  Optimizer& optimizer;
  Device& device;
  MemoryTracker& memory;
  comm::Communicator& communicator;
  comm::CollectiveEngine& engine;
  StageLink& link;
  MixedPrecision precision{};  // how the plan's element types run (mixed_precision.h)
};

struct StepRun {
  StepSeconds seconds;
  double loss_sum = 0.0;  // this rank's share of the step's mean loss (its loss ops')
  std::vector<TimelineEvent> timeline;
  // When the step began on this rank: the host's steady clock (CLOCK_MONOTONIC on Linux, one per
  // kernel), in seconds since its epoch. The timeline's starts count from here.
  double started_at_seconds = 0.0;
  bool host_runs_ahead = false;  // of the device (StepClock::host_runs_ahead): the trace shows the host's queuing
  // The program's instructions in which the host waited for the device (DeviceClock::host_waits); none
  // where the device does not queue.
  std::optional<std::vector<int>> host_wait_instructions;
};

class StepInterpreter {
 public:
  StepInterpreter(plans::StepProgram program, RankResources resources);
  // Runs the program once on training step `step`'s batch of `data`. `on_logits`, when set, sees
  // each micro-batch's logits as its loss reads them (evaluation counts predictions from them;
  // they are downloaded for it, a host transfer the training step does not make).
  using LogitsObserver = std::function<void(int micro, const comm::LocalArray& logits)>;
  StepRun run(int64_t step, BatchSource& data, const LogitsObserver& on_logits = {});
  const plans::StepProgram& program() const { return program_; }

 private:
  enum class Phase { none, forward, backward, communication, stage_waiting, gradient_sync, optimizer };
  Phase phase_of(const plans::StepInstruction& instruction) const;
  void execute(int index);
  void load_input(const plans::StepInstruction& instruction);
  void forward(const plans::StepInstruction& instruction);
  void backward(const plans::StepInstruction& instruction);
  void redistribute(const plans::StepInstruction& instruction);
  void gather_layer_parameters(const plans::StepInstruction& instruction);
  void send(int index, const plans::StepInstruction& instruction);
  void receive(const plans::StepInstruction& instruction);
  void wait(const plans::StepInstruction& instruction);
  void pack(const plans::StepInstruction& instruction);
  void unpack(const plans::StepInstruction& instruction);
  void reduce(int index, const plans::StepInstruction& instruction);
  void update(const plans::StepInstruction& instruction);
  void gather_bucket(const plans::StepInstruction& instruction);
  void release_kept(int layer, int micro);
  void count_kept_change(int layer, int64_t kept_before);
  // What `layer`'s op keeps now, in bytes at the plan's element sizes (LayerOp::kept_bytes).
  int64_t kept_bytes(int layer) const;
  std::string label_of(const plans::StepInstruction& instruction) const;

  plans::StepProgram program_;
  RankResources r_;
  BufferTable buffers_;
  std::unique_ptr<StepClock> clock_;  // the device's (DeviceClock::make_step_clock)
  // During a run:
  int64_t step_ = 0;
  BatchSource* data_ = nullptr;
  const LogitsObserver* on_logits_ = nullptr;
  // The loss ops' downloads (LayerOp::download_loss) in the order the program queued them, read
  // once the step's work is done, so the host never waits for a loss in the middle of a step.
  std::vector<std::function<double()>> queued_losses_;
  // The input samples this step copied out of the data source (a slice of its block, or what it
  // does not hold), kept until the step's queued uploads from them are done (Device::upload_queued).
  std::vector<std::vector<float>> copied_inputs_;
  std::map<int, int> send_ids_;                                                 // send instruction -> its StageLink id
  std::map<int, std::unique_ptr<comm::PendingCollective>> pending_reductions_;  // by reduce instruction
};

}  // namespace splitbrain::exec
