#pragma once
// The error every backend's kernels throw when built or called with shapes or attributes they
// cannot take: a programming error of the caller, not of the library. The message names the
// kernel and the field.

#include <stdexcept>

namespace splitbrain::exec::kernels {

class KernelArgumentError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace splitbrain::exec::kernels
