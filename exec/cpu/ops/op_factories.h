#pragma once
// One factory per op family, each in its own file; cpu_backend.cc picks by op kind.

#include <memory>

#include "exec/cpu/cpu_context.h"
#include "exec/runtime/layer_op.h"

namespace splitbrain::exec::cpu {

std::unique_ptr<LayerOp> make_conv2d_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_linear_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_pooling_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_activation_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_dropout_op(const OpContext& op);
std::unique_ptr<LayerOp> make_reshape_op(const OpContext& op);  // flatten: same values, new shape
std::unique_ptr<LayerOp> make_batchnorm_op(const OpContext& op);
std::unique_ptr<LayerOp> make_layernorm_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_add_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_loss_op(const OpContext& op);
std::unique_ptr<LayerOp> make_embedding_op(const OpContext& op);
std::unique_ptr<LayerOp> make_self_attention_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_matmul_op(CpuContext& context, const OpContext& op);
std::unique_ptr<LayerOp> make_concat_op(CpuContext& context, const OpContext& op);

}  // namespace splitbrain::exec::cpu
