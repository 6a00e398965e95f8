#include "exec/cpu/concat.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "exec/cpu/dnnl_check.h"
#include "exec/cpu/staged_memory.h"
#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::cpu {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw kernels::KernelArgumentError("ConcatKernel: " + what);
}

int64_t product(const Dims& dims, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

}  // namespace

ConcatKernel::ConcatKernel(CpuContext& context, std::vector<Dims> input_dims, int axis)
    : context_(context), input_dims_(std::move(input_dims)), axis_(axis) {
  require(!input_dims_.empty(), "needs at least one input");
  const Dims& first = input_dims_.front();
  require(axis >= 0 && static_cast<std::size_t>(axis) < first.size(),
          "axis " + std::to_string(axis) + " is out of range");
  output_dims_ = first;
  output_dims_[static_cast<std::size_t>(axis)] = 0;
  for (const Dims& dims : input_dims_) {
    require(dims.size() == first.size(), "inputs must have the same rank");
    for (std::size_t d = 0; d < dims.size(); ++d) {
      require(dims[d] > 0, "dims must be positive");
      if (d != static_cast<std::size_t>(axis))
        require(dims[d] == first[d], "inputs differ in dimension " + std::to_string(d) + " besides the axis");
    }
    output_dims_[static_cast<std::size_t>(axis)] += dims[static_cast<std::size_t>(axis)];
    input_mds_.push_back(plain_desc(dims));
  }
  output_md_ = plain_desc(output_dims_);
  dnnl::concat::primitive_desc pd;
  SB_DNNL_CHECK(pd = dnnl::concat::primitive_desc(output_md_, axis, input_mds_, context.engine()));
  SB_DNNL_CHECK(concat_ = dnnl::concat(pd));
}

void ConcatKernel::forward(std::span<const float* const> xs, float* y) {
  require(xs.size() == input_dims_.size(),
          "forward got " + std::to_string(xs.size()) + " inputs, built for " + std::to_string(input_dims_.size()));
  const dnnl::engine& engine = context_.engine();
  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_DST, wrap(output_md_, engine, y)}};
  for (std::size_t i = 0; i < xs.size(); ++i)
    args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), wrap(input_mds_[i], engine, xs[i]));
  SB_DNNL_CHECK(concat_.execute(context_.stream(), args));
  SB_DNNL_CHECK(context_.stream().wait());
}

void ConcatKernel::backward(const float* dy, std::span<float* const> dxs) const {
  require(dxs.size() == input_dims_.size(),
          "backward got " + std::to_string(dxs.size()) + " gradients, built for " + std::to_string(input_dims_.size()));
  const auto axis = static_cast<std::size_t>(axis_);
  // Row-major: the tensor is `outer` runs; in each, input i owns a contiguous piece of
  // dims_i[axis] * inner elements, one after the other.
  const int64_t outer = product(output_dims_, 0, axis);
  const int64_t out_run = product(output_dims_, axis, output_dims_.size());
  int64_t start = 0;
  for (std::size_t i = 0; i < dxs.size(); ++i) {
    const int64_t run = product(input_dims_[i], axis, input_dims_[i].size());
    for (int64_t o = 0; o < outer; ++o) std::copy_n(dy + o * out_run + start, run, dxs[i] + o * run);
    start += run;
  }
}

}  // namespace splitbrain::exec::cpu
