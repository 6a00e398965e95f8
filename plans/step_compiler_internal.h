#pragma once
// The step compiler's working state (step_compiler.h is its interface): a rank's step program is
// built pass by pass (step_compiler.cc: forward, backward, recompute, ZeRO gathers) and message
// by message between pipeline stages (step_compiler_messages.cc).

#include <deque>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "plans/compiled_plan.h"
#include "plans/memory_walk.h"
#include "plans/pipeline_order.h"
#include "plans/plan.h"
#include "plans/program_writer.h"
#include "plans/recompute_scope.h"
#include "plans/redistribution.h"
#include "plans/step_facts.h"
#include "plans/step_gradient_sync.h"
#include "plans/step_program.h"

namespace splitbrain::plans::detail {

// One micro-batch's tensors in one model chunk between its forward and its backward, as buffer
// numbers (-1: none). A chunk reads only its own tensors and what arrives from the chunk before
// (plans::chunk_hand_over_problem), so each (chunk, micro-batch) pass pair has its own.
struct MicroBatchBuffers {
  std::vector<int> outputs;            // per layer
  std::vector<SmallIndexList> inputs;  // per layer, per input position (as read)
  std::vector<int> output_grads;       // per layer
  std::vector<int> kept_by_op;         // per layer: masks, indices, probabilities
  // Per layer, per input position: the source kept instead of the saved input its all-gather
  // made, to gather again before the backward (Plan::regather_saved_inputs); -1 when none.
  std::vector<SmallIndexList> gather_sources;
  // Producers on other stages: what arrived from them (shared by their readers here; kept to
  // the backward under recompute), and the sum of their readers' gradients not yet sent back.
  std::map<int, int> received;
  std::map<int, int> gradients_to_send;
  // Receives posted before the pass ran (StepCompiler::post_receives_ahead), not yet taken: by
  // producer, an input; by (consumer, input position), a gradient.
  std::map<int, int> posted_inputs;
  std::map<std::pair<int, int>, int> posted_gradients;
};

class StepCompiler {
 public:
  StepCompiler(const Plan& plan, const CompiledPlan& compiled, int rank, bool keep_instructions)
      : plan_(plan),
        compiled_(compiled),
        net_(*plan.model),
        writer_(plan, rank, keep_instructions),
        facts_(plan, compiled, rank),
        sync_(plan, compiled, facts_, writer_),
        recomputed_(recomputed_layers(plan)),
        block_in_chunk_(block_number_in_chunk(plan)),
        checkpointed_(checkpointed_outputs()) {}

  // The program; writer().peaks() is its memory walk.
  StepProgram compile();

  // Forward passes only, micro-batch by micro-batch (evaluation): each keeps everything until
  // its last layer has run, then lets go of it all.
  StepProgram compile_evaluation();
  const MemoryPeaks& peaks() const { return writer_.peaks(); }
  // compile() throws MemoryLimitReached at the first byte over `limit_bytes`.
  void stop_above(int64_t limit_bytes) { writer_.stop_above(limit_bytes); }

 private:
  void reset(MicroBatchBuffers& state) const;

  // A pass as the segments it runs, in program order: the one place that orders forward,
  // recompute and backward within a pass (compile() runs them; plan_gathers() reads them to know
  // which parameter gather comes next).
  enum class SegmentRun { forward, recompute, backward, drop_recomputable, release_all };
  struct Segment {
    SegmentRun run = SegmentRun::forward;
    std::vector<int> layers;  // in model order (a backward runs them last first)
  };
  std::vector<Segment> segments_of(const PipelinePass& pass) const;

  // After a micro-batch's backward of `layers` (a chunk, or the whole stage in evaluation).
  void release_all(const std::vector<int>& layers, MicroBatchBuffers& state);

  // A micro-batch's buffer of layer `layer` (`index`: its input position or parameter number, -1
  // for none): an activation, or a working buffer of the backward (the buffers category).
  int activation(int64_t bytes, BufferRole role, int layer, int index, int micro) {
    return buffer(MemoryCategory::activations, bytes, role, layer, index, micro);
  }
  int working_buffer(int64_t bytes, BufferRole role, int layer, int index, int micro) {
    return buffer(MemoryCategory::buffers, bytes, role, layer, index, micro);
  }
  int buffer(MemoryCategory category, int64_t bytes, BufferRole role, int layer, int index, int micro) {
    return writer_.make(
        {.bytes = bytes, .category = category, .role = role, .layer = layer, .index = index, .micro_batch = micro});
  }

