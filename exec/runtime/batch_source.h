#pragma once
// Where a training step's samples come from. The runtime asks only for the samples its rank
// holds (its block of the batch dimension), so each rank reads only its shard.

#include <cstdint>
#include <vector>

namespace splitbrain::exec {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Samples [first, first + count) of step `step`'s global batch, whole, NCHW float32 (token
  // models: their token ids as floats).
  virtual void images(int64_t step, int64_t first, int64_t count, float* out) = 0;
  // One label per sample; for a sequence loss one per position, sample-major (count * positions).
  virtual std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) = 0;
};

}  // namespace splitbrain::exec
