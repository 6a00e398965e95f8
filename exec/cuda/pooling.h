#pragma once
// Max and average pooling on the GPU with own kernels (pooling_kernels.h): the twin of
// cpu::Pool2dKernel, same shape type and semantics (average counts the padded zeros; ceil_mode as
// PyTorch's; average with an overhanging ceil_mode window is refused as on the CPU). The kernels
// read per-side padding and ceil_mode straight from the shape, so no padded copy is made.
//
// Workspace (caller-owned, same contract as the CPU kernel: forward writes it, the matching
// backward reads it, a pipelined runtime keeps one per micro-batch in flight): for max pooling a
// record of each window's winner, model::max_pool_index_bytes(window) per output element, as
// oneDNN's and as the cost model prices it; none for average pooling.
//
// Device pointers in and out, queued on the context's stream (cuda_context.h).

#include <cstddef>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/pooling_kernels.h"
#include "exec/kernels/pooling.h"

namespace splitbrain::exec::cuda {

class Pool2dKernel final : public kernels::Pool2dKernel {
 public:
  Pool2dKernel(CudaContext& context, kernels::PoolKind kind, const kernels::Pool2dShape& shape);
  const kernels::Pool2dShape& shape() const override { return shape_; }
  kernels::PoolKind kind() const override { return kind_; }

  // Bytes of the workspace forward writes and backward reads (0 for average pooling).
  std::size_t workspace_bytes() const override;
  // `workspace` may be null for average pooling.
  void forward(const float* x, float* y, void* workspace) override;
  void backward(const float* dy, const void* workspace, float* dx) override;

 private:
  CudaContext& context_;
  kernels::PoolKind kind_;
  kernels::Pool2dShape shape_;
  PoolGeometry geometry_;
  int index_bytes_;  // of a winner record (max pooling)
};

}  // namespace splitbrain::exec::cuda
