// The step compiler's passes: forward, backward, recompute and ZeRO 3's gathers, micro-batch by
// micro-batch in the schedule's order (step_compiler_internal.h holds its state).

#include "plans/step_compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

#include "model/statistics.h"
#include "plans/pipeline_order.h"
#include "plans/plan_error.h"
#include "plans/redistribution.h"
#include "plans/step_compiler_internal.h"
#include "plans/tied_weights.h"

namespace splitbrain::plans {
namespace detail {

StepProgram StepCompiler::compile() {
  facts_.add_model_states(writer_);
  // A micro-batch's buffers in a chunk exist from its forward to the end of its backward.
  std::vector<MicroBatchBuffers> states(static_cast<size_t>(plan_.virtual_stages * plan_.micro_batches));
  const std::vector<PipelinePass> passes = pass_order(plan_, facts_.stage());
  const ReceivesAhead ahead{.passes = passes,
                            .warmup = warmup_forwards(facts_.stage(), plan_.stage_count(), plan_.micro_batches,
                                                      plan_.schedule, plan_.virtual_stages),
                            .schedule = plan_.schedule};
  std::vector<std::vector<Segment>> segments;
  segments.reserve(passes.size());
  for (const PipelinePass& pass : passes) segments.push_back(segments_of(pass));
  plan_gathers(passes, segments);
  std::vector<bool> posted(passes.size(), false);
  for (size_t i = 0; i < passes.size(); ++i) {
    post_receives_ahead(ahead, i, posted, states);  // a forward's state is reset there
    const int micro = passes[i].micro_batch;
    MicroBatchBuffers& state = state_of(passes[i], states);
    for (const Segment& segment : segments[i]) {
      switch (segment.run) {
        case SegmentRun::forward:
          forward(segment.layers, micro, state, /*recomputing=*/false);
          break;
        case SegmentRun::recompute:
          forward(segment.layers, micro, state, /*recomputing=*/true);
          break;
        case SegmentRun::backward:
          backward(segment.layers, micro, state);
          break;
        case SegmentRun::drop_recomputable:
          drop_recomputable(segment.layers, state);
          break;
        case SegmentRun::release_all:
          release_all(segment.layers, state);
          break;
      }
    }
  }
  writer_.mark_passes_end();
  for (const auto& [edge, send] : pending_sends_) writer_.wait_and_release(send);
  pending_sends_.clear();
  sync_.finish_step();
  return writer_.finish();
}

std::vector<StepCompiler::Segment> StepCompiler::segments_of(const PipelinePass& pass) const {
  const std::vector<int>& layers = facts_.chunk_layers(pass.chunk);
  std::vector<Segment> segments;
  if (!plan_.recompute_activations) {
    segments.push_back({pass.kind == PassKind::forward ? SegmentRun::forward : SegmentRun::backward, layers});
    if (pass.kind != PassKind::forward) segments.push_back({SegmentRun::release_all, layers});
    return segments;
  }
  const std::vector<int> rerun = rerun_part(layers);
  const std::vector<int> kept(layers.begin() + static_cast<std::ptrdiff_t>(rerun.size()), layers.end());
  const std::vector<std::vector<int>> blocks = rerun_blocks(rerun);
  if (pass.kind == PassKind::forward) {
    // Block by block, each letting go of all but its checkpoints as soon as it has run (the
    // forward of a checkpointed block keeps nothing for the backward), then the kept blocks.
    for (const std::vector<int>& block : blocks) {
      segments.push_back({SegmentRun::forward, block});
      segments.push_back({SegmentRun::drop_recomputable, block});
    }
    segments.push_back({SegmentRun::forward, kept});
    return segments;
  }
  // The chunk's last blocks kept their activations: their backward comes first; then each
  // recomputed block, last first, runs forward again from its checkpoint right before its own
  // backward.
  segments.push_back({SegmentRun::backward, kept});
  for (auto block = blocks.rbegin(); block != blocks.rend(); ++block) {
    segments.push_back({SegmentRun::recompute, *block});
    segments.push_back({SegmentRun::backward, *block});
  }
  segments.push_back({SegmentRun::release_all, layers});
  return segments;
}

StepProgram StepCompiler::compile_evaluation() {
  facts_.add_model_states(writer_);
  evaluating_ = true;
  std::vector<MicroBatchBuffers> states(1);
  for (int micro = 0; micro < plan_.micro_batches; ++micro) {
    // Chunk by chunk in model order: a later chunk's input comes round from the other stages.
    reset(states[0]);
    for (int chunk = facts_.stage(); chunk < plan_.chunk_count(); chunk += plan_.stage_count()) {
      emit_receive_group(forward_receives(facts_.chunk_layers(chunk), micro, states[0]));
      forward(facts_.chunk_layers(chunk), micro, states[0], /*recomputing=*/false);
    }
    release_all(facts_.stage_layers(), states[0]);
  }
  writer_.mark_passes_end();
  for (const auto& [edge, send] : pending_sends_) writer_.wait_and_release(send);
  pending_sends_.clear();
  return writer_.finish();
}

void StepCompiler::reset(MicroBatchBuffers& state) const {
  const auto layers = static_cast<size_t>(net_.size());
  state.outputs.assign(layers, -1);
  state.inputs.assign(layers, {});
  state.output_grads.assign(layers, -1);
  state.kept_by_op.assign(layers, -1);
  state.gather_sources.assign(layers, {});
  state.received.clear();
  state.gradients_to_send.clear();
}

void StepCompiler::release_all(const std::vector<int>& layers, MicroBatchBuffers& state) {
  for (int v : layers) {
    const auto i = static_cast<size_t>(v);
    writer_.drop(state.outputs[i]);
    for (int b : state.inputs[i]) writer_.drop(b);
    writer_.drop(state.output_grads[i]);
    writer_.drop(state.kept_by_op[i]);
    for (int b : state.gather_sources[i]) writer_.drop(b);
  }
  for (const auto& [key, b] : state.received) writer_.drop(b);
  state = MicroBatchBuffers{};
}

void StepCompiler::forward(const std::vector<int>& layers, int micro, MicroBatchBuffers& state, bool recomputing) {
  for (int v : layers) {
    const model::Layer& layer = net_.layer(v);
    const CompiledLayer& compiled = compiled_.layers[static_cast<size_t>(v)];
    if (layer.kind == model::OpKind::input) {
      if (recomputing) continue;  // the stage's input stays from the first forward
      const int out = activation(facts_.output_bytes(v), BufferRole::output, v, -1, micro);
      emit_kept(
          [&] { return StepInstruction{.op = StepOp::load_input, .layer = v, .micro_batch = micro, .writes = {out}}; });
      state.outputs[static_cast<size_t>(v)] = out;
      send_forward(v, micro, out);
      continue;
    }
    auto& inputs = state.inputs[static_cast<size_t>(v)];
    auto& gather_sources = state.gather_sources[static_cast<size_t>(v)];
    gather_sources.assign(layer.inputs.size(), -1);
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      const int u = layer.inputs[p];
      const InputTransfer& transfer = compiled.inputs[p];
      int input = -1;
      if (transfer.from_other_stage) {
        input = received_input(v, p, state);
      } else {
        input = state.outputs[static_cast<size_t>(u)];
        writer_.hold(input);
      }
      const std::vector<RedistributionStep>& steps = facts_.input_redistribution(v, p);
      if (!steps.empty()) {
        const int copy = activation(facts_.input_bytes(v, p), BufferRole::input_copy, v, static_cast<int>(p), micro);
        emit_kept([&] { return redistribution(v, static_cast<int>(p), micro, input, copy, steps); });
        if (!recomputing && !evaluating_ && facts_.regathers_input(v, p)) {
          gather_sources[p] = input;  // still held: the backward gathers it again
        } else {
          writer_.drop(input);
        }
        input = copy;
      }
      inputs.push_back(input);
    }
    // A checkpoint still held (a later block's input, checkpointed_) is made again by its rerun.
    if (recomputing) writer_.drop(std::exchange(state.outputs[static_cast<size_t>(v)], -1));
    const int out = activation(facts_.output_bytes(v), BufferRole::output, v, -1, micro);
    const SmallIndexList gathered = gather_parameters(v, micro);
    emit_kept([&] {
      StepInstruction pass{.op = recomputing ? StepOp::recompute : StepOp::forward,
                           .layer = v,
                           .micro_batch = micro,
                           .reads = inputs,
                           .writes = {out}};
      PassOperands operands{.inputs = inputs, .parameters = pass_parameters(v, gathered), .output = out};
      for (int b : operands.parameters) pass.reads.push_back(b);
      erase_value(pass.reads, -1);
      pass.operands = writer_.add_pass_operands(std::move(operands));
      return pass;
    });
    if (const int64_t kept = facts_.kept_by_op_bytes(v); kept > 0) {
      state.kept_by_op[static_cast<size_t>(v)] = activation(kept, BufferRole::kept_by_op, v, -1, micro);
      // Selective recompute: what the attention core keeps goes now and is made again before
      // its backward (recompute_kept).
      if (recomputes_kept(v)) writer_.drop(std::exchange(state.kept_by_op[static_cast<size_t>(v)], -1));
    }
    for (int b : gathered) writer_.drop(b);
    state.outputs[static_cast<size_t>(v)] = out;
    if (!recomputing) {
      send_forward(v, micro, out);
      if (layer.kind == model::OpKind::softmax_cross_entropy) {
        // The logits go with it: evaluation counts the predictions from them.
        emit_kept([&] {
          return StepInstruction{
              .op = StepOp::loss_out, .layer = v, .micro_batch = micro, .reads = {out, inputs.front()}};
        });
      }
    }
    release_after_forward(v, state, recomputing);
  }
}

void StepCompiler::release_after_forward(int v, MicroBatchBuffers& state, bool recomputing) {
  if (evaluating_) return;
  const model::Layer& layer = net_.layer(v);
  auto& inputs = state.inputs[static_cast<size_t>(v)];
  const SmallIndexList& gather_sources = state.gather_sources[static_cast<size_t>(v)];
  for (size_t p = 0; p < inputs.size(); ++p) {
    const bool source_kept = p < gather_sources.size() && gather_sources[p] >= 0;
    if (!facts_.saves_input(v, p) || source_kept) writer_.drop(std::exchange(inputs[p], -1));
  }
  auto release_output = [&](int u) {
    if (plan_.recompute_activations && net_.layer(u).kind == model::OpKind::input) return;
    if (net_.layer(u).cost.saved.output) return;
    if (checkpointed_[static_cast<size_t>(u)] && !recomputing) return;
    writer_.drop(std::exchange(state.outputs[static_cast<size_t>(u)], -1));
  };
  for (int u : layer.inputs) {
    if (facts_.on_stage(u) && facts_.last_local_consumer(u) == v) release_output(u);
    const auto received = state.received.find(u);
    if (!plan_.recompute_activations && received != state.received.end() && facts_.last_local_consumer(u) == v) {
      writer_.drop(received->second);
      state.received.erase(received);
    }
  }
  if (facts_.last_local_consumer(v) < 0) release_output(v);
}

bool StepCompiler::recomputes_kept(int v) const { return !evaluating_ && plan_.recomputes_selectively(net_.layer(v)); }

void StepCompiler::recompute_kept(int v, int micro, MicroBatchBuffers& state) {
  const SmallIndexList& inputs = state.inputs[static_cast<size_t>(v)];
  if (std::find(inputs.begin(), inputs.end(), -1) != inputs.end()) {
    throw PlanError(fmt::format("step program: layer '{}' is recomputed without its inputs", net_.layer(v).name));
  }
  const int scratch = activation(facts_.output_bytes(v), BufferRole::output, v, -1, micro);
  emit_kept([&] {
    StepInstruction pass{
        .op = StepOp::recompute, .layer = v, .micro_batch = micro, .reads = inputs, .writes = {scratch}};
    pass.operands =
        writer_.add_pass_operands({.inputs = inputs, .parameters = facts_.parameter_buffers(v), .output = scratch});
    return pass;
  });
  state.kept_by_op[static_cast<size_t>(v)] =
      activation(facts_.kept_by_op_bytes(v), BufferRole::kept_by_op, v, -1, micro);
  writer_.drop(scratch);
}

void StepCompiler::regather_inputs(int v, int micro, MicroBatchBuffers& state) {
  SmallIndexList& sources = state.gather_sources[static_cast<size_t>(v)];
  for (size_t p = 0; p < sources.size(); ++p) {
    if (sources[p] < 0) continue;
    const int copy = activation(facts_.input_bytes(v, p), BufferRole::input_copy, v, static_cast<int>(p), micro);
    emit_kept([&] {
      return redistribution(v, static_cast<int>(p), micro, sources[p], copy, facts_.input_redistribution(v, p));
    });
    writer_.drop(std::exchange(sources[p], -1));
    state.inputs[static_cast<size_t>(v)][p] = copy;
  }
}

void StepCompiler::drop_recomputable(const std::vector<int>& layers, MicroBatchBuffers& state) {
  for (int v : layers) {
    const auto i = static_cast<size_t>(v);
    for (int& b : state.inputs[i]) writer_.drop(std::exchange(b, -1));
    state.inputs[i].clear();
    writer_.drop(std::exchange(state.kept_by_op[i], -1));
    if (net_.layer(v).kind == model::OpKind::input || checkpointed_[i]) continue;
    writer_.drop(std::exchange(state.outputs[i], -1));
  }
}

SmallIndexList StepCompiler::pass_parameters(int v, const SmallIndexList& gathered) const {
  const std::vector<int> gathered_owners =
      gathered.empty() ? std::vector<int>{} : parameter_gather_owners(plan_, compiled_, v);
  SmallIndexList parameters = gathered;
  for (int owner : {shared_tied_table(plan_, compiled_, v), v}) {
    if (owner < 0) continue;
    if (std::find(gathered_owners.begin(), gathered_owners.end(), owner) != gathered_owners.end()) continue;
    for (int b : facts_.parameter_buffers(owner)) parameters.push_back(b);
  }
  return parameters;
}

SmallIndexList StepCompiler::pass_parameter_gradients(int v) const {
  SmallIndexList gradients = sync_.gradient_buffers(v);
  // The head's weight gradient is added into its table's, once over the replicas of the head
  // (plans::adds_tied_gradient): the one rule under every ZeRO stage.
  if (const int table = shared_tied_table(plan_, compiled_, v);
      table >= 0 && adds_tied_gradient(plan_, facts_.rank(), v, table)) {
    for (int b : sync_.gradient_buffers(table)) gradients.push_back(b);
  }
  return gradients;
}

void StepCompiler::backward(const std::vector<int>& layers, int micro, MicroBatchBuffers& state) {
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    const int v = *it;
    const model::Layer& layer = net_.layer(v);
    if (layer.kind == model::OpKind::input) continue;
    const CompiledLayer& compiled = compiled_.layers[static_cast<size_t>(v)];
    take_received_gradients(v, micro, state);
    int& output_grad = state.output_grads[static_cast<size_t>(v)];
    if (output_grad < 0) {
      output_grad = working_buffer(facts_.gradient_bytes_of_output(v), BufferRole::output_gradient, v, -1, micro);
    }
    regather_inputs(v, micro, state);
    if (recomputes_kept(v)) recompute_kept(v, micro, state);
    SmallIndexList input_grads(layer.inputs.size(), -1);
    if (layer.needs_input_gradient) {
      for (size_t p = 0; p < layer.inputs.size(); ++p) {
        input_grads[p] = working_buffer(facts_.input_gradient_bytes(v, p), BufferRole::input_gradient, v,
                                        static_cast<int>(p), micro);
      }
    }
    const SmallIndexList gathered = gather_parameters(v, micro);
    sync_.ensure_whole_gradients(v);
    // A tied head adds into its table's gradient (ZeRO 2-3 make it at first use), where the
    // table is on this stage. (On another stage the head holds a copy, whose gradient is its
    // own until the two stages swap theirs: GradientSync::swap_tied_gradients.)
    if (const int table = shared_tied_table(plan_, compiled_, v); table >= 0) sync_.ensure_whole_gradients(table);
    emit_kept([&] {
      StepInstruction pass{.op = StepOp::backward, .layer = v, .micro_batch = micro};
      PassOperands o{.inputs = state.inputs[static_cast<size_t>(v)],
                     .parameters = pass_parameters(v, gathered),
                     .output = state.outputs[static_cast<size_t>(v)],
                     .output_gradient = output_grad,
                     .input_gradients = input_grads,
                     .parameter_gradients = pass_parameter_gradients(v),
                     .kept = state.kept_by_op[static_cast<size_t>(v)]};
      pass.reads = o.inputs;
      pass.reads.insert(pass.reads.end(), {o.output, o.output_gradient, o.kept});
      pass.reads.insert(pass.reads.end(), o.parameters.begin(), o.parameters.end());
      erase_value(pass.reads, -1);
      pass.writes = o.input_gradients;
      pass.writes.insert(pass.writes.end(), o.parameter_gradients.begin(), o.parameter_gradients.end());
      erase_value(pass.writes, -1);
      pass.operands = writer_.add_pass_operands(std::move(o));
      return pass;
    });
    writer_.drop(std::exchange(state.kept_by_op[static_cast<size_t>(v)], -1));
    for (int b : gathered) writer_.drop(b);
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      if (input_grads[p] >= 0 && compiled.inputs[p].gradient_flows)
        hand_back_gradient(v, p, micro, input_grads[p], state);
    }
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      if (!compiled.inputs[p].gradient_flows) writer_.drop(input_grads[p]);  // nothing upstream takes it
    }
    writer_.drop(std::exchange(state.outputs[static_cast<size_t>(v)], -1));
    for (int& b : state.inputs[static_cast<size_t>(v)]) writer_.drop(std::exchange(b, -1));
    state.inputs[static_cast<size_t>(v)].clear();
    writer_.drop(std::exchange(output_grad, -1));
    if (micro == plan_.micro_batches - 1 && facts_.buckets_overlap()) sync_.start_buckets_completed_by(v);
  }
}

