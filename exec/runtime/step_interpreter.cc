#include "exec/runtime/step_interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "exec/comm/progress_watchdog.h"
#include "exec/comm/redistribution_runner.h"
#include "exec/runtime/flat_packing.h"
#include "exec/runtime/tied_parameters.h"
#include "model/statistics.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {
namespace {

using Clock = std::chrono::steady_clock;
using plans::BufferRole;
using plans::StepInstruction;
using plans::StepOp;

// The shape of a released tensor, without its values: a backward that needs only its shape gets
// this, and one that read the values would fail loudly (null data) rather than silently.
comm::LocalArray shape_only(const std::vector<int64_t>& shape) { return comm::LocalArray{shape, {}}; }

}  // namespace

StepInterpreter::StepInterpreter(plans::StepProgram program, RankResources resources)
    : program_(std::move(program)),
      r_(resources),
      buffers_(program_, r_.compiled, r_.contexts, r_.parameters, r_.zero, r_.memory) {}

StepRun StepInterpreter::run(int64_t step, BatchSource& data, const LogitsObserver& on_logits) {
  step_ = step;
  data_ = &data;
  on_logits_ = on_logits ? &on_logits : nullptr;
  loss_sum_ = 0.0;
  buffers_.bind_model_states();
  StepRun result;
  const auto start = Clock::now();
  auto mark = start;  // where the time of the next timed instruction starts (allocations included)
  for (size_t i = 0; i < program_.instructions.size(); ++i) {
    const StepInstruction& instruction = program_.instructions[i];
    execute(static_cast<int>(i));
    comm::note_progress();  // for the watchdog (exec/comm/progress_watchdog.h)
    if (instruction.op == StepOp::alloc || instruction.op == StepOp::free) continue;
    const auto now = Clock::now();
    const double seconds = std::chrono::duration<double>(now - mark).count();
    const Phase phase = phase_of(instruction);
    StepSeconds& s = result.seconds;
    double* slot = nullptr;
    switch (phase) {
      case Phase::forward: slot = &s.compute_forward; break;
      case Phase::backward: slot = &s.compute_backward; break;
      case Phase::communication: slot = &s.communication; break;
      case Phase::gradient_sync: slot = &s.gradient_sync; break;
      case Phase::optimizer: slot = &s.optimizer; break;
      case Phase::none: break;
    }
    if (slot != nullptr) {
      *slot += seconds;
      if (seconds >= 1e-6) {  // skips what did nothing (a wait already complete, say)
        result.timeline.push_back({label_of(instruction),
                                   phase == Phase::communication || phase == Phase::gradient_sync,
                                   std::chrono::duration<double>(mark - start).count(), seconds});
      }
    }
    mark = now;
  }
  result.seconds.total = std::chrono::duration<double>(Clock::now() - start).count();
  if (!send_ids_.empty() || !pending_reductions_.empty()) {
    throw std::logic_error("step program: communication left without a wait at the end of the step");
  }
  buffers_.check_all_released();
  result.loss_sum = loss_sum_;
  data_ = nullptr;
  on_logits_ = nullptr;
  return result;
}

StepInterpreter::Phase StepInterpreter::phase_of(const StepInstruction& instruction) const {
  switch (instruction.op) {
    case StepOp::forward: return Phase::forward;
    case StepOp::recompute:
    case StepOp::backward: return Phase::backward;
    case StepOp::redistribute:
    case StepOp::accumulate:
    case StepOp::send:
    case StepOp::recv: return Phase::communication;
    case StepOp::wait:
      return program_.instructions[static_cast<size_t>(instruction.waits_for)].op == StepOp::reduce
                 ? Phase::gradient_sync
                 : Phase::communication;
    case StepOp::pack:
      return buffers_.describe(instruction.writes.at(0)).role == BufferRole::parameter_slice ? Phase::optimizer
                                                                                            : Phase::gradient_sync;
    case StepOp::unpack: return instruction.bucket >= 0 ? Phase::gradient_sync : Phase::communication;
    case StepOp::reduce:
    case StepOp::gather_params: return Phase::gradient_sync;
    case StepOp::optimizer: return Phase::optimizer;
    default: return Phase::none;
  }
}

std::string StepInterpreter::label_of(const StepInstruction& instruction) const {
  std::string label(plans::step_op_name(instruction.op));
  if (instruction.layer >= 0) label += " " + r_.plan.model->layer(instruction.layer).name;
  if (instruction.bucket >= 0) label += fmt::format(" bucket {}", instruction.bucket);
  if (instruction.micro_batch >= 0) label += fmt::format(" mb{}", instruction.micro_batch);
  return label;
}

