#pragma once
// The arguments every backend's kernels refuse, decided once: a kernel passes its shape through
// these before it builds anything, so the CPU and CUDA kernels accept exactly the same shapes and
// name a bad one in the same words. Each throws KernelArgumentError naming the kernel and the
// field; what a backend cannot do besides (oneDNN's concat takes ranks 1 to 5) it checks itself.
// A concatenation's checks stand with its geometry (concat.h), attention's with its products
// (attention.h).

#include <cstddef>
#include <cstdint>

#include "exec/kernels/adaptive_avgpool.h"
#include "exec/kernels/attention.h"
#include "exec/kernels/batched_matmul.h"
#include "exec/kernels/batchnorm.h"
#include "exec/kernels/conv2d.h"
#include "exec/kernels/embedding.h"
#include "exec/kernels/layernorm.h"
#include "exec/kernels/linear.h"
#include "exec/kernels/pooling.h"
#include "exec/kernels/softmax_cross_entropy.h"

namespace splitbrain::exec::kernels {

// Each returns its argument, so a kernel can check in its member initializers.
const Conv2dShape& checked(const Conv2dShape& shape);
const Pool2dShape& checked(PoolKind kind, const Pool2dShape& shape);
const AdaptiveAvgPoolShape& checked(const AdaptiveAvgPoolShape& shape);
const LinearShape& checked(const LinearShape& shape);
const BatchedMatmulShape& checked(const BatchedMatmulShape& shape);
const BatchNormShape& checked(const BatchNormShape& shape);
const LayerNormShape& checked(const LayerNormShape& shape);
const EmbeddingShape& checked(const EmbeddingShape& shape);
const SoftmaxCrossEntropyShape& checked(const SoftmaxCrossEntropyShape& shape);
const AttentionShape& checked(const AttentionShape& shape);

// The element count of an activation over `elements` floats, and of the sum of `inputs` arrays.
int64_t checked_activation_elements(int64_t elements);
int64_t checked_add_elements(int inputs, int64_t elements);
// A sum built for `built` inputs called with `given`.
void check_add_inputs(std::size_t given, int built);

}  // namespace splitbrain::exec::kernels
