// RMS normalisation (exec/kernels/rms_norm.h) on the GPU: the twin of the CPU's loops, with own
// kernels as for layer normalisation (cuDNN has no RMS norm). Every pointer is device memory,
// the kernels are queued on the context's stream and nothing waits. The kernel class lives here
// with its kernels so the op is one file in this backend; it reads only C++17 headers, as nvcc
// compiles this file as C++17.

#include <memory>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_context.h"
#include "exec/cuda/block_reductions.h"
#include "exec/cuda/grid.h"
#include "exec/kernels/rms_norm.h"

namespace splitbrain::exec::cuda {
namespace {

// One block per row (grid-stride over rows), threads over the features.
__global__ void rms_norm_forward_kernel(int64_t rows, int64_t features, float epsilon, const float* x,
                                        const float* weight, float* y, float* inv_rms) {
  __shared__ float partials[kThreadsPerBlock / kWarp];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * features;
    float squares = 0.0f;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) squares += xr[f] * xr[f];
    const float inverse = 1.0f / sqrtf(block_sum(squares, partials) / static_cast<float>(features) + epsilon);
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) y[r * features + f] = xr[f] * inverse * weight[f];
    if (threadIdx.x == 0) inv_rms[r] = inverse;
  }
}

// dx = r (g - x r^2 mean(g x)) with g = dy weight, one block per row.
__global__ void rms_norm_input_gradient_kernel(int64_t rows, int64_t features, const float* x, const float* dy,
                                               const float* weight, const float* inv_rms, float* dx) {
  __shared__ float partials[kThreadsPerBlock / kWarp];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * features;
    const float* gr = dy + r * features;
    const float inverse = inv_rms[r];
    float sum_g_x = 0.0f;
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x) sum_g_x += gr[f] * weight[f] * xr[f];
    const float correction = inverse * inverse * block_sum(sum_g_x, partials) / static_cast<float>(features);
    for (int64_t f = threadIdx.x; f < features; f += blockDim.x)
      dx[r * features + f] = inverse * (gr[f] * weight[f] - xr[f] * correction);
  }
}

// dweight[f] += sum over rows of dy x r, as column sums down the rows (block_reductions.h).

__global__ void rms_norm_weight_gradient_kernel(int64_t rows, int64_t features, const float* x, const float* dy,
                                                const float* inv_rms, float* dweight) {
  __shared__ double lanes[kRowLanes][kFeatureTile];
  const int64_t f = blockIdx.x * int64_t{kFeatureTile} + threadIdx.x;
  double sum = 0.0;
  if (f < features) {
    for (int64_t r = threadIdx.y; r < rows; r += kRowLanes)
      sum += static_cast<double>(dy[r * features + f]) * x[r * features + f] * inv_rms[r];
  }
  lanes[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && f < features) {
    for (int lane = 1; lane < kRowLanes; ++lane) sum += lanes[lane][threadIdx.x];
    dweight[f] += static_cast<float>(sum);
  }
}

class RmsNormKernel final : public kernels::RmsNormKernel {
 public:
  RmsNormKernel(CudaContext& context, const kernels::RmsNormShape& shape)
      : context_(context), shape_(kernels::checked(shape)) {}
  const kernels::RmsNormShape& shape() const override { return shape_; }

  void forward(const float* x, const float* weight, float* y, float* inv_rms) override {
    rms_norm_forward_kernel<<<blocks_for_groups(shape_.rows), kThreadsPerBlock, 0, context_.stream()>>>(
        shape_.rows, shape_.features, static_cast<float>(shape_.epsilon), x, weight, y, inv_rms);
    SB_CUDA_CHECK(cudaGetLastError());
  }

  void backward(const float* x, const float* dy, const float* weight, const float* inv_rms, float* dx,
                float* dweight) override {
    if (dx != nullptr) {
      rms_norm_input_gradient_kernel<<<blocks_for_groups(shape_.rows), kThreadsPerBlock, 0, context_.stream()>>>(
          shape_.rows, shape_.features, x, dy, weight, inv_rms, dx);
      SB_CUDA_CHECK(cudaGetLastError());
    }
    const auto tiles = static_cast<unsigned>((shape_.features + kFeatureTile - 1) / kFeatureTile);
    rms_norm_weight_gradient_kernel<<<tiles, dim3(kFeatureTile, kRowLanes), 0, context_.stream()>>>(
        shape_.rows, shape_.features, x, dy, inv_rms, dweight);
    SB_CUDA_CHECK(cudaGetLastError());
  }

 private:
  CudaContext& context_;
  kernels::RmsNormShape shape_;
};

}  // namespace

// cuda_kernel_factory.h declares this maker from exec/kernels/kernel_kinds.h's list; that header
// is C++20, so the declaration is repeated here, and a mismatch fails to link.
std::unique_ptr<kernels::RmsNormKernel> make_rms_norm(CudaContext& context, const kernels::RmsNormShape& shape) {
  return std::make_unique<RmsNormKernel>(context, shape);
}

}  // namespace splitbrain::exec::cuda
