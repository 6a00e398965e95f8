#pragma once
// Max and average pooling on the GPU with cuDNN's pooling (legacy API): the twin of
// cpu::Pool2dKernel, same shape type and semantics (average counts the padded zeros; ceil_mode as
// PyTorch's; average with an overhanging ceil_mode window is refused as on the CPU).
//
// Workspace: cuDNN's max-pooling backward does not take a record of the winners as oneDNN does; it
// recomputes them from the forward's input and output. So the caller-owned workspace (same
// contract as the CPU kernel: forward writes it, the matching backward reads it, a pipelined
// runtime keeps one per micro-batch in flight) holds a copy of x followed by y: workspace_bytes()
// = 4 * (x elements + y elements) for max pooling, 0 for average pooling.
//
// Padding: cuDNN pads symmetrically and takes no ceil_mode, so other shapes are padded
// explicitly (layout_kernels.h; with -inf for max, zeros for average) to exactly the rows and
// columns the windows cover, and pooled with no cuDNN padding; backward crops the gradient.
//
// Host or device arrays in and out (see cuda_context.h): every call uploads its inputs into the device
// buffers this object allocates once, runs on the context's stream and synchronises.

#include <cstddef>
#include <optional>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/layout_kernels.h"
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
  // Puts host x into input_ (through user_input_ and the padding kernel when explicit).
  void upload_input(const float* x);

  CudaContext& context_;
  kernels::PoolKind kind_;
  kernels::Pool2dShape shape_;
  std::optional<PlanePadding> explicit_padding_;
  TensorDescriptor input_desc_;  // what cuDNN pools: x, or x padded explicitly
  TensorDescriptor output_desc_;
  PoolingDescriptor pooling_desc_;
  DeviceBuffer input_;        // x as cuDNN sees it
  DeviceBuffer user_input_;   // x, or dx, unpadded; only with explicit padding
  DeviceBuffer output_;       // y
  DeviceBuffer output_grad_;  // dy
  DeviceBuffer input_grad_;   // dx as cuDNN sees it
};

}  // namespace splitbrain::exec::cuda
