#pragma once
// How wide the record of a max-pooling window's winner is. Max pooling keeps, for its backward,
// which element of each window won: one byte per output element while a window has at most 255
// elements (oneDNN's u8 workspace), four beyond. The cost model prices the record by this rule
// and the CUDA kernel sizes its record by it, so predicted and measured memory agree.

#include <cstdint>

namespace splitbrain::model {

constexpr int64_t kMaxPoolLargestByteIndexedWindow = 255;

constexpr int64_t max_pool_index_bytes(int64_t window_elements) {
  return window_elements <= kMaxPoolLargestByteIndexedWindow ? 1 : 4;
}

}  // namespace splitbrain::model