std::vector<int> StepCompiler::rerun_part(const std::vector<int>& layers) const {
  auto kept = std::find_if(layers.begin(), layers.end(), [&](int v) {
    return net_.layer(v).kind != model::OpKind::input && !recomputed_[static_cast<size_t>(v)];
  });
  // The rerun layers lead the chunk (recompute_scope.h): the rest keep their activations.
  if (std::any_of(kept, layers.end(), [&](int v) { return recomputed_[static_cast<size_t>(v)]; })) {
    throw PlanError("step program: the recomputed layers of a chunk do not lead it");
  }
  return {layers.begin(), kept};
}

std::vector<std::vector<int>> StepCompiler::rerun_blocks(const std::vector<int>& rerun) const {
  // Every layer of the chunk (recompute_blocks 0) reruns as one, from the chunk's input.
  if (plan_.recompute_blocks == 0) {
    return rerun.empty() ? std::vector<std::vector<int>>{} : std::vector<std::vector<int>>{rerun};
  }
  std::vector<std::vector<int>> blocks;
  for (int v : rerun) {
    const int block = block_in_chunk_[static_cast<size_t>(v)];
    if (blocks.empty() || block_in_chunk_[static_cast<size_t>(blocks.back().front())] != block) blocks.emplace_back();
    blocks.back().push_back(v);
  }
  return blocks;
}

