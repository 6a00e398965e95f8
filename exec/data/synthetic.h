#pragma once
// A synthetic data set of any shape and class count, for runs without data files (benchmarks,
// CI, models whose real data we do not ship). Each sample's label and every pixel are hashes of
// (seed, split, sample, element), so nothing is stored and every rank generates the same sample.
//
// Learnable on purpose: sample = prototype[label] + noise. Prototypes are blocky (constant over
// 4x4 pixel blocks at 28x28 and above) so that they survive convolutions and pooling; noise is
// uniform in [-1, 1) per pixel. A training smoke test therefore sees the loss fall within a few
// steps. Values come out roughly zero-mean and unit-scale already, so no normalisation applies.

#include <cstdint>

#include "exec/data/dataset.h"

namespace splitbrain::exec::data {

struct SyntheticOptions {
  int32_t classes = 10;
  SampleShape shape{1, 28, 28};
  int64_t train_samples = 60000;
  int64_t test_samples = 10000;
  uint64_t seed = 0;
};

class SyntheticDataset : public Dataset {
 public:
  // Throws InputError for fewer than 2 classes, a non-positive dimension or sample count, or a
  // sample larger than 2^28 elements.
  SyntheticDataset(const SyntheticOptions& options, Split split);

  std::string description() const override;
  int64_t sample_count() const override { return samples_; }
  SampleShape sample_shape() const override { return options_.shape; }
  int32_t class_count() const override { return options_.classes; }
  void read(std::span<const int64_t> sample_indices, float* images, int32_t* labels) const override;

  // The label of one sample, without generating its pixels.
  int32_t label(int64_t sample) const;

 private:
  SyntheticOptions options_;
  Split split_;
  int64_t samples_;
  int64_t block_;  // side of the square pixel blocks a prototype is constant over
};

}  // namespace splitbrain::exec::data
