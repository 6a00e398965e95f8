#pragma once
// Dropout whose mask does not depend on how the tensor is split across ranks: element i of the
// GLOBAL tensor (row-major index) is kept iff a counter-based hash of (seed, step, layer, i) is
// at or above p, so every rank computes the bits of its own block without communication, and
// the same plan on 1 or 64 ranks drops the same elements. Kept elements are scaled by 1/(1-p).
// The hash is shared by every backend (dropout_mask.h), so they all drop the same elements.

#include <cstdint>
#include <vector>

namespace splitbrain::exec::kernels {

// What the mask depends on besides the element's position.
struct DropoutKey {
  uint64_t seed = 0;
  uint64_t step = 0;
  uint64_t layer = 0;
};

// Where the local tensor lies in the global one: same rank for all three, row-major.
// local_shape[d] + offset[d] <= global_shape[d].
struct DropoutBlock {
  std::vector<int64_t> global_shape;
  std::vector<int64_t> offset;
  std::vector<int64_t> local_shape;

  int64_t local_elements() const;
};

// Built for one layer's drop probability p (0 <= p <= 1, else KernelArgumentError).
class DropoutKernel {
 public:
  virtual ~DropoutKernel() = default;
  virtual double probability() const = 0;

  // mask[i] = 1 for kept local elements, 0 for dropped; y = x * mask / (1 - p) (0 when p = 1).
  // x == y is allowed. The mask (1 byte per element) is kept by the caller for backward.
  virtual void forward(const DropoutKey& key, const DropoutBlock& block, const float* x, float* y, uint8_t* mask) = 0;
  // dx = dy * mask / (1 - p). dx == dy is allowed.
  virtual void backward(int64_t elements, const uint8_t* mask, const float* dy, float* dx) = 0;
};

}  // namespace splitbrain::exec::kernels
