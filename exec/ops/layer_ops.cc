#include <utility>

#include "exec/ops/layer_ops.h"

#include <fmt/format.h>

#include "exec/ops/op_factories.h"
#include "model/errors.h"

namespace splitbrain::exec::ops {

OpFactory make_layer_ops(std::shared_ptr<kernels::KernelFactory> factory) {
  return [shared = std::move(factory)](const OpContext& op) -> std::unique_ptr<LayerOp> {
    const model::Layer& layer = op.model->layer(op.layer);
    kernels::KernelFactory& backend = *shared;
    switch (layer.kind) {
      case model::OpKind::conv2d:
        return make_conv2d_op(backend, op);
      case model::OpKind::linear:
        return make_linear_op(backend, op);
      case model::OpKind::maxpool:
      case model::OpKind::avgpool:
      case model::OpKind::adaptive_avgpool:
        return make_pooling_op(backend, op);
      case model::OpKind::relu:
      case model::OpKind::gelu:
        return make_activation_op(backend, op);
      case model::OpKind::dropout:
        return make_dropout_op(backend, op);
      case model::OpKind::flatten:
        return make_reshape_op(backend, op);
      case model::OpKind::batchnorm:
        return make_batchnorm_op(backend, op);
      case model::OpKind::layernorm:
        return make_layernorm_op(backend, op);
      case model::OpKind::add:
        return make_add_op(backend, op);
      case model::OpKind::softmax_cross_entropy:
        return make_loss_op(backend, op);
      case model::OpKind::embedding:
        return make_embedding_op(backend, op);
      case model::OpKind::self_attention:
        return make_self_attention_op(backend, op);
      case model::OpKind::matmul:
        return make_matmul_op(backend, op);
      case model::OpKind::concat:
        return make_concat_op(backend, op);
      default:
        break;
    }
    throw InputError(fmt::format("layer '{}': the executor cannot run {} layers yet (status table in README.md)",
                                 layer.name, model::op_name(layer.kind)));
  };
}

}  // namespace splitbrain::exec::ops
