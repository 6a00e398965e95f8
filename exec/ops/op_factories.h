#pragma once
// One factory per op family, each in its own file; layer_ops.cc picks by op kind. Each builds
// its op's kernels with the backend's KernelFactory.

#include <memory>

#include "exec/kernels/kernel_factory.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::ops {

std::unique_ptr<LayerOp> make_conv2d_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_linear_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_pooling_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_activation_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_dropout_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_reshape_op(kernels::KernelFactory& factory, const OpContext& op);  // flatten
std::unique_ptr<LayerOp> make_batchnorm_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_layernorm_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_add_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_loss_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_embedding_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_self_attention_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_matmul_op(kernels::KernelFactory& factory, const OpContext& op);
std::unique_ptr<LayerOp> make_concat_op(kernels::KernelFactory& factory, const OpContext& op);

}  // namespace splitbrain::exec::ops
