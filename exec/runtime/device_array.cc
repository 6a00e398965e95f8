#include "exec/runtime/device_array.h"

#include <stdexcept>
#include <utility>

namespace splitbrain::exec {

int64_t shape_elements(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw std::invalid_argument("an array shape has a negative extent");
    count *= extent;
  }
  return count;
}

DeviceArray::DeviceArray(std::vector<int64_t> shape) : shape_(std::move(shape)), elements_(shape_elements(shape_)) {}

}  // namespace splitbrain::exec
