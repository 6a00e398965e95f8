#include "exec/runtime/step_interpreter.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "exec/comm/progress_watchdog.h"
#include "exec/runtime/tied_parameters.h"
#include "model/statistics.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {
namespace {

using Clock = std::chrono::steady_clock;
using plans::BufferRole;
using plans::StepInstruction;
using plans::StepOp;

}  // namespace

StepInterpreter::StepInterpreter(plans::StepProgram program, RankResources resources)
    : program_(std::move(program)),
      r_(resources),
      buffers_(program_, r_.compiled, r_.contexts, r_.parameters, r_.zero, r_.device.memory(), r_.memory, r_.precision),
      clock_(r_.device.clock().make_step_clock()) {}

StepRun StepInterpreter::run(int64_t step, BatchSource& data, const LogitsObserver& on_logits) {
  step_ = step;
  data_ = &data;
  on_logits_ = on_logits ? &on_logits : nullptr;
  queued_losses_.clear();
  copied_inputs_.clear();
  buffers_.bind_model_states();
  StepRun result;
  const auto start = Clock::now();
  result.started_at_seconds = std::chrono::duration<double>(start.time_since_epoch()).count();
  // A mark after each timed instruction, read once at the end: a device with a queue runs the
  // step without the host waiting in between. An instruction's interval runs from the previous
  // mark, so it includes the allocations before it.
  clock_->start();
  std::vector<int> timed;                // the instruction of each mark
  std::vector<double> host_end_seconds;  // when the host had queued it
  timed.reserve(program_.instructions.size());
  host_end_seconds.reserve(program_.instructions.size());
  std::optional<int64_t> waits = r_.device.clock().host_waits();  // none: the device queues nothing
  if (waits) result.host_wait_instructions.emplace();
  for (size_t i = 0; i < program_.instructions.size(); ++i) {
    const StepInstruction& instruction = program_.instructions[i];
    execute(static_cast<int>(i));
    if (waits) {
      const int64_t before = *std::exchange(waits, r_.device.clock().host_waits());
      if (*waits > before) result.host_wait_instructions->push_back(static_cast<int>(i));
    }
    comm::note_progress();  // for the watchdog (exec/comm/progress_watchdog.h)
    if (instruction.op == StepOp::alloc || instruction.op == StepOp::free) continue;
    clock_->mark();
    timed.push_back(static_cast<int>(i));
    host_end_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  // Reading the marks waits for the device's queue: the step's work, the losses' copies included.
  const std::vector<double> marks = clock_->seconds_since_start();
  for (const auto& loss : queued_losses_) result.loss_sum += loss();
  queued_losses_.clear();
  copied_inputs_.clear();
  result.seconds.total = std::chrono::duration<double>(Clock::now() - start).count();
  double previous = 0.0;
  for (size_t m = 0; m < timed.size(); ++m) {
    const StepInstruction& instruction = program_.instructions[static_cast<size_t>(timed[m])];
    const double seconds = marks[m] - previous;
    const Phase phase = phase_of(instruction);
    StepSeconds& s = result.seconds;
    double* slot = nullptr;
    switch (phase) {
      case Phase::forward:
        slot = &s.compute_forward;
        break;
      case Phase::backward:
        slot = &s.compute_backward;
        break;
      case Phase::communication:
        slot = &s.communication;
        break;
      case Phase::stage_waiting:
        slot = &s.stage_waiting;
        break;
      case Phase::gradient_sync:
        slot = &s.gradient_sync;
        break;
      case Phase::optimizer:
        slot = &s.optimizer;
        break;
      case Phase::none:
        break;
    }
    if (slot != nullptr) {
      *slot += seconds;
      if (seconds >= 1e-6) {  // skips what did nothing (a wait already complete, say)
        result.timeline.push_back(
            {label_of(instruction),
             phase == Phase::communication || phase == Phase::stage_waiting || phase == Phase::gradient_sync, previous,
             seconds, host_end_seconds[m]});
      }
    }
    previous = marks[m];
  }
  if (!send_ids_.empty() || !pending_reductions_.empty()) {
    throw std::logic_error("step program: communication left without a wait at the end of the step");
  }
  buffers_.check_all_released();
  result.host_runs_ahead = clock_->host_runs_ahead();
  data_ = nullptr;
  on_logits_ = nullptr;
  return result;
}

StepInterpreter::Phase StepInterpreter::phase_of(const StepInstruction& instruction) const {
  switch (instruction.op) {
    case StepOp::forward:
      return Phase::forward;
    case StepOp::recompute:
    case StepOp::backward:
      return Phase::backward;
    case StepOp::send:
    case StepOp::recv:
      return Phase::stage_waiting;
    case StepOp::redistribute:
    case StepOp::accumulate:
    case StepOp::load_input:  // host transfers, where the simulator prices them too
    case StepOp::loss_out:
      return Phase::communication;
    case StepOp::wait:
      switch (program_.instructions[static_cast<size_t>(instruction.waits_for)].op) {
        case StepOp::reduce:
          return Phase::gradient_sync;
        case StepOp::send:
        case StepOp::recv:
          return Phase::stage_waiting;
        default:
          return Phase::communication;
      }
    case StepOp::pack:
      return buffers_.describe(instruction.writes.at(0)).role == BufferRole::parameter_slice ? Phase::optimizer
                                                                                             : Phase::gradient_sync;
    case StepOp::unpack:
      return instruction.bucket >= 0 ? Phase::gradient_sync : Phase::communication;
    case StepOp::reduce:
    case StepOp::gather_params:
      return Phase::gradient_sync;
    case StepOp::optimizer:
      return Phase::optimizer;
    default:
      return Phase::none;
  }
}

std::string StepInterpreter::label_of(const StepInstruction& instruction) const {
  return plans::instruction_label(*r_.plan.model, instruction.op, instruction.layer, instruction.bucket,
                                  instruction.micro_batch);
}

void StepInterpreter::execute(int index) {
  const StepInstruction& instruction = program_.instructions[static_cast<size_t>(index)];
  switch (instruction.op) {
    case StepOp::alloc:
      buffers_.allocate(instruction.buffer);
      return;
    case StepOp::free:
      if (buffers_.describe(instruction.buffer).role == BufferRole::kept_by_op) {
        const plans::StepBuffer& kept = buffers_.describe(instruction.buffer);
        release_kept(kept.layer, kept.micro_batch);
      }
      buffers_.release(instruction.buffer);
      return;
    case StepOp::load_input:
      load_input(instruction);
      return;
    case StepOp::forward:
    case StepOp::recompute:
      forward(instruction);
      return;
    case StepOp::backward:
      backward(instruction);
      return;
    case StepOp::redistribute:
      redistribute(instruction);
      return;
    case StepOp::accumulate:
      r_.device.memory().add(buffers_.at(instruction.reads.at(0)), buffers_.at(instruction.writes.at(0)));
      if (r_.precision.bf16) r_.device.memory().round_to_bf16(buffers_.at(instruction.writes.at(0)));
      return;
    case StepOp::send:
      send(index, instruction);
      return;
    case StepOp::recv:
      receive(instruction);
      return;
    case StepOp::wait:
      wait(instruction);
      return;
    case StepOp::pack:
      pack(instruction);
      return;
    case StepOp::unpack:
      unpack(instruction);
      return;
    case StepOp::reduce:
      reduce(index, instruction);
      return;
    case StepOp::optimizer:
      update(instruction);
      return;
    case StepOp::gather_params:
      gather_bucket(instruction);
      return;
    case StepOp::loss_out: {
      queued_losses_.push_back(r_.ops[static_cast<size_t>(instruction.layer)]->download_loss(instruction.micro_batch));
      if (on_logits_ != nullptr) {
        const DeviceArray& logits = buffers_.at(instruction.reads.at(1));
        comm::LocalArray host{logits.shape(), std::vector<float>(static_cast<size_t>(logits.elements()))};
        r_.device.host_link().download(logits, host.values);
        (*on_logits_)(instruction.micro_batch, host);
      }
      return;
    }
  }
}

void StepInterpreter::load_input(const StepInstruction& instruction) {
  const OpContext& ctx = r_.contexts[static_cast<size_t>(instruction.layer)];
  // The batch block this rank holds, read whole on the host; channel or height splits are cut
  // there too, so one upload brings exactly the rank's block. The upload is queued: the host goes
  // on queuing the step while it waits its turn, from the data source's block (held through the
  // step) or from a copy kept until the step's end.
  std::vector<int64_t> whole = ctx.output_global_shape;
  whole[0] = ctx.output_shape[0];
  const int64_t first = instruction.micro_batch * r_.compiled.micro_batch + ctx.output_offset[0];
  DeviceArray& into = buffers_.at(instruction.writes.at(0));
  if (whole == ctx.output_shape) {
    const std::span<const float> held = data_->images_held(step_, first, whole[0]);
    if (!held.empty()) {
      r_.device.host_link().upload_queued(held, into);
      if (r_.precision.rounds_output(r_.plan.model->layer(instruction.layer))) r_.device.memory().round_to_bf16(into);
      return;
    }
  }
  comm::LocalArray samples{whole, std::vector<float>(static_cast<size_t>(comm::element_count(whole)))};
  data_->images(step_, first, whole[0], samples.values.data());
  if (whole != ctx.output_shape) {
    std::vector<int64_t> offset = ctx.output_offset;
    offset[0] = 0;
    samples = comm::sub_array(samples, offset, ctx.output_shape);
  }
  r_.device.host_link().upload_queued(copied_inputs_.emplace_back(std::move(samples.values)), into);
  if (r_.precision.rounds_output(r_.plan.model->layer(instruction.layer))) r_.device.memory().round_to_bf16(into);
}

int64_t StepInterpreter::kept_bytes(int layer) const {
  const LayerOp& op = *r_.ops[static_cast<size_t>(layer)];
  // A bf16 run keeps values of the model's type in fp32 storage (mixed_precision.h): counted at 2 bytes.
  return op.kept_bytes() - op.kept_model_type_elements() * (4 - r_.precision.activation_bytes());
}

void StepInterpreter::count_kept_change(int layer, int64_t kept_before) {
  const int64_t kept_after = kept_bytes(layer);
  if (kept_after > kept_before) r_.memory.allocate(MemoryCategory::activations, kept_after - kept_before);
  if (kept_after < kept_before) r_.memory.release(MemoryCategory::activations, kept_before - kept_after);
}

void StepInterpreter::release_kept(int layer, int micro) {
  LayerOp& op = *r_.ops[static_cast<size_t>(layer)];
  const int64_t kept = kept_bytes(layer);
  op.release(micro);
  count_kept_change(layer, kept);
}

void StepInterpreter::forward(const StepInstruction& instruction) {
  const int v = instruction.layer;
  const plans::PassOperands& operands = plans::operands_of(program_, instruction);
  std::vector<const DeviceArray*> inputs;
  for (int b : operands.inputs) inputs.push_back(&buffers_.at(b));
  // The op reads its parameters through the layer's model states, where the program's gathered
  // parameters are bound (and a tied head finds its table).
  const ParameterViews params = parameter_views(r_.device.memory(), r_.plan, r_.compiled, r_.rank, r_.parameters, v);
  LayerOp& op = *r_.ops[static_cast<size_t>(v)];
  const int64_t kept = kept_bytes(v);
  r_.device.kernels().forward(op, instruction.micro_batch, step_, inputs, params.values, buffers_.at(operands.output));
  if (r_.precision.rounds_output(r_.plan.model->layer(v)))
    r_.device.memory().round_to_bf16(buffers_.at(operands.output));
  count_kept_change(v, kept);
  r_.link.progress();
}

void StepInterpreter::backward(const StepInstruction& instruction) {
  const int v = instruction.layer;
  const int micro = instruction.micro_batch;
  const plans::PassOperands& operands = plans::operands_of(program_, instruction);
  const OpContext& ctx = r_.contexts[static_cast<size_t>(v)];
  // Released tensors: the op needs only their shapes.
  std::vector<std::unique_ptr<ReleasedArray>> released;
  auto gone = [&](const std::vector<int64_t>& shape) {
    return released.emplace_back(std::make_unique<ReleasedArray>(shape)).get();
  };
  std::vector<const DeviceArray*> inputs;
  for (size_t p = 0; p < operands.inputs.size(); ++p) {
    inputs.push_back(operands.inputs[p] >= 0 ? &buffers_.at(operands.inputs[p]) : gone(ctx.input_shapes[p]));
  }
  const DeviceArray* output = operands.output >= 0 ? &buffers_.at(operands.output) : gone(ctx.output_shape);
  std::vector<DeviceArray*> input_grads;
  for (int b : operands.input_gradients) {
    if (b >= 0) input_grads.push_back(&buffers_.at(b));
  }
  const ParameterViews params = parameter_views(r_.device.memory(), r_.plan, r_.compiled, r_.rank, r_.parameters, v);
  r_.device.kernels().backward(*r_.ops[static_cast<size_t>(v)], micro, inputs, *output,
                               buffers_.at(operands.output_gradient), params.values, input_grads, params.grads);
  params.add_tied_gradient(r_.device.memory());
  if (r_.precision.bf16) {
    for (DeviceArray* grad : input_grads) r_.device.memory().round_to_bf16(*grad);
  }
  if (r_.precision.bf16_gradients) {
    for (DeviceArray* grad : params.grads) r_.device.memory().round_to_bf16(*grad);
    if (params.table_grad != nullptr) r_.device.memory().round_to_bf16(*params.table_grad);
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
  const model::Layer& layer = r_.plan.model->layer(instruction.layer);
  const auto global = plans::redistributed_shape(*r_.plan.model, instruction, r_.compiled.micro_batch);
  const bool gradient = plans::moves_gradient(program_, instruction);
  r_.device.collectives().redistribute(r_.communicator, instruction.steps, global, buffers_.at(instruction.reads.at(0)),
                                       buffers_.at(instruction.writes.at(0)),
                                       layer.name + (gradient ? "/backward" : "/forward"));
}

void StepInterpreter::gather_layer_parameters(const StepInstruction& instruction) {
  // ZeRO 3: this rank's slice of a layer's parameters, gathered whole (padded) over the group:
  // the pass's layer's own or, for a tied head, its table's (the layer its buffer belongs to).
  const auto v = static_cast<size_t>(buffers_.describe(instruction.writes.at(0)).layer);
  const ZeroBucketSlice& z = r_.zero.buckets.at(static_cast<size_t>(r_.zero.bucket_of_layer[v]));
  const auto position = static_cast<size_t>(r_.zero.position_in_bucket[v]);
  const int64_t slice = z.layer_slices[position];
  const std::unique_ptr<DeviceArray> mine = r_.device.memory().allocate({slice}, false);
  r_.device.memory().copy(buffers_.at(instruction.reads.at(0)), z.layer_offsets[position], *mine, 0, slice);
  r_.device.collectives().run_collectives(r_.communicator, std::span(&instruction.collectives.at(0), 1), *mine,
                                          buffers_.at(instruction.writes.at(0)),
                                          r_.plan.model->layer(instruction.layer).name + "/parameter_gather");
}

void StepInterpreter::send(int index, const StepInstruction& instruction) {
  const bool gradient = plans::moves_gradient(program_, instruction);
  const int tag = r_.link.tag(instruction.layer, instruction.index, instruction.micro_batch, gradient);
  // A tied table's gradient swapped between stages belongs to the gradient synchronisation.
  const plans::BufferRole role = buffers_.describe(instruction.reads.at(0)).role;
  const bool parameter_gradient =
      role == plans::BufferRole::parameter_gradient || role == plans::BufferRole::whole_parameter_gradient;
  const char* phase = parameter_gradient ? "/gradient_sync" : gradient ? "/backward" : "/forward";
  send_ids_[index] = r_.link.send(buffers_.at(instruction.reads.at(0)), instruction.collectives.at(0), tag,
                                  r_.plan.model->layer(instruction.layer).name + phase);
}

void StepInterpreter::receive(const StepInstruction& instruction) {
  const bool gradient = plans::moves_gradient(program_, instruction);
  const int tag = r_.link.tag(instruction.layer, instruction.index, instruction.micro_batch, gradient);
  r_.link.receive(buffers_.at(instruction.writes.at(0)), instruction.collectives.at(0), tag,
                  instruction.posted_with_next);
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
