#pragma once
// The dimensions of a local row-major tensor, outermost first (batch included). The same type
// as oneDNN's memory::dims (a vector of int64_t), so the CPU kernels hand them on unconverted.

#include <cstdint>
#include <vector>

namespace splitbrain::exec::kernels {

using Dims = std::vector<int64_t>;

}  // namespace splitbrain::exec::kernels
