#include "sim/search/stage_partition.h"

#include <algorithm>

#include "model/block_boundaries.h"

namespace splitbrain::sim {

std::optional<std::vector<int>> partition_stages(const StagePartitionInput& in) {
  const int n = static_cast<int>(in.layer_seconds.size());
  const int stages = in.stages;
  if (stages < 1 || n < stages) return std::nullopt;
  std::vector<double> time_prefix(static_cast<size_t>(n) + 1, 0.0);
  std::vector<int64_t> fixed_prefix(static_cast<size_t>(n) + 1, 0);
  std::vector<int64_t> activation_prefix(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    const auto u = static_cast<size_t>(i);
    time_prefix[u + 1] = time_prefix[u] + in.layer_seconds[u];
    fixed_prefix[u + 1] = fixed_prefix[u] + in.layer_fixed_bytes[u];
    activation_prefix[u + 1] = activation_prefix[u] + in.layer_activation_bytes[u];
  }
  // Time of a stage holding layers [i, j): its layers plus the hand-over into it.
  auto stage_seconds = [&](int i, int j) {
    return time_prefix[static_cast<size_t>(j)] - time_prefix[static_cast<size_t>(i)] +
           (i > 0 ? in.cut_seconds[static_cast<size_t>(i)] : 0.0);
  };
  auto fits = [&](int stage, int i, int j) {
    const int in_flight = in.one_f_one_b ? std::min(in.micro_batches, stages - stage) : in.micro_batches;
    const int64_t bytes =
        fixed_prefix[static_cast<size_t>(j)] - fixed_prefix[static_cast<size_t>(i)] +
        in_flight * (activation_prefix[static_cast<size_t>(j)] - activation_prefix[static_cast<size_t>(i)]);
    return bytes <= in.memory_limit_bytes;
  };

  constexpr double kImpossible = std::numeric_limits<double>::infinity();
  // best[s][j]: the slowest stage when stages 0..s hold layers [0, j); from[s][j]: where stage s starts.
  std::vector<std::vector<double>> best(static_cast<size_t>(stages),
                                        std::vector<double>(static_cast<size_t>(n) + 1, kImpossible));
  std::vector<std::vector<int>> from(static_cast<size_t>(stages), std::vector<int>(static_cast<size_t>(n) + 1, -1));
  for (int j = 1; j <= n; ++j) {
    if (fits(0, 0, j)) best[0][static_cast<size_t>(j)] = stage_seconds(0, j);
  }
  // Where a stage may start, ascending: a model cut only between blocks has few such layers, and
  // the DP below tries each of them (in this order) for every stage and end.
  std::vector<int> starts;
  for (int i = 1; i < n; ++i) {
    if (in.may_start_stage.empty() || in.may_start_stage[static_cast<size_t>(i)]) starts.push_back(i);
  }
  // Stage s < stages - 1 ends where stage s + 1 starts, and the last at n: best[s][j] is read at
  // those ends alone, so only they are filled.
  std::vector<int> ends = starts;
  ends.push_back(n);
  for (int s = 1; s < stages; ++s) {
    const auto S = static_cast<size_t>(s);
    const auto first_start = std::lower_bound(starts.begin(), starts.end(), s);
    for (auto stage_end = std::upper_bound(ends.begin(), ends.end(), s); stage_end != ends.end(); ++stage_end) {
      const int j = *stage_end;
      // Starts from the nearest down: a stage that starts earlier holds more layers, so once it
      // does not fit, or its layers alone (hand-overs cost >= 0) are slower than the best found,
      // no earlier start can do better. `<=` keeps, among equals, the earliest start.
      double& best_here = best[S][static_cast<size_t>(j)];
      const auto last_start = std::lower_bound(first_start, starts.end(), j);
      for (auto it = last_start; it != first_start;) {
        const int i = *--it;
        if (time_prefix[static_cast<size_t>(j)] - time_prefix[static_cast<size_t>(i)] > best_here || !fits(s, i, j)) {
          break;
        }
        const double before = best[S - 1][static_cast<size_t>(i)];
        if (before == kImpossible) continue;
        const double slowest = std::max(before, stage_seconds(i, j));
        if (slowest <= best_here) {
          best_here = slowest;
          from[S][static_cast<size_t>(j)] = i;
        }
      }
    }
  }
  if (best[static_cast<size_t>(stages) - 1][static_cast<size_t>(n)] == kImpossible) return std::nullopt;
  std::vector<int> stage_of_layer(static_cast<size_t>(n), 0);
  int end = n;
  for (int s = stages - 1; s > 0; --s) {
    const int start = from[static_cast<size_t>(s)][static_cast<size_t>(end)];
    for (int i = start; i < end; ++i) stage_of_layer[static_cast<size_t>(i)] = s;
    end = start;
  }
  return stage_of_layer;
}

std::vector<bool> stage_starts_between_blocks(const model::Model& model, int stages) {
  std::vector<bool> may_start = model::block_starts(model);
  const auto starts = std::count(may_start.begin(), may_start.end(), true);
  if (starts < stages - 1) std::fill(may_start.begin(), may_start.end(), true);
  return may_start;
}

}  // namespace splitbrain::sim
