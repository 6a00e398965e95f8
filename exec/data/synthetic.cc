#include "exec/data/synthetic.h"

#include <fmt/format.h>

#include <algorithm>

#include "exec/data/seeded_hash.h"
#include "model/errors.h"

namespace splitbrain::exec::data {
namespace {

// Distinct streams: prototypes are shared by both splits (the test set must come from the same
// classes), labels and noise are drawn per split so test samples are not training samples.
constexpr uint64_t kPrototypeStream = 1;
constexpr uint64_t kLabelStream = 2;
constexpr uint64_t kNoiseStream = 3;

constexpr int64_t kMaxSampleElements = int64_t{1} << 28;

}  // namespace

SyntheticDataset::SyntheticDataset(const SyntheticOptions& options, Split split)
    : options_(options),
      split_(split),
      samples_(split == Split::kTrain ? options.train_samples : options.test_samples) {
  const SampleShape& s = options_.shape;
  if (options_.classes < 2) {
    throw InputError(fmt::format("synthetic data: classes={} (need at least 2)", options_.classes));
  }
  if (s.channels < 1 || s.height < 1 || s.width < 1) {
    throw InputError(
        fmt::format("synthetic data: shape {}x{}x{} has a non-positive dimension", s.channels, s.height, s.width));
  }
  if (s.channels > kMaxSampleElements || s.height > kMaxSampleElements || s.width > kMaxSampleElements ||
      s.elements() > kMaxSampleElements) {
    throw InputError(fmt::format("synthetic data: shape {}x{}x{} exceeds {} elements per sample", s.channels, s.height,
                                 s.width, kMaxSampleElements));
  }
  if (samples_ < 1) {
    throw InputError(
        fmt::format("synthetic data: {} samples in the {} split (need at least 1)", samples_, to_string(split)));
  }
  block_ = std::max<int64_t>(1, std::min(s.height, s.width) / 7);
}

std::string SyntheticDataset::description() const {
  const SampleShape& s = options_.shape;
  return fmt::format("synthetic {} (classes={}, shape={}x{}x{}, samples={}, seed={})", to_string(split_),
                     options_.classes, s.channels, s.height, s.width, samples_, options_.seed);
}

int32_t SyntheticDataset::label(int64_t sample) const {
  const uint64_t h =
      hash_keys(options_.seed, {kLabelStream, static_cast<uint64_t>(split_), static_cast<uint64_t>(sample)});
  return static_cast<int32_t>(h % static_cast<uint64_t>(options_.classes));
}

void SyntheticDataset::read(std::span<const int64_t> sample_indices, float* images, int32_t* labels) const {
  check_indices(sample_indices);
  const SampleShape& s = options_.shape;
  const auto elements = static_cast<size_t>(s.elements());
  for (size_t i = 0; i < sample_indices.size(); ++i) {
    const int64_t sample = sample_indices[i];
    const int32_t y = label(sample);
    labels[i] = y;
    const uint64_t noise_key =
        hash_keys(options_.seed, {kNoiseStream, static_cast<uint64_t>(split_), static_cast<uint64_t>(sample)});
    float* out = images + i * elements;
    size_t e = 0;
    for (int64_t c = 0; c < s.channels; ++c) {
      for (int64_t h = 0; h < s.height; ++h) {
        for (int64_t w = 0; w < s.width; ++w, ++e) {
          const float prototype = unit_symmetric(
              hash_keys(options_.seed, {kPrototypeStream, static_cast<uint64_t>(y), static_cast<uint64_t>(c),
                                        static_cast<uint64_t>(h / block_), static_cast<uint64_t>(w / block_)}));
          out[e] = prototype + unit_symmetric(mix64(noise_key ^ e));
        }
      }
    }
  }
}

}  // namespace splitbrain::exec::data
