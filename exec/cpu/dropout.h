#pragma once
// Dropout whose mask does not depend on how the tensor is split across ranks: element i of the
// GLOBAL tensor (row-major index) is kept iff a counter-based hash of (seed, step, layer, i) is
// at or above p, so every rank computes the bits of its own block without communication, and
// the same plan on 1 or 64 ranks drops the same elements. Kept elements are scaled by 1/(1-p).
//
// Own code: oneDNN 2.6 has no dropout primitive, and a stateful RNG would tie the mask to the
// split. The hash is SplitMix64's finaliser (Steele et al. 2014), chained over the four inputs.

#include <cstdint>
#include <vector>

namespace splitbrain::exec::cpu {

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

// Whether global element `index` is kept (p = drop probability, 0 <= p <= 1).
bool dropout_keeps(const DropoutKey& key, double p, uint64_t index);

// mask[i] = 1 for kept local elements, 0 for dropped; y = x * mask / (1 - p) (0 when p = 1).
// x == y is allowed. The mask (1 byte per element) is kept for backward.
void dropout_forward(const DropoutKey& key, double p, const DropoutBlock& block, const float* x, float* y,
                     uint8_t* mask);

// dx = dy * mask / (1 - p). dx == dy is allowed.
void dropout_backward(double p, int64_t elements, const uint8_t* mask, const float* dy, float* dx);

}  // namespace splitbrain::exec::cpu
