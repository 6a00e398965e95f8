#include "exec/cuda/concat.h"

#include <string>
#include <utility>

#include "exec/cuda/cuda_check.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cuda {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw kernels::KernelArgumentError("ConcatKernel: " + what);
}

int64_t product(const kernels::Dims& dims, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

std::size_t float_bytes(int64_t elements) { return static_cast<std::size_t>(elements) * sizeof(float); }

}  // namespace

ConcatKernel::ConcatKernel(CudaContext& context, std::vector<kernels::Dims> input_dims, int axis)
    : context_(context), input_dims_(std::move(input_dims)), axis_(axis) {
  // The CPU kernel's checks (oneDNN's concat takes ranks 1 to 5; nothing here limits the rank).
  require(!input_dims_.empty(), "needs at least one input");
  const kernels::Dims& first = input_dims_.front();
  require(axis >= 0 && static_cast<std::size_t>(axis) < first.size(),
          "axis " + std::to_string(axis) + " is out of range");
  const auto at = static_cast<std::size_t>(axis);
  output_dims_ = first;
  output_dims_[at] = 0;
  for (const kernels::Dims& dims : input_dims_) {
    require(dims.size() == first.size(), "inputs must have the same rank");
    for (std::size_t d = 0; d < dims.size(); ++d) {
      require(dims[d] > 0, "dims must be positive");
      if (d != at)
        require(dims[d] == first[d], "inputs differ in dimension " + std::to_string(d) + " besides the axis");
    }
    output_dims_[at] += dims[at];
  }
  outer_ = product(output_dims_, 0, at);
  output_run_ = product(output_dims_, at, output_dims_.size());
  int64_t start = 0;
  for (const kernels::Dims& dims : input_dims_) {
    runs_.push_back(product(dims, at, dims.size()));
    starts_.push_back(start);
    start += runs_.back();
  }
}

void ConcatKernel::forward(std::span<const float* const> xs, float* y) {
  require(xs.size() == input_dims_.size(),
          "forward got " + std::to_string(xs.size()) + " inputs, built for " + std::to_string(input_dims_.size()));
  for (std::size_t i = 0; i < xs.size(); ++i) {
    // outer_ rows of runs_[i] floats, packed in x_i, at column starts_[i] of y.
    SB_CUDA_CHECK(cudaMemcpy2DAsync(y + starts_[i], float_bytes(output_run_), xs[i], float_bytes(runs_[i]),
                                    float_bytes(runs_[i]), static_cast<std::size_t>(outer_), cudaMemcpyDeviceToDevice,
                                    context_.stream()));
  }
}

void ConcatKernel::backward(const float* dy, std::span<float* const> dxs) const {
  require(dxs.size() == input_dims_.size(),
          "backward got " + std::to_string(dxs.size()) + " gradients, built for " + std::to_string(input_dims_.size()));
  for (std::size_t i = 0; i < dxs.size(); ++i) {
    SB_CUDA_CHECK(cudaMemcpy2DAsync(dxs[i], float_bytes(runs_[i]), dy + starts_[i], float_bytes(output_run_),
                                    float_bytes(runs_[i]), static_cast<std::size_t>(outer_), cudaMemcpyDeviceToDevice,
                                    context_.stream()));
  }
}

}  // namespace splitbrain::exec::cuda
