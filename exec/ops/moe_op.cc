// moe: over this rank's tokens (plans/op_rules/moe.cc: the batch or the sequence split), with
// the experts whole on every rank or, under expert parallelism, some of them (the rule's `out`
// role splits the experts; every rank of that group then holds the same tokens and gives its
// experts' share of the output, a partial sum). Per micro-batch the op keeps the router
// probabilities and the routed rows' gate and up (exec/kernels/moe.h), in a buffer of the size
// model/ops/moe.cc counts as the layer's saved extra elements, so the tracked memory is the
// memory walk's (under expert parallelism that size is an upper bound the rank's rows fit in).
//
// Backward is the kernel's two parts with the plan's internal collective between them: the
// routing weights' gradients [tokens, experts] all-reduced over the ranks sharing the experts
// (the renormalisation couples a token's experts, which may lie on several ranks), so each rank
// computes the whole router gradient; only the first rank of the group adds the router's share of
// the input gradient, as only the first rank of a split contraction adds a bias.
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
#include "plans/tensor_layout.h"

namespace splitbrain::exec::ops {
namespace {

// The parameters in plans/op_rules/moe.cc's order.
enum MoeParameter { kRouter = 0, kGate = 1, kUp = 2, kDown = 3 };

class MoeOp final : public LayerOp {
 public:
  MoeOp(std::unique_ptr<kernels::MoeKernel> kernel, kernels::KernelFactory& factory, const OpContext& op)
      : kernel_(std::move(kernel)),
        array_(factory.make_array_kernel()),
        op_(op),
        kept_(factory),
        d_routing_weights_(factory.make_kept_buffer(routing_weight_count() * static_cast<int64_t>(sizeof(float)))) {}

  void forward(int micro, int64_t, std::span<const ConstTensorSpan> inputs, std::span<const ConstTensorSpan> params,
               TensorSpan output) override {
    const int64_t bytes = kernels::moe_kept_elements(kernel_->shape()) * static_cast<int64_t>(sizeof(float));
    kernel_->forward(inputs[0].data(), params[kRouter].data(), params[kGate].data(), params[kUp].data(),
                     params[kDown].data(), output.data(), kept_.keep(micro, bytes).as<float>());
  }

  void backward(int micro, std::span<const ConstTensorSpan> inputs, ConstTensorSpan, ConstTensorSpan output_grad,
                std::span<const ConstTensorSpan> params, std::span<const TensorSpan> input_grads,
                std::span<const TensorSpan> param_grads) override {
    const float* kept = kept_.at(micro).as<float>();
    float* dx = input_grads.empty() ? nullptr : input_grads[0].data();
    float* d_routing_weights = d_routing_weights_->as<float>();
    kernel_->backward_experts(inputs[0].data(), output_grad.data(), params[kGate].data(), params[kUp].data(),
                              params[kDown].data(), kept, dx, param_grads[kGate].data(), param_grads[kUp].data(),
                              param_grads[kDown].data(), d_routing_weights);
    sum_over_expert_ranks(d_routing_weights);
    kernel_->backward_router(inputs[0].data(), params[kRouter].data(), kept, d_routing_weights,
                             op_.adds_bias ? dx : nullptr, param_grads[kRouter].data());
  }

  void release(int micro) override { kept_.release(micro); }
  // The router probabilities and routed gate and up kept for backward (model::LayerCost counts them).
  int64_t kept_bytes() const override { return kept_.bytes(); }

 private:
  int64_t routing_weight_count() const { return kernel_->shape().tokens * kernel_->shape().experts; }

  // The plan's backward collective (an all-reduce over the ranks sharing the experts), if any.
  // The engine all-reduces host arrays, so only then do the gradients go through the host.
  void sum_over_expert_ranks(float* d_routing_weights) {
    for (const plans::Collective& c : op_.layouts->backward_internal) {
      comm::LocalArray values;
      values.shape = {routing_weight_count()};
      values.values.resize(static_cast<size_t>(routing_weight_count()));
      array_->download(d_routing_weights, values.values);
      const comm::LocalArray summed = op_.communicator->engine().all_reduce(c.axes, values);
      op_.communicator->count(op_.model->layer(op_.layer).name + "/backward", c);
      array_->upload(summed.values, d_routing_weights);
    }
  }

  std::unique_ptr<kernels::MoeKernel> kernel_;
  std::unique_ptr<kernels::ArrayKernel> array_;
  OpContext op_;
  KeptPerMicroBatch kept_;
  // The routing weights' gradients of the backward at hand (working memory of one pass, as
  // batchnorm's sums are: not kept between passes, so not in kept_bytes).
  std::unique_ptr<kernels::KeptBuffer> d_routing_weights_;
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
  // The experts' weights [experts, ...] are split along their first dimension, if at all: this
  // rank holds those from its block's offset.
  const plans::ParameterShard& gate = op.layouts->parameters.at(kGate);
  shape.held_experts = op.parameter_shapes.at(kGate).at(0);
  shape.first_expert = plans::local_offset(gate.layout, *op.mesh, gate.global_shape, op.rank).at(0);
  return std::make_unique<MoeOp>(factory.make_moe(shape), factory, op);
}

}  // namespace splitbrain::exec::ops
