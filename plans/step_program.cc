#include "plans/step_program.h"

#include "plans/op_sharding.h"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>
#include <system_error>

namespace splitbrain::plans {

std::string_view memory_category_name(MemoryCategory category) {
  switch (category) {
    case MemoryCategory::params:
      return "params";
    case MemoryCategory::grads:
      return "grads";
    case MemoryCategory::optimizer:
      return "optimizer";
    case MemoryCategory::activations:
      return "activations";
    case MemoryCategory::buffers:
      return "buffers";
  }
  return "?";
}

std::string buffer_name(const model::Model& net, const StepBuffer& b) {
  const std::string layer = b.layer >= 0 ? net.layer(b.layer).name : std::string();
  const std::string micro = b.micro_batch >= 0 ? fmt::format(" mb{}", b.micro_batch) : std::string();
  switch (b.role) {
    case BufferRole::output:
      return fmt::format("{}.out{}", layer, micro);
    case BufferRole::input_copy:
      return fmt::format("{}.in{}{}", layer, b.index, micro);
    case BufferRole::received:
      return fmt::format("{}.in{}{} received", layer, b.index, micro);
    case BufferRole::kept_by_op:
      return fmt::format("{}.kept{}", layer, micro);
    case BufferRole::output_gradient:
      return fmt::format("{}.out grad{}", layer, micro);
    case BufferRole::received_gradient:
      return fmt::format("{}.out grad{} received", layer, micro);
    case BufferRole::input_gradient:
      return fmt::format("{}.in{} grad{}", layer, b.index, micro);
    case BufferRole::gathered_parameters:
      return fmt::format("{}.params gathered{}", layer, micro);
    case BufferRole::whole_parameter:
      return fmt::format("{}.param{} whole{}", layer, b.index, micro);
    case BufferRole::parameter:
      return fmt::format("{}.param{}", layer, b.index);
    case BufferRole::parameter_gradient:
      return fmt::format("{}.param{} grad", layer, b.index);
    case BufferRole::optimizer_state:
      return fmt::format("{}.param{} state", layer, b.index);
    case BufferRole::whole_parameter_gradient:
      return fmt::format("{}.param{} grad (whole)", layer, b.index);
    case BufferRole::bucket:
      return fmt::format("bucket {}", b.bucket);
    case BufferRole::reduced_slice:
      return fmt::format("bucket {} reduced slice", b.bucket);
    case BufferRole::parameter_slice:
      return fmt::format("bucket {} param slice", b.bucket);
    case BufferRole::optimizer_slice:
      return fmt::format("bucket {} state slice", b.bucket);
    case BufferRole::gradient_slice:
      return fmt::format("bucket {} grad slice", b.bucket);
    case BufferRole::gathered_bucket:
      return fmt::format("bucket {} gathered params", b.bucket);
    case BufferRole::tied_gradient:
      return fmt::format("{}.param0 grad from the other stage", layer);
  }
  return "?";
}

bool allocated_zeroed(const model::Model& net, const StepBuffer& buffer) {
  switch (buffer.role) {
    case BufferRole::output:
      return net.layer(buffer.layer).kind != model::OpKind::input;
    case BufferRole::input_copy:
    case BufferRole::received:
    case BufferRole::received_gradient:
    case BufferRole::gathered_parameters:
    case BufferRole::bucket:
    case BufferRole::reduced_slice:
    case BufferRole::parameter_slice:
    case BufferRole::gathered_bucket:
    case BufferRole::tied_gradient:
    case BufferRole::kept_by_op:  // the op's own storage, made by the op
      return false;
    default:
      return true;
  }
}

std::string_view step_op_name(StepOp op) {
  switch (op) {
    case StepOp::alloc:
      return "alloc";
    case StepOp::free:
      return "free";
    case StepOp::load_input:
      return "load_input";
    case StepOp::forward:
      return "forward";
    case StepOp::recompute:
      return "recompute";
    case StepOp::backward:
      return "backward";
    case StepOp::redistribute:
      return "redistribute";
    case StepOp::accumulate:
      return "accumulate";
    case StepOp::send:
      return "send";
    case StepOp::recv:
      return "recv";
    case StepOp::wait:
      return "wait";
    case StepOp::pack:
      return "pack";
    case StepOp::unpack:
      return "unpack";
    case StepOp::reduce:
      return "reduce";
    case StepOp::optimizer:
      return "optimizer";
    case StepOp::gather_params:
      return "gather_params";
    case StepOp::loss_out:
      return "loss_out";
  }
  return "?";
}

std::string instruction_label(const model::Model& net, StepOp op, int layer, int bucket, int micro_batch) {
  std::string label(step_op_name(op));
  if (layer >= 0) label += " " + net.layer(layer).name;
  if (bucket >= 0) label += fmt::format(" bucket {}", bucket);
  if (micro_batch >= 0) label += fmt::format(" mb{}", micro_batch);
  return label;
}

LabelParts split_instruction_label(std::string_view label) {
  constexpr std::string_view kMicroBatch = " mb";
  const size_t at = label.rfind(kMicroBatch);
  if (at != std::string_view::npos && at + kMicroBatch.size() < label.size()) {
    const std::string_view digits = label.substr(at + kMicroBatch.size());
    int micro_batch = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), micro_batch);
    if (error == std::errc() && end == digits.data() + digits.size()) {
      return {std::string(label.substr(0, at)), micro_batch};
    }
  }
  return {std::string(label), -1};
}

