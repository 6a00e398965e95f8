#include "exec/cpu/dropout.h"

#include <cmath>
#include <string>

#include "exec/cpu/dnnl_check.h"

namespace splitbrain::exec::cpu {

namespace {

uint64_t splitmix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// One hash per (seed, step, layer); the element index is mixed in last, per element.
uint64_t stream_key(const DropoutKey& key) { return splitmix64(splitmix64(splitmix64(key.seed) ^ key.step) ^ key.layer); }

// Drop iff the hash's top 32 bits fall below p * 2^32 (p = 1 drops all: threshold 2^32).
uint64_t threshold(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw KernelArgumentError("dropout: probability " + std::to_string(p) + " is not in [0, 1]");
  return static_cast<uint64_t>(std::ldexp(p, 32));
}

float keep_scale(double p) { return p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f; }

bool keeps(uint64_t stream, uint64_t limit, uint64_t index) { return (splitmix64(stream ^ index) >> 32) >= limit; }

void check(const DropoutBlock& b) {
  const std::size_t rank = b.global_shape.size();
  if (rank == 0 || b.offset.size() != rank || b.local_shape.size() != rank)
    throw KernelArgumentError("dropout: global_shape, offset and local_shape need the same rank (> 0)");
  for (std::size_t d = 0; d < rank; ++d)
    if (b.offset[d] < 0 || b.local_shape[d] < 0 || b.offset[d] + b.local_shape[d] > b.global_shape[d])
      throw KernelArgumentError("dropout: the local block does not fit the global shape in dimension " +
                                std::to_string(d));
}

}  // namespace

int64_t DropoutBlock::local_elements() const {
  int64_t n = 1;
  for (int64_t d : local_shape) n *= d;
  return n;
}

bool dropout_keeps(const DropoutKey& key, double p, uint64_t index) {
  return keeps(stream_key(key), threshold(p), index);
}

void dropout_forward(const DropoutKey& key, double p, const DropoutBlock& block, const float* x, float* y,
                     uint8_t* mask) {
  check(block);
  const uint64_t stream = stream_key(key), limit = threshold(p);
  const float scale = keep_scale(p);
  const int64_t local = block.local_elements();
  if (local == 0) return;
  const std::size_t rank = block.global_shape.size(), last = rank - 1;
  // Global row-major strides; walk the local block row by row (the last dimension is contiguous
  // in both), carrying an odometer over the outer dimensions.
  std::vector<int64_t> stride(rank, 1);
  for (std::size_t d = last; d > 0; --d) stride[d - 1] = stride[d] * block.global_shape[d];
  std::vector<int64_t> at(rank, 0);
  const int64_t row = block.local_shape[last];
  for (int64_t begin = 0; begin < local; begin += row) {
    int64_t global = 0;
    for (std::size_t d = 0; d < rank; ++d) global += (block.offset[d] + at[d]) * stride[d];
    for (int64_t i = 0; i < row; ++i) {
      const bool keep = keeps(stream, limit, static_cast<uint64_t>(global + i));
      mask[begin + i] = keep ? 1 : 0;
      y[begin + i] = keep ? x[begin + i] * scale : 0.0f;
    }
    for (std::size_t d = last; d > 0; --d) {  // next row: advance the outer dimensions
      if (++at[d - 1] < block.local_shape[d - 1]) break;
      at[d - 1] = 0;
    }
  }
}

void dropout_backward(double p, int64_t elements, const uint8_t* mask, const float* dy, float* dx) {
  threshold(p);  // validates p
  const float scale = keep_scale(p);
  for (int64_t i = 0; i < elements; ++i) dx[i] = mask[i] ? dy[i] * scale : 0.0f;
}

}  // namespace splitbrain::exec::cpu
