// SwiGLU's gate (exec/kernels/swiglu.h) on the GPU: the twin of the CPU's loops, in own kernels
// (neither cuDNN nor cuBLAS has a gated unit). Every pointer is device memory, the kernels are
// queued on the context's stream and nothing waits. The kernel class lives here with its kernels
// so the op is one file in this backend; it reads only C++17 headers, as nvcc compiles this file
// as C++17.

#include <memory>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/grid.h"
#include "exec/kernels/swiglu.h"

namespace splitbrain::exec::cuda {
namespace {

// 1 / (1 + exp(-g)) with expf of a non-positive argument only, so neither end overflows.
__device__ float stable_sigmoid(float g) {
  if (g >= 0.0f) return 1.0f / (1.0f + expf(-g));
  const float e = expf(g);
  return e / (1.0f + e);
}

__global__ void swiglu_forward_kernel(int64_t elements, const float* gate, const float* up, float* y) {
  SB_GRID_STRIDE_LOOP(i, elements) {
    const float g = gate[i];
    y[i] = g * stable_sigmoid(g) * up[i];
  }
}

// d_gate = dy up s (1 + g (1 - s)) and d_up = dy g s, with s = sigmoid(g) recomputed.
__global__ void swiglu_backward_kernel(int64_t elements, const float* gate, const float* up, const float* dy,
                                       float* d_gate, float* d_up) {
  SB_GRID_STRIDE_LOOP(i, elements) {
    const float g = gate[i];
    const float s = stable_sigmoid(g);
    d_gate[i] = dy[i] * up[i] * s * (1.0f + g * (1.0f - s));
    d_up[i] = dy[i] * g * s;
  }
}

class SwigluKernel final : public kernels::SwigluKernel {
 public:
  SwigluKernel(CudaContext& context, int64_t elements)
      : context_(context), elements_(kernels::checked_swiglu_elements(elements)) {}
  int64_t elements() const override { return elements_; }

  void forward(const float* gate, const float* up, float* y) override {
    swiglu_forward_kernel<<<blocks_for(elements_), kThreadsPerBlock, 0, context_.stream()>>>(elements_, gate, up, y);
    SB_CUDA_CHECK(cudaGetLastError());
  }

  void backward(const float* gate, const float* up, const float* dy, float* d_gate, float* d_up) override {
    swiglu_backward_kernel<<<blocks_for(elements_), kThreadsPerBlock, 0, context_.stream()>>>(elements_, gate, up, dy,
                                                                                              d_gate, d_up);
    SB_CUDA_CHECK(cudaGetLastError());
  }

 private:
  CudaContext& context_;
  int64_t elements_;
};

}  // namespace

// cuda_kernel_factory.h declares this maker from exec/kernels/kernel_kinds.h's list; that header
// is C++20, so the declaration is repeated here, and a mismatch fails to link.
std::unique_ptr<kernels::SwigluKernel> make_swiglu(CudaContext& context, int64_t elements) {
  return std::make_unique<SwigluKernel>(context, elements);
}

}  // namespace splitbrain::exec::cuda