std::vector<Collective> collectives_of(const StepInstruction& instruction) {
  std::vector<Collective> all;
  for (const RedistributionStep& step : instruction.steps) {
    if (step.collective) all.push_back(*step.collective);
  }
  all.insert(all.end(), instruction.collectives.begin(), instruction.collectives.end());
  return all;
}

std::string_view stream_name(Stream stream) { return stream == Stream::compute ? "compute" : "communication"; }

std::vector<int64_t> redistributed_shape(const model::Model& net, const StepInstruction& instruction,
                                         int64_t micro_batch) {
  const model::Layer& layer = net.layer(instruction.layer);
  return activation_shape(net.layer(layer.inputs.at(static_cast<size_t>(instruction.index))), micro_batch);
}

bool waited_at_once(const StepProgram& program, int instruction) {
  const auto next = static_cast<size_t>(instruction) + 1;
  return next < program.instructions.size() && program.instructions[next].op == StepOp::wait &&
         program.instructions[next].waits_for == instruction;
}

const PassOperands& operands_of(const StepProgram& program, const StepInstruction& instruction) {
  if (instruction.operands < 0 || static_cast<size_t>(instruction.operands) >= program.pass_operands.size()) {
    throw std::logic_error(
        fmt::format("step program: instruction of layer {} has no pass operands", instruction.layer));
  }
  return program.pass_operands[static_cast<size_t>(instruction.operands)];
}

bool moves_gradient(const StepProgram& program, const StepInstruction& instruction) {
  const SmallIndexList& buffers = instruction.op == StepOp::recv ? instruction.writes : instruction.reads;
  if (buffers.empty()) return false;
  switch (program.buffers.at(static_cast<size_t>(buffers.front())).role) {
    case BufferRole::output_gradient:
    case BufferRole::received_gradient:
    case BufferRole::input_gradient:
      return true;
    default:
      return false;
  }
}

std::vector<PipelinePass> pass_sequence(const StepProgram& program) {
  std::vector<PipelinePass> passes;
  for (const StepInstruction& i : program.instructions) {
    PassKind kind = PassKind::forward;
    if (i.op == StepOp::recompute || i.op == StepOp::backward) {
      kind = PassKind::backward;
    } else if (i.op != StepOp::forward) {
      continue;
    }
    const PipelinePass pass{kind, i.micro_batch, program.chunk_of_layer.at(static_cast<size_t>(i.layer))};
    if (passes.empty() || passes.back() != pass) passes.push_back(pass);
  }
  return passes;
}

std::vector<std::vector<int>> buckets_started_after(const StepProgram& program, int layers) {
  std::vector<std::vector<int>> started(static_cast<size_t>(layers));
  int last_backward = -1;
  for (int n = 0; n < program.passes_end; ++n) {
    const StepInstruction& i = program.instructions[static_cast<size_t>(n)];
    if (i.op == StepOp::backward) last_backward = i.layer;
    if (i.op == StepOp::reduce && last_backward >= 0) started[static_cast<size_t>(last_backward)].push_back(i.bucket);
  }
  return started;
}

}  // namespace splitbrain::plans
