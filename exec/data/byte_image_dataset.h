#pragma once
// The in-memory data set behind Fashion-MNIST and CIFAR-10: 8-bit pixels (CHW per sample) and
// 8-bit labels, decoded once, normalised on the way out. Reading a batch is a gather plus a
// 256-entry table lookup per channel, so it costs about as much as a memcpy of the floats.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "exec/data/dataset.h"

namespace splitbrain::exec::data {

class ByteImageDataset : public Dataset {
 public:
  // pixels: sample_count * shape.elements() bytes, sample after sample, each CHW.
  // labels: one byte per sample, each < class_count (checked by the file readers, which can name
  // the file and the record; here it is an invariant, so a violation is std::invalid_argument).
  ByteImageDataset(std::string description, SampleShape shape, int32_t class_count, const Normalization& normalization,
                   std::vector<uint8_t> pixels, std::vector<uint8_t> labels);

  std::string description() const override { return description_; }
  int64_t sample_count() const override { return static_cast<int64_t>(labels_.size()); }
  SampleShape sample_shape() const override { return shape_; }
  int32_t class_count() const override { return class_count_; }
  void read(std::span<const int64_t> sample_indices, float* images, int32_t* labels) const override;

 private:
  std::string description_;
  SampleShape shape_;
  int32_t class_count_;
  // lookup_[c][byte] = (byte / 255 - mean[c]) / stddev[c], computed once.
  std::vector<std::array<float, 256>> lookup_;
  std::vector<uint8_t> pixels_;
  std::vector<uint8_t> labels_;
};

}  // namespace splitbrain::exec::data