  // Appends the instruction `make` builds, unless only the memory is wanted (the simulator's
  // step_memory): building it is most of the cost, and the walk needs only allocs and frees.
  template <class Make>
  void emit_kept(const Make& make) {
    if (writer_.keeps_instructions()) writer_.emit(make());
  }

  // The forward of `layers` (a model chunk of the stage, in model order) on micro-batch `micro`.
  void forward(const std::vector<int>& layers, int micro, MicroBatchBuffers& state, bool recomputing);

  // Input p of layer v, from a producer on an earlier stage: received before the pass (its
  // buffer in `state.posted_inputs`), taken by its first reader here (InputTransfer::
  // from_other_stage), which keeps it for the later ones (and, under recompute, for the
  // backward's forward again).
  int received_input(int v, size_t p, MicroBatchBuffers& state);

  // The pipeline message of input `index` of `consumer` (forward or back), into `buffer`.
  static StepInstruction receive(int consumer, int index, int micro, int buffer, const Collective& message) {
    return StepInstruction{.op = StepOp::recv,
                           .stream = Stream::communication,
                           .layer = consumer,
                           .micro_batch = micro,
                           .index = index,
                           .writes = {buffer},
                           .collectives = {message}};
  }

  void send_forward(int producer, int micro, int buffer);

  // Each pass's receives are posted together before it runs, in one group with the sends held
  // back since the last group, and in the order the peer sends them: a rendezvous transport
  // (NCCL: hand_over_groups.h) matches the n-th messages between two stages whatever tensors they
  // are, so receiving at first use would mismatch where two tensors cross a cut in another order.
  // Interleaved 1F1B posts as Megatron-LM does (send-forward-backward-receive-forward-backward):
  // before a forward of the steady state, also the receives of the backward after it; received
  // only then, a stage could hold back a send of one chunk while its peer waited for a message of
  // another. `posted` marks the passes whose receives are out.
  struct ReceivesAhead {
    const std::vector<PipelinePass>& passes;
    int warmup = 0;  // warmup_forwards: the passes before the steady state
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
  };
  void post_receives_ahead(const ReceivesAhead& schedule, size_t next, std::vector<bool>& posted,
                           std::vector<MicroBatchBuffers>& states);
  // A forward's (backward's) receives over `layers`, their buffers made and noted in `state`, in
  // the order the sender sends them: forward as its producers run (model order), backward as the
  // readers holding backward_send run (reverse model order).
  std::vector<StepInstruction> forward_receives(const std::vector<int>& layers, int micro, MicroBatchBuffers& state);
  std::vector<StepInstruction> backward_receives(const std::vector<int>& layers, int micro, MicroBatchBuffers& state);
  // Emits receives back to back, each but the last posted with the next.
  void emit_receive_group(std::vector<StepInstruction> receives);
  MicroBatchBuffers& state_of(const PipelinePass& pass, std::vector<MicroBatchBuffers>& states) const;

  // The messages that bring gradients of v's output back from later stages: (consumer, input
  // position), in the order the backward receives them.
  std::vector<std::pair<int, int>> gradient_messages_of(int v) const;

  // A send holds what it reads until it is waited for: right before the next send on the same
  // edge (consumer, input position, direction), so one message per edge is in flight, or at the
  // end of the passes. A stage receives an edge's micro-batches in order, so this cannot deadlock.
  // The message of input `index` of `consumer` (forward or back), reading `buffer`.
  using Edge = std::tuple<int, int, bool>;
  void send(int consumer, int index, bool backward, int micro, int buffer, const Collective& message);

  // Input `index` of `layer` (forward) or its gradient (backward) into another layout.
  static StepInstruction redistribution(int layer, int index, int micro, int from, int into,
                                        const std::vector<RedistributionStep>& steps) {
    return StepInstruction{.op = StepOp::redistribute,
                           .stream = Stream::communication,
                           .layer = layer,
                           .micro_batch = micro,
                           .index = index,
                           .reads = {from},
                           .writes = {into},
                           .steps = steps};
  }

  // After layer v's forward: let go of what no backward reads (the header's rule). The first
  // forward keeps the recomputed blocks' checkpoints (checkpointed_); their rerun lets them go.
  void release_after_forward(int v, MicroBatchBuffers& state, bool recomputing);

  // Selective recompute (Plan::recompute_attention) lets go of what this layer keeps for its
  // backward after its forward: the attention core's probabilities.
  bool recomputes_kept(int v) const;

  // The layer's forward again from its kept inputs, for what its backward reads; the output it
  // writes again is not needed (its consumers kept their own) and goes at once.
  void recompute_kept(int v, int micro, MicroBatchBuffers& state);

