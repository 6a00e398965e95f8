#include "sim/link_sharing.h"

#include <gtest/gtest.h>

#include <vector>

#include "plans/mesh.h"
#include "sim/collective_cost.h"
#include "test_clusters.h"

namespace splitbrain::sim {
namespace {
using plans::CollectiveKind;

// Two nodes of two ranks joined by one port each: the emulated nodes' set-up.
Cluster two_nodes_of_two(bool uplink_shared) {
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].fan_out = 2;
  cluster.levels[1].fan_out = 2;
  cluster.levels[0].link = {10e9, 1e-6};
  cluster.levels[1].link = {0.1e9, 20e-6};
  cluster.levels[1].uplink_shared = uplink_shared;
  return cluster;
}

TEST(LinkSharing, CountsTheGroupsThatLeaveOneNodeAtOnce) {
  const Cluster cluster = two_nodes_of_two(true);
  // Data-parallel pairs across the nodes: both leave each node at once.
  const std::vector<std::vector<int>> pairs = {{0, 2}, {1, 3}};
  EXPECT_EQ(groups_crossing_levels(cluster, pairs, pairs[0]), (std::vector<int>{1, 2}));
  // One group of all four ranks: one ring, leaving each node once.
  const std::vector<std::vector<int>> all = {{0, 1, 2, 3}};
  EXPECT_EQ(groups_crossing_levels(cluster, all, all[0]), (std::vector<int>{1, 1}));
  // Groups inside the nodes cross nothing between them.
  const std::vector<std::vector<int>> inside = {{0, 1}, {2, 3}};
  EXPECT_EQ(groups_crossing_levels(cluster, inside, inside[1]), (std::vector<int>{1, 1}));
}

TEST(LinkSharing, MeshAxesRunTheirGroupsTogether) {
  const Cluster cluster = two_nodes_of_two(true);
  const plans::Mesh mesh({{"data", 2}, {"model", 2}});  // rank = data * 2 + model
  const int data = mesh.axis_index("data");
  const int model = mesh.axis_index("model");
  EXPECT_EQ(groups_crossing_levels(cluster, mesh, {data}, 1), (std::vector<int>{1, 2}));   // {0, 2}, {1, 3}
  EXPECT_EQ(groups_crossing_levels(cluster, mesh, {model}, 1), (std::vector<int>{1, 1}));  // {0, 1}, {2, 3}
  EXPECT_EQ(groups_crossing_levels(cluster, mesh, {data, model}, 3), (std::vector<int>{1, 1}));
  // No shared level: nothing is counted.
  EXPECT_EQ(groups_crossing_levels(two_nodes_of_two(false), mesh, {data}, 1), (std::vector<int>{1, 1}));
}

TEST(LinkSharing, GroupsCrossingAtOnceSplitAPortNotAPortPerDevice) {
  const std::vector<int> pair = {0, 2};
  const std::vector<int> sharing = {1, 2};
  // A pair's ring all-reduce, 2(n-1) alpha + 2(n-1)/n S beta with n = 2, over the cluster level:
  // 2 * 20e-6 + 1e6 / 0.1e9 = 10.04e-3 s alone; two pairs through one port:
  // 2 * 20e-6 + 1e6 / 0.05e9 = 20.04e-3 s.
  EXPECT_NEAR(collective_seconds(two_nodes_of_two(true), CollectiveKind::all_reduce, pair, 1'000'000), 10.04e-3, 1e-12);
  EXPECT_NEAR(collective_seconds(two_nodes_of_two(true), CollectiveKind::all_reduce, pair, 1'000'000, sharing),
              20.04e-3, 1e-12);
  // With a port per device the second pair costs the first nothing.
  EXPECT_NEAR(collective_seconds(two_nodes_of_two(false), CollectiveKind::all_reduce, pair, 1'000'000, sharing),
              10.04e-3, 1e-12);
}

}  // namespace
}  // namespace splitbrain::sim
