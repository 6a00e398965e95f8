#include "sim/search/parallel_search.h"

namespace splitbrain::sim {

int search_thread_count(const PlannerRequest& request) {
  if (request.search_threads > 0) return request.search_threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

void add_stats(SearchStats& total, const SearchStats& part) {
  total.plans_simulated += part.plans_simulated;
  total.memory_walks += part.memory_walks;
  total.layer_prices += part.layer_prices;
  total.meshes_searched += part.meshes_searched;
  if (total.plans_left_out == 0) total.first_left_out_reason = part.first_left_out_reason;
  total.plans_left_out += part.plans_left_out;
}

}  // namespace splitbrain::sim
