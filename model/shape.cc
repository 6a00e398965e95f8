#include "model/shape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <numeric>

namespace splitbrain::model {

int64_t num_elements(const Shape& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

std::string shape_to_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

Shape with_batch(const Shape& per_sample, int64_t batch) {
  Shape shape{batch};
  shape.insert(shape.end(), per_sample.begin(), per_sample.end());
  return shape;
}

}  // namespace splitbrain::model
