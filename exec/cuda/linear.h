#pragma once
// Fully connected layer on the GPU with cuBLAS: the twin of cpu::LinearKernel (same shape type;
// x [rows, in], W [out, in], b [out], y [rows, out], all row-major). The products are sgemm on the
// column-major views of the row-major buffers (no transposed copies); the bias is added with
// cuDNN's broadcasting cudnnAddTensor and its gradient is a gemv with a vector of ones, which
// takes beta = 1 for the accumulating variant.
//
// Device arrays in and out (see cuda_context.h): cuBLAS and cuDNN read and write the caller's
// pointers (the accumulating variant adds into dW and db with beta = 1); every call is queued on
// the context's stream and returns without waiting. The vector of ones is the only buffer of its
// own.

#include "exec/cuda/call_graphs.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/cudnn_descriptors.h"
#include "exec/cuda/device_buffer.h"
#include "exec/kernels/linear.h"

namespace splitbrain::exec::cuda {

class LinearKernel final : public kernels::LinearKernel {
 public:
  LinearKernel(CudaContext& context, const kernels::LinearShape& shape);
  const kernels::LinearShape& shape() const override { return shape_; }

  // y = x W^T + b (b ignored without bias).
  void forward(const float* x, const float* w, const float* b, float* y) override;
  // dx = dy W.
  void backward_data(const float* dy, const float* w, float* dx) override;
  // dW = dy^T x, db = column sums of dy (overwritten).
  void backward_weights(const float* x, const float* dy, float* dw, float* db) override;
  // dW += dy^T x, db += column sums of dy (db may be null): one GEMM and one gemv with beta = 1.
  void accumulate_weight_gradients(const float* x, const float* dy, float* dw, float* db) override;

 private:
  // dW = dy^T x + beta dW and, when db is wanted, db = colsum(dy) + beta db.
  void weight_gradients(const float* x, const float* dy, float beta, float* dw, float* db, bool with_bias);

  CudaContext& context_;
  kernels::LinearShape shape_;
  TensorDescriptor output_desc_;  // y as [rows, out, 1, 1] for the bias broadcast
  TensorDescriptor bias_desc_;    // b as [1, out, 1, 1]
  DeviceBuffer ones_;             // rows ones: db = dy^T ones
  CallGraphs graphs_;             // each pass's calls, recorded per argument set (call_graphs.h)
};

}  // namespace splitbrain::exec::cuda
