#include "sim/collective_prices.h"

#include "sim/plan_collective_cost.h"

namespace splitbrain::sim {

const CollectivePrices::Price& CollectivePrices::of(const plans::Collective& collective, int rank) {
  Key key{rank,
          collective.kind,
          collective.axes,
          collective.buffer_bytes,
          collective.element_bytes,
          collective.halo_rows * collective.row_bytes,
          collective.source_index,
          collective.destination_index};
  auto it = prices_.find(key);
  if (it == prices_.end()) {
    const Price price{plan_collective_seconds(cluster_, mesh_, collective, rank),
                      plan_collective_level(cluster_, mesh_, collective, rank)};
    it = prices_.emplace(std::move(key), price).first;
  }
  return it->second;
}

double CollectivePrices::seconds_of(const std::vector<plans::Collective>& collectives, int rank) {
  double seconds = 0.0;
  for (const plans::Collective& c : collectives) seconds += of(c, rank).seconds;
  return seconds;
}

}  // namespace splitbrain::sim
