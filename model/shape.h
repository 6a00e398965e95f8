#pragma once
// Tensor shapes. The model graph stores shapes *per sample*: the batch dimension N is left out,
// so one graph serves every batch size. An image activation is {C, H, W} (NCHW with N dropped),
// a sequence activation is {T, D}, a flat feature vector is {F}.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace splitbrain::model {

using Shape = std::vector<int64_t>;

// Height and width of a 2-D window (kernel, stride, padding, dilation, pooled output).
struct Size2 {
  int64_t h = 0;
  int64_t w = 0;
  friend bool operator==(const Size2&, const Size2&) = default;
};

// Sizes are checked where they are made, so no count wraps around silently: the product of the
// dimensions, a * b and a + b (`what` names the quantity), throw SizeOverflowError (model/errors.h)
// when they overflow 64 bits.
int64_t num_elements(const Shape& shape);
int64_t checked_product(int64_t a, int64_t b, std::string_view what);
int64_t checked_sum(int64_t a, int64_t b, std::string_view what);
// "[3, 224, 224]"
std::string shape_to_string(const Shape& shape);
// The shape with a leading batch dimension: {batch, dims...}.
Shape with_batch(const Shape& per_sample, int64_t batch);

}  // namespace splitbrain::model