void StepInterpreter::execute(int index) {
  const StepInstruction& instruction = program_.instructions[static_cast<size_t>(index)];
  switch (instruction.op) {
    case StepOp::alloc: buffers_.allocate(instruction.buffer); return;
    case StepOp::free:
      if (buffers_.describe(instruction.buffer).role == BufferRole::kept_by_op) {
        const plans::StepBuffer& kept = buffers_.describe(instruction.buffer);
        release_kept(kept.layer, kept.micro_batch);
      }
      buffers_.release(instruction.buffer);
      return;
    case StepOp::load_input: load_input(instruction); return;
    case StepOp::forward:
    case StepOp::recompute: forward(instruction); return;
    case StepOp::backward: backward(instruction); return;
    case StepOp::redistribute: redistribute(instruction); return;
    case StepOp::accumulate: {
      const comm::LocalArray& from = buffers_.at(instruction.reads.at(0));
      comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
      check_same_size(into, from.values.size(), "a gradient's accumulation");
      for (size_t i = 0; i < from.values.size(); ++i) into.values[i] += from.values[i];
      return;
    }
    case StepOp::send: send(index, instruction); return;
    case StepOp::recv: receive(instruction); return;
    case StepOp::wait: wait(instruction); return;
    case StepOp::pack: pack(instruction); return;
    case StepOp::unpack: unpack(instruction); return;
    case StepOp::reduce: reduce(index, instruction); return;
    case StepOp::optimizer: update(instruction); return;
    case StepOp::gather_params: gather_bucket(instruction); return;
    case StepOp::loss_out: {
      loss_sum_ += r_.ops[static_cast<size_t>(instruction.layer)]->loss_sum(instruction.micro_batch);
      if (on_logits_ != nullptr) (*on_logits_)(instruction.micro_batch, buffers_.at(instruction.reads.at(1)));
      return;
    }
  }
}

void StepInterpreter::load_input(const StepInstruction& instruction) {
  const OpContext& ctx = r_.contexts[static_cast<size_t>(instruction.layer)];
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  // The batch block this rank holds, read whole; channel or height splits are cut afterwards.
  std::vector<int64_t> whole = ctx.output_global_shape;
  whole[0] = ctx.output_shape[0];
  const int64_t first = instruction.micro_batch * r_.compiled.micro_batch + ctx.output_offset[0];
  if (whole == ctx.output_shape) {
    data_->images(step_, first, whole[0], into.values.data());
    return;
  }
  comm::LocalArray samples{whole, std::vector<float>(static_cast<size_t>(comm::element_count(whole)))};
  data_->images(step_, first, whole[0], samples.values.data());
  std::vector<int64_t> offset = ctx.output_offset;
  offset[0] = 0;
  comm::LocalArray block = comm::to_floats(comm::sub_array(comm::to_bytes(samples), offset, ctx.output_shape));
  check_same_size(into, block.values.size(), "an input batch");
  into.values = std::move(block.values);
}

void StepInterpreter::count_kept_change(int layer, int64_t kept_before) {
  const int64_t kept_after = r_.ops[static_cast<size_t>(layer)]->kept_bytes();
  if (kept_after > kept_before) r_.memory.allocate(MemoryCategory::activations, kept_after - kept_before);
  if (kept_after < kept_before) r_.memory.release(MemoryCategory::activations, kept_before - kept_after);
}

void StepInterpreter::release_kept(int layer, int micro) {
  LayerOp& op = *r_.ops[static_cast<size_t>(layer)];
  const int64_t kept = op.kept_bytes();
  op.release(micro);
  count_kept_change(layer, kept);
}

void StepInterpreter::forward(const StepInstruction& instruction) {
  const int v = instruction.layer;
  const plans::PassOperands& operands = instruction.operands;
  std::vector<const comm::LocalArray*> inputs;
  for (int b : operands.inputs) inputs.push_back(&buffers_.at(b));
  // The op reads its parameters through the layer's model states, where the program's gathered
  // parameters are bound (and a tied head finds its table).
  const ParameterViews params = parameter_views(r_.plan, r_.compiled, r_.rank, r_.parameters, v);
  LayerOp& op = *r_.ops[static_cast<size_t>(v)];
  const int64_t kept = op.kept_bytes();
  op.forward(instruction.micro_batch, step_, inputs, params.values, buffers_.at(operands.output));
  count_kept_change(v, kept);
  r_.link.progress();
}

