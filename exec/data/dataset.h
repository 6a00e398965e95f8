#pragma once
// A training data set as the executor sees it: a fixed number of labelled samples of one shape,
// read by global sample index. Ranks never hold "their part" of a data set; they ask for the
// indices of their shard of each batch (epoch_sampler.h), so any layout of the batch dimension
// over ranks works without re-sharding files.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace splitbrain::exec::data {

// Per-sample shape, NCHW with N left out (as model/ keeps shapes).
struct SampleShape {
  int64_t channels = 1;
  int64_t height = 1;
  int64_t width = 1;

  int64_t elements() const { return channels * height * width; }
  bool operator==(const SampleShape&) const = default;
};

// Which half of a data set: the one trained on, or the held-out one.
enum class Split { kTrain, kTest };

std::string_view to_string(Split split);
// "train" or "test"; anything else is an InputError listing both.
Split parse_split(std::string_view text);

// Pixel normalisation of the image data sets: x = (byte / 255 - mean[c]) / stddev[c] for channel c.
// The statistics are the usual published ones (torchvision examples), computed over the training
// split, so a model trained here sees the inputs a PyTorch reference run would see.
struct Normalization {
  std::vector<float> mean;
  std::vector<float> stddev;
};

// Fashion-MNIST: mean 0.2860, std 0.3530 (one channel).
Normalization fashion_mnist_normalization();
// CIFAR-10 per channel (R, G, B): means (0.4914, 0.4822, 0.4465), stds (0.2470, 0.2435, 0.2616).
Normalization cifar10_normalization();

class Dataset {
 public:
  virtual ~Dataset() = default;

  // For messages and logs, e.g. "fashion-mnist train (/usr/share/datasets/fashion-mnist)".
  virtual std::string description() const = 0;
  virtual int64_t sample_count() const = 0;
  virtual SampleShape sample_shape() const = 0;
  // Labels lie in [0, class_count()).
  virtual int32_t class_count() const = 0;

  // Fills images[i * shape.elements() ...] (CHW float32, normalised) and labels[i] for each
  // sample_indices[i]. Throws std::out_of_range for an index outside [0, sample_count()): the
  // indices come from the sampler, so a bad one is a bug, not bad input.
  virtual void read(std::span<const int64_t> sample_indices, float* images, int32_t* labels) const = 0;

 protected:
  // Shared by the implementations so every reader reports a bad index the same way.
  void check_indices(std::span<const int64_t> sample_indices) const;
};

}  // namespace splitbrain::exec::data
