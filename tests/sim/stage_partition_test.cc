// partition_stages against enumerating every way to cut a short model into stages: the same
// slowest stage, or no answer exactly when no cut fits.

#include "sim/search/stage_partition.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

namespace splitbrain::sim {
namespace {

struct Outcome {
  double slowest_seconds = std::numeric_limits<double>::infinity();  // infinity: no cut fits
};

// Seconds of the slowest stage of `stage_of_layer`, infinity when a stage is over the memory limit
// or starts where it may not.
double slowest_stage(const StagePartitionInput& in, const std::vector<int>& stage_of_layer) {
  double slowest = 0;
  for (int s = 0; s < in.stages; ++s) {
    const auto first = std::find(stage_of_layer.begin(), stage_of_layer.end(), s) - stage_of_layer.begin();
    const auto last = std::find_if(stage_of_layer.begin(), stage_of_layer.end(), [&](int t) { return t > s; }) -
                      stage_of_layer.begin();
    if (first >= last) return std::numeric_limits<double>::infinity();
    if (first > 0 && !in.may_start_stage.empty() && !in.may_start_stage[static_cast<size_t>(first)]) {
      return std::numeric_limits<double>::infinity();
    }
    double seconds = first > 0 ? in.cut_seconds[static_cast<size_t>(first)] : 0.0;
    int64_t fixed = 0, activations = 0;
    for (auto i = first; i < last; ++i) {
      seconds += in.layer_seconds[static_cast<size_t>(i)];
      fixed += in.layer_fixed_bytes[static_cast<size_t>(i)];
      activations += in.layer_activation_bytes[static_cast<size_t>(i)];
    }
    const int in_flight = in.one_f_one_b ? std::min(in.micro_batches, in.stages - s) : in.micro_batches;
    if (fixed + in_flight * activations > in.memory_limit_bytes) return std::numeric_limits<double>::infinity();
    slowest = std::max(slowest, seconds);
  }
  return slowest;
}

// Every non-decreasing assignment of n layers to stages 0..stages-1 that uses each stage.
Outcome enumerate(const StagePartitionInput& in) {
  const int n = static_cast<int>(in.layer_seconds.size());
  Outcome best;
  std::vector<int> cut(static_cast<size_t>(in.stages) - 1);  // stage s + 1 starts at cut[s]
  std::function<void(int, int)> place = [&](int s, int from) {
    if (s == in.stages - 1) {
      std::vector<int> stage_of_layer(static_cast<size_t>(n), 0);
      for (int t = 0; t + 1 < in.stages; ++t) {
        for (int i = cut[static_cast<size_t>(t)]; i < n; ++i) stage_of_layer[static_cast<size_t>(i)] = t + 1;
      }
      best.slowest_seconds = std::min(best.slowest_seconds, slowest_stage(in, stage_of_layer));
      return;
    }
    for (int start = from; start < n; ++start) {
      cut[static_cast<size_t>(s)] = start;
      place(s + 1, start + 1);
    }
  };
  place(0, 1);
  return best;
}

TEST(StagePartition, FindsTheSlowestStageThatEnumeratingEveryCutFinds) {
  std::mt19937 random(7);
  int answered = 0, refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    StagePartitionInput in;
    const int n = 2 + static_cast<int>(random() % 9);
    in.stages = 1 + static_cast<int>(random() % std::min(n, 5));
    in.micro_batches = 1 + static_cast<int>(random() % 6);
    in.one_f_one_b = random() % 2 == 0;
    for (int i = 0; i < n; ++i) {
      // Few distinct values: ties between cuts are common, as between a transformer's blocks.
      in.layer_seconds.push_back(static_cast<double>(random() % 4));
      in.layer_fixed_bytes.push_back(static_cast<int64_t>(random() % 5));
      in.layer_activation_bytes.push_back(static_cast<int64_t>(random() % 3));
      in.cut_seconds.push_back(static_cast<double>(random() % 3) * 0.5);
    }
    if (random() % 2 == 0) in.memory_limit_bytes = 6 + static_cast<int64_t>(random() % 20);
    if (random() % 3 == 0) {
      for (int i = 0; i < n; ++i) in.may_start_stage.push_back(random() % 3 != 0);
    }
    SCOPED_TRACE(trial);
    const Outcome expected = enumerate(in);
    const std::optional<std::vector<int>> found = partition_stages(in);
    if (expected.slowest_seconds == std::numeric_limits<double>::infinity()) {
      EXPECT_FALSE(found.has_value());
      ++refused;
      continue;
    }
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(slowest_stage(in, *found), expected.slowest_seconds);
    ++answered;
  }
  // Both outcomes were exercised.
  EXPECT_GT(answered, 100);
  EXPECT_GT(refused, 20);
}

}  // namespace
}  // namespace splitbrain::sim
