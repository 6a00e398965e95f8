// moe: one kernel call each way over this rank's tokens, every expert whole on every rank
// (plans/op_rules/moe.cc splits tokens only: the batch or the sequence). Each token is routed and
// computed on its own, so no split needs a collective inside the layer. Per micro-batch the op
// keeps the router probabilities and the routed rows' gate and up (exec/kernels/moe.h), which is
// what model/ops/moe.cc counts as the layer's saved extra elements, so the tracked memory is the
// memory walk's.
//
// capacity_factor > 0 (an expert computing at most its capacity and dropping the tokens routed
// beyond it) is priced by the simulator but not run: which tokens an expert drops depends on the
// tokens of the whole sample, which a sequence split spreads over ranks, so the executor refuses
// it by name rather than train something else than the plan priced.

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "exec/kernels/moe.h"
#include "exec/ops/kept_per_micro_batch.h"
#include "exec/ops/op_factories.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {
namespace {

// The parameters in plans/op_rules/moe.cc's order.
enum MoeParameter { kRouter = 0, kGate = 1, kUp = 2, kDown = 3 };

class MoeOp final : public LayerOp {
 public:
  MoeOp(std::unique_ptr<kernels::MoeKernel> kernel, kernels::KernelFactory& factory)
      : kernel_(std::move(kernel)), kept_(factory) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const int64_t bytes = kernels::moe_kept_elements(kernel_->shape()) * static_cast<int64_t>(sizeof(float));
    kernel_->forward(inputs[0].data(), params[kRouter].data(), params[kGate].data(), params[kUp].data(),
                     params[kDown].data(), output.data(), kept_.keep(micro, bytes).as<float>());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    kernel_->backward(inputs[0].data(), output_grad.data(), params[kRouter].data(), params[kGate].data(),
                      params[kUp].data(), params[kDown].data(), kept_.at(micro).as<float>(),
                      input_grads.empty() ? nullptr : input_grads[0].data(), param_grads[kRouter].data(),
                      param_grads[kGate].data(), param_grads[kUp].data(), param_grads[kDown].data());
  }

  void release(int micro) override { kept_.release(micro); }
  // The router probabilities and routed gate and up kept for backward (model::LayerCost counts them).
  int64_t kept_bytes() const override { return kept_.bytes(); }

 private:
  std::unique_ptr<kernels::MoeKernel> kernel_;
  KeptPerMicroBatch kept_;
};

}  // namespace

std::unique_ptr<LayerOp> make_moe_op(kernels::KernelFactory& factory, const OpContext& op) {
  const model::Layer& layer = op.model->layer(op.layer);
  const auto& a = layer.attr<model::MoeAttrs>();
  if (a.capacity_factor > 0.0) {
    throw InputError(fmt::format(
        "layer '{}': capacity_factor {} is priced but the executor does not run it: it computes every routed token, "
        "as Mixtral does (give capacity_factor 0, zoo option capacity=0)",
        layer.name, a.capacity_factor));
  }
  const auto& x = op.input_shapes[0];
  kernels::MoeShape shape;
  shape.features = x.back();
  shape.tokens = comm::element_count(x) / shape.features;
  shape.experts = a.experts;
  shape.top_k = a.top_k;
  shape.ffn = a.ffn;
  return std::make_unique<MoeOp>(factory.make_moe(shape), factory);
}

}  // namespace splitbrain::exec::ops
