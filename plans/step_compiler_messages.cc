// The step compiler's messages between pipeline stages: a tensor from an earlier stage received
// once and shared by its readers here, outputs sent on to later stages, gradients received back
// and handed back (summed over this stage's readers first), each send waited for before the next
// on its edge.

#include <fmt/format.h>

#include <utility>

#include "plans/plan_error.h"
#include "plans/step_compiler_internal.h"

namespace splitbrain::plans::detail {

int StepCompiler::received_input(int v, size_t p, int micro, MicroBatchBuffers& state) {
  const InputTransfer& transfer = compiled_.layers[static_cast<size_t>(v)].inputs[p];
  const auto known = state.received.find(transfer.producer);
  if (known != state.received.end()) {
    writer_.hold(known->second);
    return known->second;
  }
  if (!transfer.forward_send) {
    throw PlanError(fmt::format("step program: layer {} reads layer {} of another stage before it is received",
                                net_.layer(v).name, net_.layer(transfer.producer).name));
  }
  const int input =
      activation(transfer.forward_send->buffer_bytes, BufferRole::received, v, static_cast<int>(p), micro);
  emit_kept([&] { return receive(v, static_cast<int>(p), micro, input, *transfer.forward_send); });
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

void StepCompiler::receive_gradients(int v, int micro, int& output_grad) {
  for (int consumer : net_.layer(v).consumers) {
    const CompiledLayer& later = compiled_.layers[static_cast<size_t>(consumer)];
    for (size_t p = 0; p < later.inputs.size(); ++p) {
      const InputTransfer& transfer = later.inputs[p];
      if (transfer.producer != v || !transfer.backward_send) continue;
      const bool first = output_grad < 0;
      const int target =
          working_buffer(transfer.backward_send->buffer_bytes, BufferRole::received_gradient, v, -1, micro);
      emit_kept([&] { return receive(consumer, static_cast<int>(p), micro, target, *transfer.backward_send); });
      if (first) {
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
