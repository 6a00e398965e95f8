#pragma once
// Where a training step's samples come from. The runtime asks only for the samples its rank
// holds (its block of the batch dimension), so each rank reads only its shard.

#include <cstdint>
#include <span>
#include <vector>

namespace splitbrain::exec {

class BatchSource {
 public:
  virtual ~BatchSource() = default;
  // Samples [first, first + count) of step `step`'s global batch, whole, NCHW float32 (token
  // models: their token ids as floats).
  virtual void images(int64_t step, int64_t first, int64_t count, float* out) = 0;
  // The same samples where the source already holds them, valid and unchanged until it is asked
  // for a later step's samples, so the runtime uploads them without a copy and without waiting
  // for the upload within the step (a batch of 512 CIFAR images is 6.3 MB); empty where it does
  // not hold them, and then the runtime asks images() for a copy.
  virtual std::span<const float> images_held(int64_t /*step*/, int64_t /*first*/, int64_t /*count*/) { return {}; }
  // One label per sample; for a sequence loss one per position, sample-major (count * positions).
  virtual std::vector<int32_t> labels(int64_t step, int64_t first, int64_t count) = 0;
};

}  // namespace splitbrain::exec
