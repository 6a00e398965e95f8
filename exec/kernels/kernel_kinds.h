#pragma once
// Every kind of kernel a backend makes, once. KernelFactory's make_<kind> functions, each
// backend's overrides of them and the declarations of the backend's makers are generated from
// this list, so adding a kernel kind is a line here and its interface's include, plus one maker
// per backend, in that backend's kernel file. A backend without a maker for a listed kind fails to
// link, not at run time.
//
// X(name, Kernel, params, args): KernelFactory::make_<name> takes `params` and gives a
// std::unique_ptr<Kernel>; a backend's maker <backend>::make_<name> takes its context first and then
// `params`, and its factory's override passes it `args` (cpu/cpu_kernel_factory.h shows both).
// Types are spelled `kernels::...` so the list reads the same from exec/kernels and from a
// backend's namespace.

#include <cstdint>
#include <utility>
#include <vector>

// The kinds' interfaces, for the list's users.
#include "exec/kernels/adaptive_avgpool.h"
#include "exec/kernels/array_kernel.h"
#include "exec/kernels/attention.h"
#include "exec/kernels/batched_matmul.h"
#include "exec/kernels/batchnorm.h"
#include "exec/kernels/concat.h"
#include "exec/kernels/conv2d.h"
#include "exec/kernels/dropout.h"
#include "exec/kernels/elementwise_add.h"
#include "exec/kernels/eltwise.h"
#include "exec/kernels/embedding.h"
#include "exec/kernels/kept_buffer.h"
#include "exec/kernels/layernorm.h"
#include "exec/kernels/linear.h"
#include "exec/kernels/moe.h"
#include "exec/kernels/pooling.h"
#include "exec/kernels/rms_norm.h"
#include "exec/kernels/softmax_cross_entropy.h"
#include "exec/kernels/swiglu.h"

#define SPLITBRAIN_KERNEL_KINDS(X)                                                                                   \
  X(conv2d, kernels::Conv2dKernel, (const kernels::Conv2dShape& shape), (shape))                                     \
  X(linear, kernels::LinearKernel, (const kernels::LinearShape& shape), (shape))                                     \
  X(pool2d, kernels::Pool2dKernel, (kernels::PoolKind kind, const kernels::Pool2dShape& shape), (kind, shape))       \
  X(adaptive_avgpool, kernels::AdaptiveAvgPoolKernel, (const kernels::AdaptiveAvgPoolShape& shape), (shape))         \
  X(activation, kernels::ActivationKernel, (kernels::Activation kind, int64_t elements), (kind, elements))           \
  X(add, kernels::AddKernel, (int inputs, int64_t elements), (inputs, elements))                                     \
  X(swiglu, kernels::SwigluKernel, (int64_t elements), (elements))                                                   \
  X(moe, kernels::MoeKernel, (const kernels::MoeShape& shape), (shape))                                              \
  /* `input_dims` are the full local shapes (batch included); `axis` indexes them. */                                \
  X(concat, kernels::ConcatKernel, (std::vector<kernels::Dims> input_dims, int axis), (std::move(input_dims), axis)) \
  X(batchnorm, kernels::BatchNormKernel, (const kernels::BatchNormShape& shape), (shape))                            \
  X(layernorm, kernels::LayerNormKernel, (const kernels::LayerNormShape& shape), (shape))                            \
  X(rms_norm, kernels::RmsNormKernel, (const kernels::RmsNormShape& shape), (shape))                                 \
  X(dropout, kernels::DropoutKernel, (double probability), (probability))                                            \
  X(softmax_cross_entropy, kernels::SoftmaxCrossEntropyKernel, (const kernels::SoftmaxCrossEntropyShape& shape),     \
    (shape))                                                                                                         \
  X(embedding, kernels::EmbeddingKernel, (const kernels::EmbeddingShape& shape), (shape))                            \
  X(batched_matmul, kernels::BatchedMatmulKernel, (const kernels::BatchedMatmulShape& shape), (shape))               \
  X(self_attention, kernels::SelfAttentionKernel, (const kernels::AttentionShape& shape), (shape))                   \
  X(array_kernel, kernels::ArrayKernel, (), ())                                                                      \
  /* Memory an op keeps between its passes, where this factory's kernels read it. */                                 \
  X(kept_buffer, kernels::KeptBuffer, (int64_t bytes), (bytes))

// `(first, a, b)` from `first` and `(a, b)`; `(first)` from `first` and `()`: a backend's maker
// takes its context before the kind's own parameters.
#define SPLITBRAIN_KERNEL_UNPARENTHESIZE(...) __VA_ARGS__
#define SPLITBRAIN_KERNEL_PREPEND_EXPANDED(first, ...) (first __VA_OPT__(, ) __VA_ARGS__)
#define SPLITBRAIN_KERNEL_PREPEND(first, list) \
  SPLITBRAIN_KERNEL_PREPEND_EXPANDED(first, SPLITBRAIN_KERNEL_UNPARENTHESIZE list)
