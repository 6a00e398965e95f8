#include "model/block_boundaries.h"

#include <algorithm>

namespace splitbrain::model {

std::vector<int> last_readers(const Model& model) {
  std::vector<int> last(static_cast<size_t>(model.size()), -1);
  for (int v = 0; v < model.size(); ++v) {
    for (int u : model.layer(v).inputs) last[static_cast<size_t>(u)] = std::max(last[static_cast<size_t>(u)], v);
  }
  return last;
}

std::vector<bool> block_starts(const Model& model) {
  const int n = model.size();
  const std::vector<int> last_reader = last_readers(model);
  // crossing[i]: the tensors produced before layer i and read at or after it.
  std::vector<int> crossing(static_cast<size_t>(n), 0);
  for (int u = 0; u < n; ++u) {
    for (int i = u + 1; i <= last_reader[static_cast<size_t>(u)] && i < n; ++i) ++crossing[static_cast<size_t>(i)];
  }
  std::vector<bool> starts(static_cast<size_t>(n), false);
  for (int i = 1; i < n; ++i) starts[static_cast<size_t>(i)] = crossing[static_cast<size_t>(i)] == 1;
  return starts;
}

}  // namespace splitbrain::model
