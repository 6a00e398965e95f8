#include "exec/data/byte_image_dataset.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace splitbrain::exec::data {

ByteImageDataset::ByteImageDataset(std::string description, SampleShape shape, int32_t class_count,
                                   const Normalization& normalization, std::vector<uint8_t> pixels,
                                   std::vector<uint8_t> labels)
    : description_(std::move(description)),
      shape_(shape),
      class_count_(class_count),
      pixels_(std::move(pixels)),
      labels_(std::move(labels)) {
  if (normalization.mean.size() != static_cast<size_t>(shape.channels) ||
      normalization.stddev.size() != static_cast<size_t>(shape.channels)) {
    throw std::invalid_argument(fmt::format("{}: normalisation has {} means and {} stddevs for {} channels",
                                            description_, normalization.mean.size(), normalization.stddev.size(),
                                            shape.channels));
  }
  if (pixels_.size() != labels_.size() * static_cast<size_t>(shape.elements())) {
    throw std::invalid_argument(fmt::format("{}: {} pixel bytes for {} samples of {} elements", description_,
                                            pixels_.size(), labels_.size(), shape.elements()));
  }
  for (const uint8_t label : labels_) {
    if (label >= class_count_)
      throw std::invalid_argument(fmt::format("{}: label {} out of range", description_, label));
  }
  lookup_.resize(static_cast<size_t>(shape.channels));
  for (size_t c = 0; c < lookup_.size(); ++c) {
    for (int byte = 0; byte < 256; ++byte) {
      // Same arithmetic as torchvision's ToTensor + Normalize, in float, so values match bit for bit
      // where float rounding allows.
      const float scaled = static_cast<float>(byte) / 255.0f;
      lookup_[c][static_cast<size_t>(byte)] = (scaled - normalization.mean[c]) / normalization.stddev[c];
    }
  }
}

void ByteImageDataset::read(std::span<const int64_t> sample_indices, float* images, int32_t* labels) const {
  check_indices(sample_indices);
  const size_t plane = static_cast<size_t>(shape_.height * shape_.width);
  const size_t elements = static_cast<size_t>(shape_.elements());
  for (size_t i = 0; i < sample_indices.size(); ++i) {
    const size_t sample = static_cast<size_t>(sample_indices[i]);
    const uint8_t* source = pixels_.data() + sample * elements;
    float* destination = images + i * elements;
    for (size_t c = 0; c < lookup_.size(); ++c) {
      const std::array<float, 256>& table = lookup_[c];
      for (size_t p = 0; p < plane; ++p) destination[c * plane + p] = table[source[c * plane + p]];
    }
    labels[i] = labels_[sample];
  }
}

}  // namespace splitbrain::exec::data
