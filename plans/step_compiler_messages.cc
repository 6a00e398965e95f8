// The step compiler's messages between pipeline stages: a pass's receives posted together before
// it (step_compiler_internal.h says when and in what order), a tensor from an earlier stage
// received once and shared by its readers here, outputs sent on to later stages, gradients
// received back and handed back (summed over this stage's readers first), each send waited for
// before the next on its edge.

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <utility>
#include <vector>

#include "plans/plan_error.h"
#include "plans/step_compiler_internal.h"

namespace splitbrain::plans::detail {
namespace {

// The instructions, in the order of their keys (stable: equal keys keep their order).
template <class Key>
std::vector<StepInstruction> ordered_by_key(std::vector<std::pair<Key, StepInstruction>> keyed) {
  std::ranges::stable_sort(keyed, {}, [](const auto& entry) { return entry.first; });
  std::vector<StepInstruction> instructions;
  for (auto& entry : keyed) instructions.push_back(std::move(entry.second));
  return instructions;
}

}  // namespace

int StepCompiler::received_input(int v, size_t p, MicroBatchBuffers& state) {
  const InputTransfer& transfer = compiled_.layers[static_cast<size_t>(v)].inputs[p];
  const auto known = state.received.find(transfer.producer);
  if (known != state.received.end()) {
    writer_.hold(known->second);
    return known->second;
  }
  const auto posted = state.posted_inputs.find(transfer.producer);
  if (posted == state.posted_inputs.end()) {
    throw PlanError(fmt::format("step program: layer {} reads layer {} of another stage before it is received",
                                net_.layer(v).name, net_.layer(transfer.producer).name));
  }
  const int input = posted->second;
  state.posted_inputs.erase(posted);
  const bool read_again = plan_.recompute_activations || facts_.last_local_consumer(transfer.producer) != v;
  if (read_again) {
    state.received[transfer.producer] = input;
    writer_.hold(input);
  }
  return input;
}

void StepCompiler::send_forward(int producer, int micro, int buffer) {
  for (int consumer : net_.layer(producer).consumers) {
    const CompiledLayer& layer = compiled_.layers[static_cast<size_t>(consumer)];
    for (size_t p = 0; p < layer.inputs.size(); ++p) {
      const InputTransfer& transfer = layer.inputs[p];
      if (transfer.producer != producer || !transfer.forward_send) continue;
      writer_.hold(buffer);
      send(consumer, static_cast<int>(p), /*backward=*/false, micro, buffer, *transfer.forward_send);
    }
  }
}

void StepCompiler::send(int consumer, int index, bool backward, int micro, int buffer, const Collective& message) {
  const Edge edge{consumer, index, backward};
  if (const auto previous = pending_sends_.find(edge); previous != pending_sends_.end()) {
    writer_.wait_and_release(previous->second);
    pending_sends_.erase(previous);
  }
  pending_sends_[edge] = writer_.emit({.op = StepOp::send,
                                       .stream = Stream::communication,
                                       .layer = consumer,
                                       .micro_batch = micro,
                                       .index = index,
                                       .reads = {buffer},
                                       .collectives = {message}});
}

std::vector<std::pair<int, int>> StepCompiler::gradient_messages_of(int v) const {
  std::vector<std::pair<int, int>> messages;
  for (int consumer : net_.layer(v).consumers) {
    const CompiledLayer& later = compiled_.layers[static_cast<size_t>(consumer)];
    for (size_t p = 0; p < later.inputs.size(); ++p) {
      if (later.inputs[p].producer == v && later.inputs[p].backward_send) messages.emplace_back(consumer, p);
    }
  }
  return messages;
}

void StepCompiler::take_received_gradients(int v, int micro, MicroBatchBuffers& state) {
  int& output_grad = state.output_grads[static_cast<size_t>(v)];
  for (const auto& [consumer, p] : gradient_messages_of(v)) {
    const auto posted = state.posted_gradients.find({consumer, p});
    if (posted == state.posted_gradients.end()) {
      throw std::logic_error(fmt::format("step program: the gradient of layer {} from {} was not received",
                                         net_.layer(v).name, net_.layer(consumer).name));
    }
    const int target = posted->second;
    state.posted_gradients.erase(posted);
    if (output_grad < 0) {
      output_grad = target;
    } else {
      emit_kept([&] {
        return StepInstruction{
            .op = StepOp::accumulate, .layer = v, .micro_batch = micro, .reads = {target}, .writes = {output_grad}};
      });
      writer_.drop(target);
    }
  }
}

MicroBatchBuffers& StepCompiler::state_of(const PipelinePass& pass, std::vector<MicroBatchBuffers>& states) const {
  return states[static_cast<size_t>((pass.chunk / plan_.stage_count()) * plan_.micro_batches + pass.micro_batch)];
}

void StepCompiler::post_receives_ahead(const ReceivesAhead& schedule, size_t next, std::vector<bool>& posted,
                                       std::vector<MicroBatchBuffers>& states) {
  const std::vector<PipelinePass>& passes = schedule.passes;
  std::vector<size_t> ahead;
  if (!posted[next]) ahead.push_back(next);
  if (receives_next_pass_ahead(schedule.schedule, schedule.warmup, passes, next) && !posted[next + 1]) {
    ahead.push_back(next + 1);
  }
  std::vector<StepInstruction> receives;
  for (const size_t i : ahead) {
    posted[i] = true;
    const PipelinePass& pass = passes[i];
    MicroBatchBuffers& state = state_of(pass, states);
    const std::vector<int>& layers = facts_.chunk_layers(pass.chunk);
    if (pass.kind == PassKind::forward) reset(state);  // its buffers start here
    std::vector<StepInstruction> mine = pass.kind == PassKind::forward
                                            ? forward_receives(layers, pass.micro_batch, state)
                                            : backward_receives(layers, pass.micro_batch, state);
    std::ranges::move(mine, std::back_inserter(receives));
  }
  emit_receive_group(std::move(receives));
}

std::vector<StepInstruction> StepCompiler::forward_receives(const std::vector<int>& layers, int micro,
                                                            MicroBatchBuffers& state) {
  std::vector<std::pair<int, StepInstruction>> by_producer;
  for (int v : layers) {
    const std::vector<InputTransfer>& inputs = compiled_.layers[static_cast<size_t>(v)].inputs;
    for (size_t p = 0; p < inputs.size(); ++p) {
      const InputTransfer& transfer = inputs[p];
      if (!transfer.from_other_stage || !transfer.forward_send || state.posted_inputs.contains(transfer.producer))
        continue;
      const int input =
          activation(transfer.forward_send->buffer_bytes, BufferRole::received, v, static_cast<int>(p), micro);
      state.posted_inputs[transfer.producer] = input;
      by_producer.emplace_back(transfer.producer,
                               receive(v, static_cast<int>(p), micro, input, *transfer.forward_send));
    }
  }
  return ordered_by_key(std::move(by_producer));
}

std::vector<StepInstruction> StepCompiler::backward_receives(const std::vector<int>& layers, int micro,
                                                             MicroBatchBuffers& state) {
  std::vector<std::pair<std::pair<int, int>, StepInstruction>> by_sender;  // (-consumer, position)
  for (int v : layers) {
    for (const auto& [consumer, p] : gradient_messages_of(v)) {
      const Collective& message =
          *compiled_.layers[static_cast<size_t>(consumer)].inputs[static_cast<size_t>(p)].backward_send;
      const int target = working_buffer(message.buffer_bytes, BufferRole::received_gradient, v, -1, micro);
      state.posted_gradients[{consumer, p}] = target;
      by_sender.emplace_back(std::pair{-consumer, p}, receive(consumer, p, micro, target, message));
    }
  }
  return ordered_by_key(std::move(by_sender));
}

void StepCompiler::emit_receive_group(std::vector<StepInstruction> receives) {
  for (size_t k = 0; k < receives.size(); ++k) {
    receives[k].posted_with_next = k + 1 < receives.size();
    if (writer_.keeps_instructions()) writer_.emit(std::move(receives[k]));
  }
}

void StepCompiler::hand_back_gradient(int v, size_t p, int micro, int grad, MicroBatchBuffers& state) {
  const InputTransfer& transfer = compiled_.layers[static_cast<size_t>(v)].inputs[p];
  const int u = transfer.producer;
  const std::vector<RedistributionStep>& steps = facts_.gradient_redistribution(v, p);
  int ready = grad;
  if (!steps.empty()) {
    ready = working_buffer(facts_.gradient_bytes_of_output(u), BufferRole::output_gradient, u, -1, micro);
    emit_kept([&] { return redistribution(v, static_cast<int>(p), micro, grad, ready, steps); });
    writer_.drop(grad);
  }
  if (transfer.from_other_stage) {
    // The readers here add up their gradients; the first reader (the last in backward) sends.
    int& sum = state.gradients_to_send.try_emplace(u, -1).first->second;
    add_gradient(u, micro, ready, sum);
    if (!transfer.backward_send) return;
    send(v, static_cast<int>(p), /*backward=*/true, micro, sum, *transfer.backward_send);
    state.gradients_to_send.erase(u);  // the send holds the sum until it is waited for
    return;
  }
  add_gradient(u, micro, ready, state.output_grads[static_cast<size_t>(u)]);
}

void StepCompiler::add_gradient(int u, int micro, int ready, int& sum) {
  if (sum < 0) {
    sum = ready;
    return;
  }
  emit_kept([&] {
    return StepInstruction{
        .op = StepOp::accumulate, .layer = u, .micro_batch = micro, .reads = {ready}, .writes = {sum}};
  });
  writer_.drop(ready);
}

}  // namespace splitbrain::plans::detail
