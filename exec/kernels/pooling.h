#pragma once
// Max and average pooling (PyTorch's MaxPool2d and AvgPool2d) on local NCHW fp32 tensors,
// forward and backward. Padding is per side, as for conv2d (a height-split layer pads only at
// the global image's edges and gets halo rows instead).
//
// Average pooling counts the padded zeros (PyTorch's count_include_pad=True). Max pooling keeps
// a workspace (which input won each window) for its backward; the caller owns that buffer
// (workspace_bytes()) because a pipelined runtime runs several micro-batches' forwards before
// their backwards. ceil_mode gives the extra output row/column PyTorch's ceil_mode=True gives.

#include <cstddef>
#include <cstdint>

#include "plans/kernel_problem.h"

namespace splitbrain::exec::kernels {

enum class PoolKind { max, average };

// The problem is declared once, in plans/, where the simulator prices the same one; the kernels
// take the kind from PoolKind (the problem's `max` is the simulator's).
using Pool2dShape = plans::PoolProblem;

class Pool2dKernel {
 public:
  virtual ~Pool2dKernel() = default;
  virtual const Pool2dShape& shape() const = 0;
  virtual PoolKind kind() const = 0;

  // Bytes of the workspace forward writes and backward reads (0 for average pooling); its
  // content is the backend's own.
  virtual std::size_t workspace_bytes() const = 0;
  // `workspace` may be null for average pooling.
  virtual void forward(const float* x, float* y, void* workspace) = 0;
  virtual void backward(const float* dy, const void* workspace, float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