  // Plan::regather_saved_inputs: the saved inputs of layer v whose sources were kept are
  // gathered again, right before its backward.
  void regather_inputs(int v, int micro, MicroBatchBuffers& state);

  // The leading layers of a chunk that full recomputation reruns (recompute_scope.h).
  std::vector<int> rerun_part(const std::vector<int>& layers) const;

  // `rerun` cut into its blocks (block_in_chunk_), in model order: under recompute_blocks N > 0
  // (Megatron-LM's block method) each block is checkpointed on its own and runs forward again
  // right before its own backward, so one block's activations are alive at a time; under 0 the
  // chunk's rerun is one piece, from the chunk's input alone (Plan::recompute_blocks).
  std::vector<std::vector<int>> rerun_blocks(const std::vector<int>& rerun) const;

  // Per layer, under recompute_blocks N > 0: a recomputed layer whose output a later block of its
  // chunk reads, so it is that block's checkpoint (its input), kept from the forward to the rerun
  // of its own block (Megatron-LM's block method and torchtitan keep each checkpointed layer's
  // input so). None under 0.
  std::vector<bool> checkpointed_outputs() const;

  // Recompute: between forward and backward only the chunk's inputs and its blocks' checkpoints
  // stay.
  void drop_recomputable(const std::vector<int>& layers, MicroBatchBuffers& state);

  // ZeRO 3: the layer's whole parameters for one pass: gathered from the slices into a flat
  // buffer (padded to the group), then unpacked into one buffer per parameter. In a training
  // step the gathers are posted a block ahead, as FSDP prefetches the next block's all-gather on
  // a stream of its own while the current block computes: the first gathering pass of a block
  // posts the gathers of the next block's passes, and each pass waits for its own right before
  // use (so those flat buffers are alive while this block computes). Evaluation gathers where it
  // uses (step_compiler_gathers.cc).
  SmallIndexList gather_parameters(int v, int micro);
  struct PostedGather {
    int layer = -1;
    int micro = -1;
    SmallIndexList flats{};    // per parameter gather of the layer's pass
    SmallIndexList gathers{};  // their redistribute instructions (-1 where instructions are not kept)
  };
  // Posts the gathers of layer v's pass on micro-batch `micro` into `posted` (filled anew).
  void post_gather(int v, int micro, PostedGather& posted);
  // A pass that gathers, in program order: its layer, micro-batch and prefetch group (the passes
  // of one block in one segment; a group's gathers go out when the group before it begins).
  struct PlannedGather {
    int layer = -1;
    int micro = -1;
    int group = 0;
  };
  // The passes that gather, in program order, read from the passes' segments.
  void plan_gathers(const std::vector<PipelinePass>& passes, const std::vector<std::vector<Segment>>& segments);

  // What a pass of layer v computes with: the parameters gathered for it (gather_parameters),
  // then the resident ones of its tied table (plans::shared_tied_table) and its own that are not.
  SmallIndexList pass_parameters(int v, const SmallIndexList& gathered) const;
  // Where v's backward adds weight gradients: its own, and its shared table's where this rank
  // adds the head's contribution.
  SmallIndexList pass_parameter_gradients(int v) const;

  void backward(const std::vector<int>& layers, int micro, MicroBatchBuffers& state);

  // Gradients of v's output from consumers on later stages (received before the pass, in
  // `state.posted_gradients`) become its output gradient, summed.
  void take_received_gradients(int v, int micro, MicroBatchBuffers& state);

  // Input p's gradient of layer v, into the producer's gradient layout: sent back to an earlier
  // stage, or added to (or becoming) the producer's output gradient.
  void hand_back_gradient(int v, size_t p, int micro, int grad, MicroBatchBuffers& state);

  // `ready` (a gradient of u's output) becomes `sum`, or is added into it and let go.
  void add_gradient(int u, int micro, int ready, int& sum);

  const Plan& plan_;
  const CompiledPlan& compiled_;
  const model::Model& net_;
  ProgramWriter writer_;
  StepFacts facts_;
  GradientSync sync_;
  std::vector<bool> recomputed_;             // per layer: full recomputation reruns it
  std::vector<int> block_in_chunk_;          // per layer: its block's number in its chunk (recompute_scope.h)
  std::vector<bool> checkpointed_;           // per layer: checkpointed_outputs()
  std::map<Edge, int> pending_sends_;        // per edge, the send instruction not yet waited for
  std::vector<PlannedGather> gather_order_;  // each pass that gathers, in program order
  size_t gathers_taken_ = 0;                 // of gather_order_
  std::deque<PostedGather> posted_gathers_;  // gather_order_'s next, posted ahead
  bool evaluating_ = false;
};

}  // namespace splitbrain::plans::detail