void StepInterpreter::backward(const StepInstruction& instruction) {
  const int v = instruction.layer;
  const int micro = instruction.micro_batch;
  const plans::PassOperands& operands = instruction.operands;
  const OpContext& ctx = r_.contexts[static_cast<size_t>(v)];
  // Released tensors: the op needs only their shapes.
  std::vector<comm::LocalArray> released;
  released.reserve(operands.inputs.size() + 1);
  std::vector<const comm::LocalArray*> inputs;
  for (size_t p = 0; p < operands.inputs.size(); ++p) {
    if (operands.inputs[p] >= 0) {
      inputs.push_back(&buffers_.at(operands.inputs[p]));
    } else {
      inputs.push_back(&released.emplace_back(shape_only(ctx.input_shapes[p])));
    }
  }
  const comm::LocalArray* output = operands.output >= 0 ? &buffers_.at(operands.output)
                                                        : &released.emplace_back(shape_only(ctx.output_shape));
  // The op writes input gradients into arrays it is handed by value: they move in and back out.
  std::vector<comm::LocalArray> input_grads;
  for (int b : operands.input_gradients) {
    if (b >= 0) input_grads.push_back(std::move(buffers_.at(b)));
  }
  const ParameterViews params = parameter_views(r_.plan, r_.compiled, r_.rank, r_.parameters, v);
  r_.ops[static_cast<size_t>(v)]->backward(micro, inputs, *output, buffers_.at(operands.output_gradient),
                                           params.values, input_grads, params.grads);
  params.add_tied_gradient();
  size_t next = 0;
  for (int b : operands.input_gradients) {
    if (b >= 0) buffers_.at(b) = std::move(input_grads[next++]);
  }
  if (operands.kept < 0) release_kept(v, micro);  // whatever the op kept without the program knowing
  for (auto& [instruction_index, pending] : pending_reductions_) pending->test();
  r_.link.progress();
}

void StepInterpreter::redistribute(const StepInstruction& instruction) {
  if (instruction.steps.empty()) {
    gather_layer_parameters(instruction);
    return;
  }
  const model::Model& net = *r_.plan.model;
  const model::Layer& layer = net.layer(instruction.layer);
  const int producer = layer.inputs.at(static_cast<size_t>(instruction.index));
  const auto global = plans::activation_shape(net.layer(producer), r_.compiled.micro_batch);
  const bool gradient = plans::moves_gradient(program_, instruction);
  comm::LocalArray& source = buffers_.at(instruction.reads.at(0));
  // A gradient has one reader, this instruction (the program frees it next): it moves.
  comm::LocalArray moved = gradient ? std::move(source) : source;
  comm::LocalArray result = comm::run_redistribution(r_.communicator, instruction.steps, global, std::move(moved),
                                                     layer.name + (gradient ? "/backward" : "/forward"));
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  check_same_size(into, result.values.size(), "a redistribution");
  into.values = std::move(result.values);
}

void StepInterpreter::gather_layer_parameters(const StepInstruction& instruction) {
  // ZeRO 3: this rank's slice of the layer's parameters, gathered whole (padded) over the group.
  const auto v = static_cast<size_t>(instruction.layer);
  const ZeroBucketSlice& z = r_.zero.buckets.at(static_cast<size_t>(r_.zero.bucket_of_layer[v]));
  const auto position = static_cast<size_t>(r_.zero.position_in_bucket[v]);
  const int64_t slice = z.layer_slices[position];
  const comm::LocalArray& slices = buffers_.at(instruction.reads.at(0));
  const auto first = slices.values.begin() + z.layer_offsets[position];
  const comm::LocalArray mine{{slice}, std::vector<float>(first, first + slice)};
  comm::LocalArray whole = r_.communicator.run(instruction.collectives.at(0), mine,
                                               r_.plan.model->layer(instruction.layer).name + "/parameter_gather");
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  check_same_size(into, whole.values.size(), "a parameter gather");
  into.values = std::move(whole.values);
}

void StepInterpreter::send(int index, const StepInstruction& instruction) {
  const bool gradient = plans::moves_gradient(program_, instruction);
  const int tag = r_.link.tag(instruction.layer, instruction.index, instruction.micro_batch, gradient);
  send_ids_[index] = r_.link.send(buffers_.at(instruction.reads.at(0)), instruction.collectives.at(0), tag,
                                  r_.plan.model->layer(instruction.layer).name + (gradient ? "/backward" : "/forward"));
}

void StepInterpreter::receive(const StepInstruction& instruction) {
  const bool gradient = plans::moves_gradient(program_, instruction);
  const int tag = r_.link.tag(instruction.layer, instruction.index, instruction.micro_batch, gradient);
  comm::LocalArray& into = buffers_.at(instruction.writes.at(0));
  into.values.resize(static_cast<size_t>(comm::element_count(into.shape)));
  r_.link.receive(into, instruction.collectives.at(0), tag);
}

void StepInterpreter::wait(const StepInstruction& instruction) {
  if (const auto send = send_ids_.find(instruction.waits_for); send != send_ids_.end()) {
    r_.link.wait(send->second);
    send_ids_.erase(send);
    return;
  }
  // A reduction already completed where it was run blocking (its wait follows it directly).
  if (const auto pending = pending_reductions_.find(instruction.waits_for); pending != pending_reductions_.end()) {
    pending->second->wait();
    pending_reductions_.erase(pending);
  }
}

}  // namespace splitbrain::exec
