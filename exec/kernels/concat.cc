#include "exec/kernels/concat.h"

#include <string>

#include "exec/kernels/kernel_argument_error.h"

namespace splitbrain::exec::kernels {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw KernelArgumentError("ConcatKernel: " + what);
}

int64_t product(const Dims& dims, std::size_t begin, std::size_t end) {
  int64_t p = 1;
  for (std::size_t d = begin; d < end; ++d) p *= dims[d];
  return p;
}

}  // namespace

ConcatGeometry concat_geometry(std::span<const Dims> inputs, int axis) {
  require(!inputs.empty(), "needs at least one input");
  const Dims& first = inputs.front();
  require(axis >= 0 && static_cast<std::size_t>(axis) < first.size(),
          "axis " + std::to_string(axis) + " is out of range");
  const auto at = static_cast<std::size_t>(axis);
  ConcatGeometry geometry;
  geometry.output_dims = first;
  geometry.output_dims[at] = 0;
  for (const Dims& dims : inputs) {
    require(dims.size() == first.size(), "inputs must have the same rank");
    for (std::size_t d = 0; d < dims.size(); ++d) {
      require(dims[d] > 0, "dims must be positive");
      if (d != at)
        require(dims[d] == first[d], "inputs differ in dimension " + std::to_string(d) + " besides the axis");
    }
    geometry.output_dims[at] += dims[at];
  }
  geometry.outer = product(geometry.output_dims, 0, at);
  geometry.output_run = product(geometry.output_dims, at, geometry.output_dims.size());
  int64_t start = 0;
  for (const Dims& dims : inputs) {
    geometry.runs.push_back(product(dims, at, dims.size()));
    geometry.starts.push_back(start);
    start += geometry.runs.back();
  }
  return geometry;
}

void check_concat_inputs(std::size_t given, std::size_t built) {
  require(given == built, "forward got " + std::to_string(given) + " inputs, built for " + std::to_string(built));
}

void check_concat_gradients(std::size_t given, std::size_t built) {
  require(given == built, "backward got " + std::to_string(given) + " gradients, built for " + std::to_string(built));
}

}  // namespace splitbrain::exec::kernels
