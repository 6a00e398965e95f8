#include "exec/data/dataset.h"

#include <fmt/format.h>

#include <stdexcept>

#include "model/errors.h"

namespace splitbrain::exec::data {

std::string_view to_string(Split split) { return split == Split::kTrain ? "train" : "test"; }

Split parse_split(std::string_view text) {
  if (text == "train") return Split::kTrain;
  if (text == "test") return Split::kTest;
  throw InputError(fmt::format("unknown data split '{}' (choices: train, test)", text));
}

Normalization fashion_mnist_normalization() { return {{0.2860f}, {0.3530f}}; }

Normalization cifar10_normalization() { return {{0.4914f, 0.4822f, 0.4465f}, {0.2470f, 0.2435f, 0.2616f}}; }

void Dataset::check_indices(std::span<const int64_t> sample_indices) const {
  const int64_t count = sample_count();
  for (const int64_t index : sample_indices) {
    if (index < 0 || index >= count) {
      throw std::out_of_range(fmt::format("{}: sample index {} outside [0, {})", description(), index, count));
    }
  }
}

}  // namespace splitbrain::exec::data
