#pragma once
// 2-D convolution on the GPU with cuDNN's convolution (legacy API): the twin of cpu::Conv2dKernel,
// same shape type, same layouts (NCHW; weights [out, in/groups, kh, kw]; bias [out]), same
// results; backward_weights overwrites dw and db.
//
// Per-side padding: cuDNN pads symmetrically only, so a shape with pad_top != pad_bottom or
// pad_left != pad_right (a height-split layer padding only at the global image's edges) is padded
// explicitly with zeros (layout_kernels.h) into a buffer of this object and convolved with no
// cuDNN padding; backward_data then crops the padded input gradient into dx. Symmetric shapes go
// straight to cuDNN.
//
// Device arrays in and out (see cuda_context.h): cuDNN reads and writes the caller's pointers
// (accumulate_weight_gradients adds into dw and db with beta = 1); every call is queued on the
// context's stream and returns without waiting. The padded input is the only buffer of its own.
// Each pass's cuDNN calls are queued through a CUDA graph per argument set (call_graphs.h).

#include <cudnn.h>

#include <optional>

#include "exec/cuda/call_graphs.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/device_buffer.h"
#include "exec/cuda/layout_kernels.h"
#include "exec/kernels/conv2d.h"

namespace splitbrain::exec::cuda {

class Conv2dKernel final : public kernels::Conv2dKernel {
 public:
  // Throws kernels::KernelArgumentError on shapes that do not make sense, CudaError when cuDNN refuses.
  Conv2dKernel(CudaContext& context, const kernels::Conv2dShape& shape);

  const kernels::Conv2dShape& shape() const override { return shape_; }

  void forward(const float* x, const float* w, const float* b, float* y) override;
  void backward_data(const float* dy, const float* w, float* dx) override;
  void backward_weights(const float* x, const float* dy, float* dw, float* db) override;
  void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) override;

 private:
  // What cuDNN convolves for input x: x itself, or x padded into padded_input_.
  const float* conv_input(const float* x);
  // dw (and db with bias) = the gradients for x and dy + beta * what they hold.
  void weight_gradients(const float* x, const float* dy, float beta, float* dw, float* db, bool with_bias);

  CudaContext& context_;
  kernels::Conv2dShape shape_;
  // Set when the padding is done by our kernel rather than cuDNN.
  std::optional<PlanePadding> explicit_padding_;
  TensorDescriptor input_desc_;  // what cuDNN convolves: x, or x padded explicitly
  TensorDescriptor output_desc_;
  TensorDescriptor bias_desc_;
  FilterDescriptor filter_desc_;
  ConvolutionDescriptor conv_desc_;
  cudnnConvolutionFwdAlgo_t forward_algo_{};
  cudnnConvolutionBwdDataAlgo_t backward_data_algo_{};
  cudnnConvolutionBwdFilterAlgo_t backward_filter_algo_{};
  std::size_t forward_workspace_bytes_ = 0;
  std::size_t backward_data_workspace_bytes_ = 0;
  std::size_t backward_filter_workspace_bytes_ = 0;
  // x (or the gradient for it) padded explicitly; empty without explicit padding. Queued work
  // of one call may still use it when the next call is queued, which is safe because both go
  // through the same stream.
  DeviceBuffer padded_input_;
  CallGraphs graphs_;
};

}  // namespace splitbrain::exec::cuda
