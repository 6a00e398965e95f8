#include "exec/runtime/mixed_precision.h"

#include <fmt/format.h>

#include <stdexcept>

#include "model/errors.h"

namespace splitbrain::exec {

using plans::BufferRole;

MixedPrecision MixedPrecision::of(const plans::Plan& plan, std::string_view backend) {
  const model::DType gradients = plan.gradient_dtype.value_or(plan.dtype);
  const auto refuse = [&](std::string_view why) {
    return InputError(
        fmt::format("plan dtype {} (gradients {}): {}; write \"dtype\": \"fp32\" to run this plan "
                    "(simulate prices it as it is)",
                    model::dtype_name(plan.dtype), model::dtype_name(gradients), why));
  };
  if (plan.dtype == model::DType::fp16 || gradients == model::DType::fp16) {
    throw refuse("the executor has no fp16 (it needs loss scaling, not built)");
  }
  if (plan.dtype == model::DType::fp32) {
    if (gradients != model::DType::fp32) throw refuse("bf16 gradients of fp32 values are not built");
    return {};
  }
  // bf16 from here.
  if (backend != "cpu") {
    throw refuse(fmt::format("bf16 runs on the CPU backend only, emulated; the {} backend has no bf16 path", backend));
  }
  if (plan.zero_stage > 0) throw refuse("bf16 under ZeRO is not built (the master weights are not sliced)");
  if (plan.pipe_axis >= 0 && plan.stage_count() > 1) {
    throw refuse("bf16 across pipeline stages is not built (hand-overs move fp32)");
  }
  for (int v = 0; v < plan.model->size(); ++v) {
    if (plan.model->layer(v).kind == model::OpKind::moe) throw refuse("bf16 mixture-of-experts layers are not built");
  }
  return {.bf16 = true, .bf16_gradients = gradients == model::DType::bf16};
}

bool MixedPrecision::rounds_output(const model::Layer& layer) const {
  return bf16 && !layer.output_is_tokens && layer.kind != model::OpKind::softmax_cross_entropy;
}

int64_t MixedPrecision::buffer_bytes(const model::Model& model, const plans::StepBuffer& buffer) const {
  const auto values_of = [&](int layer) { return model.layer(layer).output_is_tokens ? 4 : activation_bytes(); };
  switch (buffer.role) {
    case BufferRole::output:
      return values_of(buffer.layer);
    case BufferRole::input_copy:
    case BufferRole::received:
      return values_of(model.layer(buffer.layer).inputs.at(static_cast<size_t>(buffer.index)));
    case BufferRole::output_gradient:
    case BufferRole::received_gradient:
    case BufferRole::input_gradient:
      return activation_bytes();
    case BufferRole::parameter:
    case BufferRole::whole_parameter:
    case BufferRole::gathered_parameters:
    case BufferRole::parameter_slice:
    case BufferRole::gathered_bucket:
      return bf16 ? parameter_bytes() : 4;
    case BufferRole::parameter_gradient:
    case BufferRole::whole_parameter_gradient:
    case BufferRole::gradient_slice:
    case BufferRole::tied_gradient:
      return gradient_bytes();
    case BufferRole::bucket:
    case BufferRole::reduced_slice:
    case BufferRole::optimizer_state:
    case BufferRole::optimizer_slice:
      return 4;  // fp32 whatever the dtype (plans/step_gradient_sync.cc; the master copy)
    case BufferRole::kept_by_op:
      break;
  }
  throw std::logic_error(
      fmt::format("MixedPrecision: no element size for a buffer of role {}", static_cast<int>(buffer.role)));
}

}  // namespace splitbrain::exec
