#include "exec/cuda/concat.h"

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/cuda_kernel_factory.h"

namespace splitbrain::exec::cuda {

namespace {

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

// oneDNN's concat (the CPU kernel's) takes ranks 1 to 5; nothing here limits the rank.
ConcatKernel::ConcatKernel(CudaContext& context, std::vector<kernels::Dims> input_dims, int axis)
    : context_(context), geometry_(kernels::concat_geometry(input_dims, axis)) {}

void ConcatKernel::forward(std::span<const float* const> xs, float* y) {
  kernels::check_concat_inputs(xs.size(), geometry_.runs.size());
  const kernels::ConcatGeometry& g = geometry_;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // g.outer rows of g.runs[i] floats, packed in x_i, at column g.starts[i] of y.
    SB_CUDA_CHECK(cudaMemcpy2DAsync(y + g.starts[i], float_bytes(g.output_run), xs[i], float_bytes(g.runs[i]),
                                    float_bytes(g.runs[i]), static_cast<std::size_t>(g.outer), cudaMemcpyDeviceToDevice,
                                    context_.stream()));
  }
}

void ConcatKernel::backward(const float* dy, std::span<float* const> dxs) const {
  kernels::check_concat_gradients(dxs.size(), geometry_.runs.size());
  const kernels::ConcatGeometry& g = geometry_;
  for (std::size_t i = 0; i < dxs.size(); ++i) {
    SB_CUDA_CHECK(cudaMemcpy2DAsync(dxs[i], float_bytes(g.runs[i]), dy + g.starts[i], float_bytes(g.output_run),
                                    float_bytes(g.runs[i]), static_cast<std::size_t>(g.outer), cudaMemcpyDeviceToDevice,
                                    context_.stream()));
  }
}

std::unique_ptr<kernels::ConcatKernel> make_concat(CudaContext& context, std::vector<kernels::Dims> input_dims,
                                                   int axis) {
  return std::make_unique<ConcatKernel>(context, std::move(input_dims), axis);
}

}  // namespace splitbrain::exec::cuda
