#pragma once
// How a plan's element types (Plan::dtype, Plan::gradient_dtype) run in the executor. fp32 runs
// as it is. bf16 is emulated on the CPU backend: the arrays stay fp32 in storage, and the values a
// bf16 run keeps in bf16 are rounded to it (comm/bf16.h) where they are made: every layer's
// output but token ids and the loss, every activation gradient, the weights the kernels read
// (rounded from the optimizer's fp32 master copy after each update), and the parameter gradients
// unless the plan keeps them in fp32 (Megatron-LM's main_grad). What crosses MPI is 2-byte words
// (comm/communicator_bf16.cc), and the tracked memory counts each array at the element size the
// simulator gives it, not at its fp32 storage: 2 bytes for the rounded ones, 4 for the master
// copy, the optimizer's moments and the gradient buckets (plans/step_gradient_sync.h).

#include <cstdint>
#include <string_view>

#include "model/model.h"
#include "plans/plan.h"
#include "plans/step_program.h"

namespace splitbrain::exec {

struct MixedPrecision {
  bool bf16 = false;            // activations, weights and activation gradients rounded to bf16
  bool bf16_gradients = false;  // parameter gradients too (no fp32 main gradients)

  // The plan's precision on backend `backend` ("cpu", "cuda"). Throws InputError naming what is
  // not built: fp16 (no loss scaling), bf16 off the CPU backend, and bf16 with ZeRO, pipeline
  // stages or a mixture of experts.
  static MixedPrecision of(const plans::Plan& plan, std::string_view backend);

  // Bytes per element the tracked memory counts for weights, their gradients, and values of the
  // model's element type (activations and their gradients).
  int64_t parameter_bytes() const { return bf16 ? 2 : 4; }
  int64_t gradient_bytes() const { return bf16_gradients ? 2 : 4; }
  int64_t activation_bytes() const { return bf16 ? 2 : 4; }
  // The same for a step program's buffer in `model` (token ids stay 4 bytes; buckets fp32).
  int64_t buffer_bytes(const model::Model& model, const plans::StepBuffer& buffer) const;
  // Whether a forward's output is rounded: every layer's but token ids and the loss's.
  bool rounds_output(const model::Layer& layer) const;
};

}  // namespace splitbrain::exec
