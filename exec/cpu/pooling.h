#pragma once
// Max and average pooling (PyTorch's MaxPool2d and AvgPool2d) on local NCHW fp32 tensors with
// oneDNN's pooling primitives, forward and backward. Padding is per side, as for conv2d (a
// height-split layer pads only at the global image's edges and gets halo rows instead).
//
// Average pooling counts the padded zeros (PyTorch's count_include_pad=True, oneDNN's
// pooling_avg_include_padding). Max pooling keeps oneDNN's workspace (which input won each
// window) for its backward; the caller owns that buffer (workspace_bytes()) because a pipelined
// runtime runs several micro-batches' forwards before their backwards.
//
// ceil_mode gives the extra output row/column PyTorch's ceil_mode=True gives; for max pooling it
// is extra bottom/right padding. Average pooling does not take it when the last window would hang
// over the padded input (PyTorch then divides by the clipped window, oneDNN by the whole one).

#include <cstddef>
#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

#include "exec/cpu/cpu_context.h"

namespace splitbrain::exec::cpu {

enum class PoolKind { max, average };

struct Pool2dShape {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t kernel_h = 1;
  int64_t kernel_w = 1;
  int64_t stride_h = 1;
  int64_t stride_w = 1;
  int64_t pad_top = 0;
  int64_t pad_bottom = 0;
  int64_t pad_left = 0;
  int64_t pad_right = 0;
  bool ceil_mode = false;

  int64_t out_height() const;
  int64_t out_width() const;
};

class Pool2dKernel {
 public:
  Pool2dKernel(CpuContext& context, PoolKind kind, const Pool2dShape& shape);
  const Pool2dShape& shape() const { return shape_; }
  PoolKind kind() const { return kind_; }

  // Bytes of the workspace forward writes and backward reads (0 for average pooling).
  std::size_t workspace_bytes() const;
  // `workspace` may be null for average pooling.
  void forward(const float* x, float* y, void* workspace);
  void backward(const float* dy, const void* workspace, float* dx);

 private:
  CpuContext& context_;
  PoolKind kind_;
  Pool2dShape shape_;
  dnnl::memory::desc x_md_, y_md_, workspace_md_;
  dnnl::pooling_forward forward_;
  dnnl::pooling_backward backward_;
};

}  // namespace splitbrain::exec::cpu
