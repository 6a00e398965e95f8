#pragma once
// Copies and fills of whole arrays in a backend's memory, for the ops whose pass is a copy
// (flatten, the gradient of a sum, dropout during evaluation) or a constant (the zero gradient
// of token ids, the loss value the loss layer outputs): the ops never touch elements themselves.

#include <cstdint>
#include <memory>

namespace splitbrain::exec::kernels {

class ArrayKernel {
 public:
  virtual ~ArrayKernel() = default;
  // into[i] = from[i] for i < elements (the arrays may be the same; never partly overlapping).
  virtual void copy(const float* from, float* into, int64_t elements) = 0;
  // into[i] = value for i < elements.
  virtual void fill(float* into, int64_t elements, float value) = 0;
};

// Over host memory: the CPU backend's, and the CUDA backend's while its kernels take host
// arrays (exec/cuda/README.md).
std::unique_ptr<ArrayKernel> make_host_array_kernel();

}  // namespace splitbrain::exec::kernels