std::vector<bool> StepCompiler::checkpointed_outputs() const {
  std::vector<bool> checkpointed(static_cast<size_t>(net_.size()), false);
  if (plan_.recompute_blocks == 0) return checkpointed;  // the chunk's input is all it keeps
  auto chunk_of = [&](int v) {
    return plan_.stage_of_layer.empty() ? 0 : plan_.stage_of_layer[static_cast<size_t>(v)];
  };
  for (int v = 0; v < net_.size(); ++v) {
    for (int u : net_.layer(v).inputs) {
      const bool earlier_block = block_in_chunk_[static_cast<size_t>(u)] < block_in_chunk_[static_cast<size_t>(v)];
      if (recomputed_[static_cast<size_t>(u)] && chunk_of(u) == chunk_of(v) && earlier_block) {
        checkpointed[static_cast<size_t>(u)] = true;
      }
    }
  }
  return checkpointed;
}

}  // namespace detail

namespace {

using detail::StepCompiler;

void check_step_request(const Plan& plan, const CompiledPlan& compiled, int rank) {
  if (rank < 0 || rank >= plan.mesh.rank_count()) {
    throw PlanError(fmt::format("rank {} is out of range: the plan's mesh {} has {} ranks", rank, plan.mesh.to_string(),
                                plan.mesh.rank_count()));
  }
  if (compiled.layers.size() != static_cast<size_t>(plan.model->size())) {
    throw PlanError(fmt::format("compile_step: compiled plan has {} layers, the model {}", compiled.layers.size(),
                                plan.model->size()));
  }
}

}  // namespace

