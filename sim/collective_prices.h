#pragma once
// A plan's collectives priced once each: deep models repeat the same collectives block after
// block (a transformer's 96 blocks make the same all-reduces), and sim::plan_collective_seconds
// builds the group and its shape on the cluster for every call. What the step's pricing
// (simulation.cc) and the step-time bound (step_time_bound.h) both read.

#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "plans/collective.h"
#include "plans/mesh.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

class CollectivePrices {
 public:
  // Both must outlive this.
  CollectivePrices(const Cluster& cluster, const plans::Mesh& mesh) : cluster_(cluster), mesh_(mesh) {}

  struct Price {
    double seconds = 0.0;  // plan_collective_seconds
    int level = -1;        // plan_collective_level
  };
  // The price of one run of `collective` in the group that holds `rank`.
  const Price& of(const plans::Collective& collective, int rank);
  // The seconds of running each of `collectives` in turn.
  double seconds_of(const std::vector<plans::Collective>& collectives, int rank);

 private:
  // Every field of a collective that its price reads, and the rank.
  using Key = std::tuple<int, plans::CollectiveKind, std::vector<int>, int64_t, int64_t, int64_t, int, int>;
  const Cluster& cluster_;
  const plans::Mesh& mesh_;
  std::map<Key, Price> prices_;
};

}  // namespace splitbrain::sim
