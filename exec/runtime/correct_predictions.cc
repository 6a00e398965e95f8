#include "exec/runtime/correct_predictions.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace splitbrain::exec {

PredictionCount count_correct(const comm::LocalArray& logits, const std::vector<int32_t>& labels,
                              int64_t first_position) {
  const int64_t samples = logits.shape.front();
  const int64_t classes = logits.shape.back();
  const int64_t local_positions = logits.shape.size() == 3 ? logits.shape[1] : 1;
  const int64_t positions = samples > 0 ? static_cast<int64_t>(labels.size()) / samples : 1;
  if (static_cast<int64_t>(labels.size()) != samples * positions || first_position + local_positions > positions) {
    throw std::logic_error("count_correct: " + std::to_string(labels.size()) + " labels do not cover " +
                           std::to_string(samples) + " samples at positions from " + std::to_string(first_position));
  }
  PredictionCount count;
  for (int64_t n = 0; n < samples; ++n) {
    for (int64_t t = 0; t < local_positions; ++t) {
      const auto row = logits.values.begin() + (n * local_positions + t) * classes;
      const auto best = std::max_element(row, row + classes) - row;
      count.correct += best == labels[static_cast<size_t>(n * positions + first_position + t)] ? 1.0 : 0.0;
      count.seen += 1.0;
    }
  }
  return count;
}

}  // namespace splitbrain::exec