StepProgram compile_step(const Plan& plan, const CompiledPlan& compiled, int rank) {
  check_step_request(plan, compiled, rank);
  return StepCompiler(plan, compiled, rank, /*keep_instructions=*/true).compile();
}

StepProgram compile_evaluation(const Plan& plan, const CompiledPlan& compiled, int rank) {
  check_step_request(plan, compiled, rank);
  return StepCompiler(plan, compiled, rank, /*keep_instructions=*/true).compile_evaluation();
}

StepWithMemory compile_step_with_memory(const Plan& plan, const CompiledPlan& compiled, int rank) {
  check_step_request(plan, compiled, rank);
  StepCompiler compiler(plan, compiled, rank, /*keep_instructions=*/true);
  StepProgram program = compiler.compile();
  return {std::move(program), compiler.peaks()};
}

MemoryPeaks step_memory(const Plan& plan, const CompiledPlan& compiled, int rank) {
  check_step_request(plan, compiled, rank);
  StepCompiler compiler(plan, compiled, rank, /*keep_instructions=*/false);
  compiler.compile();
  return compiler.peaks();
}

bool step_memory_within(const Plan& plan, const CompiledPlan& compiled, int rank, int64_t limit_bytes) {
  check_step_request(plan, compiled, rank);
  StepCompiler compiler(plan, compiled, rank, /*keep_instructions=*/false);
  compiler.stop_above(limit_bytes);
  try {
    compiler.compile();
  } catch (const MemoryLimitReached&) {
    return false;
  }
  return true;
}

}  // namespace splitbrain::plans
