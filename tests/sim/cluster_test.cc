#include "sim/cluster.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "sim/cluster_error.h"
#include "sim/cluster_presets.h"
#include "test_clusters.h"

namespace splitbrain::sim {
namespace {

std::vector<int> iota(int first, int count) {
  std::vector<int> ranks(static_cast<size_t>(count));
  std::iota(ranks.begin(), ranks.end(), first);
  return ranks;
}

TEST(Cluster, DeviceCountIsTheProductOfFanOuts) {
  EXPECT_EQ(device_count(testing::two_level_cluster()), 16);      // 4 x 4
  EXPECT_EQ(device_count(cluster_preset("dgx-a100-80g")), 1024);  // 8 x 128
  EXPECT_EQ(rank_count(cluster_preset("dgx-a100-80g")), 1024);
}

TEST(Cluster, RanksMapContiguouslyOntoDevices) {
  const Cluster cluster = testing::two_level_cluster();
  EXPECT_EQ(device_of_rank(cluster, 0), 0);
  EXPECT_EQ(device_of_rank(cluster, 15), 15);
  EXPECT_THROW(device_of_rank(cluster, 16), ClusterError);
  EXPECT_THROW(device_of_rank(cluster, -1), ClusterError);
}

TEST(Cluster, ExplicitPlacementMapsRanks) {
  Cluster cluster = testing::two_level_cluster();
  cluster.placement = {0, 4, 8, 12};  // one rank per node
  validate_cluster(cluster, "test");
  EXPECT_EQ(rank_count(cluster), 4);
  EXPECT_EQ(device_of_rank(cluster, 1), 4);
  EXPECT_THROW(device_of_rank(cluster, 4), ClusterError);
  const std::vector<int> pair = {0, 1};
  EXPECT_EQ(level_spanned(cluster, pair), 1);  // devices 0 and 4 sit in different nodes
}

TEST(Cluster, LevelSpannedIsTheOutermostBoundaryCrossed) {
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  EXPECT_EQ(level_spanned(cluster, iota(0, 8)), 0);  // one node: NVLink only
  EXPECT_EQ(level_spanned(cluster, iota(8, 8)), 0);  // the second node
  EXPECT_EQ(level_spanned(cluster, iota(4, 8)), 1);  // devices 4..11 straddle nodes 0 and 1
  EXPECT_EQ(level_spanned(cluster, iota(0, 16)), 1);
  EXPECT_EQ(level_spanned(cluster, iota(5, 1)), -1);  // one rank crosses nothing
  EXPECT_EQ(level_spanned(cluster, std::vector<int>{}), -1);
}

TEST(Cluster, GroupShapeCountsMembersPerLevel) {
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  const GroupShape two_nodes = group_shape(cluster, iota(0, 16));
  EXPECT_EQ(two_nodes.spanned_level, 1);
  EXPECT_EQ(two_nodes.fan_in, (std::vector<int>{8, 2}));
  const std::vector<int> one_per_node = {0, 8, 16, 24};
  EXPECT_EQ(group_shape(cluster, one_per_node).fan_in, (std::vector<int>{1, 4}));
  const std::vector<int> uneven = {0, 1, 2, 8};  // 3 ranks in node 0, 1 in node 1
  EXPECT_EQ(group_shape(cluster, uneven).fan_in, (std::vector<int>{3, 2}));
}

TEST(Cluster, CrossedLinksAreTheLevelsWithTraffic) {
  const Cluster cluster = testing::two_level_cluster();
  const auto kind = plans::CollectiveKind::all_reduce;
  EXPECT_EQ(crossed_links(cluster, group_shape(cluster, iota(0, 4)), kind), (std::vector<Link>{{100e9, 1e-6}}));
  EXPECT_EQ(crossed_links(cluster, group_shape(cluster, iota(0, 8)), kind),
            (std::vector<Link>{{100e9, 1e-6}, {10e9, 10e-6}}));
  const std::vector<int> one_per_node = {0, 4};  // nothing moves inside a node
  EXPECT_EQ(crossed_links(cluster, group_shape(cluster, one_per_node), kind), (std::vector<Link>{{10e9, 10e-6}}));
}

TEST(Cluster, RepeatedRankIsAProgrammingError) {
  const Cluster cluster = testing::two_level_cluster();
  const std::vector<int> ranks = {1, 2, 1};
  EXPECT_THROW(level_spanned(cluster, ranks), std::invalid_argument);
}

TEST(Cluster, ValidationNamesTheField) {
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[1].link.bandwidth_bytes_per_second = -1.0;
  try {
    validate_cluster(cluster, "code");
    FAIL() << "expected ClusterError";
  } catch (const ClusterError& error) {
    EXPECT_STREQ(error.what(), "code: levels[1].link.bandwidth_bytes_per_second: must be between 1 and 1e+21, got -1");
  }

  cluster = testing::two_level_cluster();
  cluster.algorithms.all_to_all = Algorithm::ring;  // ring does not implement all-to-all
  EXPECT_THROW(validate_cluster(cluster, "code"), ClusterError);

  cluster = testing::two_level_cluster();
  cluster.placement = {0, 0};
  EXPECT_THROW(validate_cluster(cluster, "code"), ClusterError);

  cluster = testing::two_level_cluster();
  cluster.device.gemm_efficiency.max_efficiency = 1.5;
  EXPECT_THROW(validate_cluster(cluster, "code"), ClusterError);

  cluster = testing::two_level_cluster();
  cluster.levels.clear();
  EXPECT_THROW(validate_cluster(cluster, "code"), ClusterError);
}

TEST(Cluster, AlgorithmNamesRoundTripAndSupport) {
  for (Algorithm algorithm : {Algorithm::ring, Algorithm::tree, Algorithm::recursive_doubling, Algorithm::bruck,
                              Algorithm::hierarchical, Algorithm::pairwise}) {
    EXPECT_EQ(algorithm_from_name(algorithm_name(algorithm)), algorithm);
  }
  EXPECT_FALSE(algorithm_from_name("rings").has_value());
  using plans::CollectiveKind;
  EXPECT_TRUE(algorithm_supports(Algorithm::hierarchical, CollectiveKind::all_reduce));
  EXPECT_FALSE(algorithm_supports(Algorithm::hierarchical, CollectiveKind::all_to_all));
  EXPECT_TRUE(algorithm_supports(Algorithm::bruck, CollectiveKind::all_to_all));
  EXPECT_FALSE(algorithm_supports(Algorithm::pairwise, CollectiveKind::all_gather));
  EXPECT_FALSE(algorithm_supports(Algorithm::ring, CollectiveKind::send_recv));
  EXPECT_THROW(CollectiveAlgorithms{}.for_kind(CollectiveKind::halo_exchange), std::invalid_argument);
}

}  // namespace
}  // namespace splitbrain::sim
