#pragma once
// Evaluation's count: the rows of the logits whose highest logit is the label. Image nets give
// [rows, classes] logits and one label per row; sequence models [samples, positions, classes]
// with one label per position, and a rank whose positions are split holds positions
// [first_position, first_position + local positions) of each sample.

#include <cstdint>
#include <vector>

#include "exec/comm/local_array.h"

namespace splitbrain::exec {

struct PredictionCount {
  double correct = 0.0;
  double seen = 0.0;
};

// `labels`: one per sample, or per position of each sample (every position, sample-major).
PredictionCount count_correct(const comm::LocalArray& logits, const std::vector<int32_t>& labels,
                              int64_t first_position);

}  // namespace splitbrain::exec
