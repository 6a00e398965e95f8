#pragma once
// One rank's training step as a program: an ordered list of instructions over numbered buffers.
// It is the single statement of WHEN things happen in a step (the compiled plan says WHAT moves):
// the pipeline schedule, which tensors a micro-batch keeps for its backward and when each is let
// go, activation recompute, the gradient buckets and when they start, ZeRO's gathers and slices.
// The simulator prices it and walks its alloc/free for memory (plans/memory_walk.h); the executor
// walks the same list. Plain data on purpose, like an XLA schedule or a pipeline engine's
// instruction list: printable (`splitbrain program`), comparable, testable by walking it.
//
// Conventions:
// - Buffers are numbered from 0. `resident` buffers (parameters, gradients, optimizer state
//   kept across steps) exist before the step and after it; every other buffer is allocated by
//   exactly one `alloc` and freed by exactly one later `free` within the step.
// - Instruction i may start once every instruction in `after` has finished and the previous
//   instruction on its stream has started (streams run in program order).
// - Bytes are what the executor holds (fp32 gradients and bucket buffers, as it computes them).

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "model/model.h"
#include "plans/collective.h"
#include "plans/pipeline_order.h"
#include "plans/redistribution.h"

namespace splitbrain::plans {

// What a buffer is for: the categories in which predicted and measured memory line up.
enum class MemoryCategory { params, grads, optimizer, activations, buffers };
constexpr int kMemoryCategories = 5;
std::string_view memory_category_name(MemoryCategory category);

enum class StepOp {
  alloc,          // buffer comes into existence (zero-filled)
  free,           // buffer goes
  load_input,     // host -> buffer: this rank's block of the micro-batch's samples
  forward,        // layer's forward pass on micro-batch
  recompute,      // layer's forward again, right before the backward (activation recompute)
  backward,       // layer's backward pass (input and weight gradients)
  redistribute,   // reads -> writes through `collectives` (a layout change, a parameter gather)
  accumulate,     // writes[0] += reads[0] (a gradient reaching a tensor that already has one)
  send,           // reads[0] to another pipeline stage; the buffer stays held until its wait
  recv,           // writes[0] from another pipeline stage
  wait,           // until the communication of instruction `waits_for` has completed
  pack,           // copies reads into the flat writes[0] (a bucket's gradients, ZeRO's parameter slice)
  unpack,         // copies the flat reads[0] back into writes
  reduce,         // a gradient bucket's reduction (all-reduce, or ZeRO's reduce-scatter)
  optimizer,      // the parameter update over everything reduced
  gather_params,  // ZeRO 1-2: the updated slices all-gathered back into whole parameters
  loss_out,       // the loss scalar to the host (the one transfer a step needs besides the input)
};
std::string_view step_op_name(StepOp op);

// How traces name an instruction: its op, then its layer, bucket and micro-batch where it has
// them ("forward conv1 mb0", "reduce bucket 2", "redistribute pool2 mb0"; layers named from
// `net`). The simulator's predicted trace and the executor's measured one both name their events
// so, which lets `splitbrain compare` line them up.
std::string instruction_label(const model::Model& net, StepOp op, int layer, int bucket, int micro_batch);

// A label taken apart again: the instruction ("forward conv1") and its micro-batch (3 for
// "forward conv1 mb3"; -1 for a label without one). What reads a trace sums or matches an
// instruction's micro-batches through this, so only this file knows how labels are written.
struct LabelParts {
  std::string instruction;
  int micro_batch = -1;
};
LabelParts split_instruction_label(std::string_view label);

enum class Stream { compute, communication };
std::string_view stream_name(Stream stream);

// What a buffer holds, for its name in listings (the step compiler never reads it).
enum class BufferRole {
  output,               // a layer's output
  input_copy,           // a layer's input in the layout it reads it (redistributed)
  received,             // an input received from an earlier stage
  kept_by_op,           // what an op keeps for its backward (masks, indices, statistics)
  output_gradient,      // the gradient of a layer's output
  received_gradient,    // an output's gradient received from a later stage
  input_gradient,       // the gradient a backward writes for an input
  gathered_parameters,  // ZeRO 3: a layer's parameters gathered, flat
  whole_parameter,      // ZeRO 3: one gathered parameter, for one pass
  parameter,            // model states (resident)
  parameter_gradient,
  optimizer_state,
  whole_parameter_gradient,  // ZeRO 2-3: a sharded layer's whole gradient, until its bucket is reduced
  bucket,                    // a gradient bucket, packed flat
  reduced_slice,             // ZeRO 1: this rank's reduced slice of a bucket
  parameter_slice,           // ZeRO: this rank's slice of a bucket's parameters
  optimizer_slice,           // ZeRO: the optimizer state of that slice (resident)
  gradient_slice,            // ZeRO 2-3: the gradient slice kept (resident)
  gathered_bucket,           // ZeRO 1-2: a bucket's updated parameters, gathered flat
  tied_gradient,             // the other stage's gradient of a tied table (CompiledLayer::tied_copy)
};

// The input positions that name the two messages of a tied table's gradient swap (a tied head
// has one input, at position 0).
constexpr int kTiedToHead = 1;
constexpr int kTiedToTable = 2;

struct StepBuffer {
  int64_t bytes = 0;
  MemoryCategory category = MemoryCategory::buffers;
  BufferRole role = BufferRole::output;
  int layer = -1;  // the layer it belongs to (-1: a bucket's)
  int index = -1;  // the input position or the parameter number
  int micro_batch = -1;
  int bucket = -1;
};

// Whether `buffer` comes into existence zero-filled: all but those the instruction after their
// alloc writes whole (the input layer's output, which load_input fills) or with an array it makes
// anyway (a redistribution's or a collective's result, a received message, a packing), where the
// fill would be a wasted pass over memory (a gradient bucket is the model's size), and an op's
// kept storage, which the op makes. The executor allocates so; the simulator prices the fill.
bool allocated_zeroed(const model::Model& net, const StepBuffer& buffer);

// "conv1.out mb0", "fc1.in0 mb1 received", "bucket 2", ... (layers named from `net`).
std::string buffer_name(const model::Model& net, const StepBuffer& buffer);

// Buffer or instruction numbers an instruction lists: a handful each, so held inline (a long
// pipeline's programs have millions of instructions, which the planner compiles by the thousand).
using SmallIndexList = boost::container::small_vector<int, 4>;

// Removes every `value` from `list`, keeping the order of the rest.
inline void erase_value(SmallIndexList& list, int value) {
  list.erase(std::remove(list.begin(), list.end(), value), list.end());
}

// The operands of a pass by role, as a layer's op takes them (buffer numbers; -1: none).
struct PassOperands {
  SmallIndexList inputs{};               // per input position; a backward's -1: released (the op needs its shape only)
  SmallIndexList parameters{};           // the layer's parameters (ZeRO 3: the whole ones gathered for the pass)
  int output = -1;                       // a backward's -1: released
  int output_gradient = -1;              // backward
  SmallIndexList input_gradients{};      // backward, per input position (-1: no gradient)
  SmallIndexList parameter_gradients{};  // backward: where the weight gradients are added
  int kept = -1;                         // backward: what the op kept (its own storage, counted by this buffer)
};

struct StepInstruction {
  StepOp op = StepOp::alloc;
  Stream stream = Stream::compute;
  int buffer = -1;  // alloc, free
  int layer = -1;   // forward, recompute, backward; the layer a transfer belongs to
  int micro_batch = -1;
  int bucket = -1;     // reduce, gather_params (index into CompiledPlan::buckets)
  int waits_for = -1;  // wait
  int index = -1;      // recv, send, redistribute of an input or its gradient: the input position at `layer`
  // recv: posted in one group with the next instruction, another recv (a pass's receives are
  // posted together before it: step_compiler_internal.h); waited for with it.
  bool posted_with_next = false;
  SmallIndexList reads{};                   // buffers read
  SmallIndexList writes{};                  // buffers written
  std::vector<RedistributionStep> steps{};  // redistribute: the layout change, step by step
  std::vector<Collective> collectives{};    // send, recv, reduce, gather_params, a parameter gather
  SmallIndexList after{};                   // instructions that must finish first (data dependencies)
  // forward, recompute, backward: its operands by role, StepProgram::pass_operands[operands] (reads
  // and writes list the same buffers); -1 elsewhere. Kept beside the instructions, which are many
  // and copied as the program grows, while passes are a part of them.
  int operands = -1;
};

// Every collective an instruction runs (its redistribution's and its own), in order.
std::vector<Collective> collectives_of(const StepInstruction& instruction);

struct StepProgram {
  int rank = 0;
  int stage = 0;
  // Per model layer, its model chunk (virtual stage): the stage's own number for every layer it
  // runs, but under the interleaved schedule, where the stage runs several chunks.
  std::vector<int> chunk_of_layer{};
  std::vector<StepBuffer> buffers{};
  std::vector<int> resident{};  // buffers alive across steps (model states)
  std::vector<StepInstruction> instructions{};
  std::vector<PassOperands> pass_operands{};  // the passes', by StepInstruction::operands
  // The first instruction after the stage's passes (what follows completes the step: the last
  // pipeline sends, the buckets not started during the backward, the update).
  int passes_end = 0;
};

// The operands of pass instruction `instruction` of `program` (throws std::logic_error for an
// instruction that is not a pass).
const PassOperands& operands_of(const StepProgram& program, const StepInstruction& instruction);

// Whether a send, recv or redistribute moves a gradient (the backward's) rather than an
// activation: what tells a pipeline message's direction and a redistribution's label.
bool moves_gradient(const StepProgram& program, const StepInstruction& instruction);

// The global shape of the tensor a redistribute instruction moves between layouts: the layer's
// input `index` (its producer's activation, or in the backward that activation's gradient) at
// `micro_batch` samples.
std::vector<int64_t> redistributed_shape(const model::Model& net, const StepInstruction& instruction,
                                         int64_t micro_batch);

// Whether the program waits for communication instruction `instruction` right after starting it
// (a gradient bucket's reduction that does not overlap anything: run it blocking).
bool waited_at_once(const StepProgram& program, int instruction);

// The order of the stage's passes in `program`: (forward, micro-batch, chunk) at the first
// forward instruction of a micro-batch in a chunk, (backward, micro-batch, chunk) at its first
// recompute or backward instruction.
std::vector<PipelinePass> pass_sequence(const StepProgram& program);

// Per layer (of `layers`): the gradient buckets whose reduction `program` starts right after that
// layer's last backward instruction (all empty where the buckets are reduced after the passes).
std::vector<std::vector<int>> buckets_started_after(const StepProgram& program, int layers);

}  // namespace splitbrain::plans
