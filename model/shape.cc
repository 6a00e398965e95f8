#include "model/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/errors.h"

namespace splitbrain::model {

int64_t checked_product(int64_t a, int64_t b, std::string_view what) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw SizeOverflowError(fmt::format("{}: {} x {} does not fit in 64 bits", what, a, b));
  }
  return product;
}

int64_t checked_sum(int64_t a, int64_t b, std::string_view what) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw SizeOverflowError(fmt::format("{}: {} + {} does not fit in 64 bits", what, a, b));
  }
  return sum;
}

int64_t num_elements(const Shape& shape) {
  int64_t elements = 1;
  for (int64_t dimension : shape) {
    if (__builtin_mul_overflow(elements, dimension, &elements)) {
      throw SizeOverflowError(fmt::format("shape {} has more elements than fit in 64 bits", shape_to_string(shape)));
    }
  }
  return elements;
}

std::string shape_to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Shape with_batch(const Shape& per_sample, int64_t batch) {
  Shape shape{batch};
  shape.insert(shape.end(), per_sample.begin(), per_sample.end());
  return shape;
}

}  // namespace splitbrain::model
