#include "sim/collective_cost.h"

#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "plans/all_reduce_algorithm.h"
#include "sim/cluster_error.h"
#include "sim/cluster_presets.h"
#include "test_clusters.h"

// Golden-number tests: every expected value is worked out in the comment above it.
// Tolerance: relative 1e-12 (the arithmetic is the same up to rounding order).
#define EXPECT_SECONDS(actual, expected) EXPECT_NEAR((actual), (expected), 1e-12 * (expected))

namespace splitbrain::sim {
namespace {
using plans::CollectiveKind;

std::vector<int> iota(int first, int count, int stride = 1) {
  std::vector<int> ranks;
  for (int i = 0; i < count; ++i) ranks.push_back(first + i * stride);
  return ranks;
}

class DgxA100 : public ::testing::Test {
 protected:
  // node: 300e9 B/s, 2 us; cluster: 25e9 B/s, 5 us; 8 GPUs per node.
  Cluster cluster = cluster_preset("dgx-a100-80g");
};

TEST_F(DgxA100, RingAllReduceInsideOneNodeUsesNvlink) {
  // n = 8, S = 1e9 B: 2(n-1)/n * S/B + 2(n-1) alpha = 1.75 * 1e9/300e9 + 14 * 2e-6
  //                 = 5.8333e-3 + 28e-6 = 5.861333e-3 s
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 8), 1'000'000'000),
                 1.75e9 / 300e9 + 28e-6);
}

TEST_F(DgxA100, RingAllGatherAndReduceScatterMoveHalfOfAllReduce) {
  // n = 8, S = 1e9 B: (n-1)/n * S/B + (n-1) alpha = 0.875e9/300e9 + 7 * 2e-6 = 2.930667e-3 s
  const double expected = 0.875e9 / 300e9 + 14e-6;
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, iota(0, 8), 1'000'000'000), expected);
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::reduce_scatter, iota(0, 8), 1'000'000'000), expected);
}

TEST_F(DgxA100, GroupSpanningTwoNodesIsCostedByInfiniBand) {
  // n = 16 over nodes 0 and 1; flat ring, slowest link = InfiniBand 25e9 B/s, 5 us:
  // 2*15/16 * 1e9/25e9 + 2*15 * 5e-6 = 0.075 + 0.00015 = 0.07515 s
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 16), 1'000'000'000), 0.07515);
  // Same 8 ranks count, but straddling the node boundary (ranks 4..11): n = 8 at 25e9, 5 us:
  // 1.75 * 1e9/25e9 + 14 * 5e-6 = 0.07 + 70e-6
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(4, 8), 1'000'000'000), 0.07007);
}

TEST(CollectiveCost, FlatRingTakesItsSlowestLevelNotTheWorstOfEach) {
  // Two ranks on a core in each of two nodes: the node level is slow to start (the ranks take
  // turns on the core), the cluster level slow to stream (Ethernet).
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].fan_out = 2;
  cluster.levels[0].link = {1e9, 2e-3};     // 1 GB/s, 2 ms
  cluster.levels[1].link = {0.1e9, 20e-6};  // 0.1 GB/s, 20 us
  // n = 4 over both nodes, S = 1e6 B; ring all-reduce 2(n-1) alpha + 2(n-1)/n S beta per level:
  //   node:    6 * 2e-3  + 1.5 * 1e6 / 1e9   = 12e-3 + 1.5e-3 = 13.5e-3 s
  //   cluster: 6 * 20e-6 + 1.5 * 1e6 / 0.1e9 = 0.12e-3 + 15e-3 = 15.12e-3 s  <- the slowest
  // (2 ms with 0.1 GB/s, a hop no level has, would give 27e-3 s.)
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 4), 1'000'000), 15.12e-3);
  // Half the bytes: the node level's starts dominate.
  //   node: 12e-3 + 0.75e-3 = 12.75e-3 s; cluster: 0.12e-3 + 7.5e-3 = 7.62e-3 s
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 4), 500'000), 12.75e-3);
}

TEST(CollectiveCost, SizeFactorsInterpolateInLogSize) {
  const SizeFactors by_size{{1e3, 1e5}, {4.0, 1.0}};
  EXPECT_DOUBLE_EQ(by_size.at(10.0), 4.0);  // below the first size: the first factor
  EXPECT_DOUBLE_EQ(by_size.at(1e4), 2.5);   // half way in log size
  EXPECT_DOUBLE_EQ(by_size.at(1e9), 1.0);   // above the last: the last factor
  EXPECT_DOUBLE_EQ(SizeFactors{}.at(1e4), 1.0);
}

TEST(CollectiveCost, ALinkStreamsAtItsFactorForTheSize) {
  // A wire that passes 64 KB four times faster than its line (a token bucket's burst).
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[1].link = {0.1e9, 20e-6, {{65536.0, 1048576.0}, {4.0, 1.0}}};
  const std::vector<int> pair = {0, 4};  // one rank on each of two nodes
  // all-gather, n = 2, S = 65536 B: (n-1) alpha + (n-1)/n S / (4 * 0.1e9) = 20e-6 + 32768 / 0.4e9
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, pair, 65536), 20e-6 + 32768 / 0.4e9);
  // 1 MiB: the line's own rate: 20e-6 + 524288 / 0.1e9
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, pair, 1048576), 20e-6 + 524288 / 0.1e9);
  // A message between the nodes: 20e-6 + 65536 / 0.4e9
  EXPECT_SECONDS(send_seconds(cluster, 0, 4, 65536), 20e-6 + 65536 / 0.4e9);
}

TEST_F(DgxA100, HierarchicalAllReduceComposesTheLevels) {
  cluster.algorithms.all_reduce = Algorithm::hierarchical;
  cluster.algorithms.all_gather = Algorithm::hierarchical;
  // 16 ranks = 2 full nodes, S = 1e9 B. fan_in = {8, 2}.
  //   node level:    (8-1) * 2e-6 + 7/8 * 1e9 / 300e9        = 14e-6 + 2.916667e-3
  //   cluster level: (2-1) * 5e-6 + 1/2 * (1e9/8) / 25e9     =  5e-6 + 2.5e-3
  //   all-gather = sum = 5.435667e-3; all-reduce = RS + AG = 2 * sum = 10.871333e-3 s
  const double one_way = 14e-6 + 0.875e9 / 300e9 + 5e-6 + 0.5 * 0.125e9 / 25e9;
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, iota(0, 16), 1'000'000'000), one_way);
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 16), 1'000'000'000), 2 * one_way);
  // ... about 7x cheaper than the flat ring's 0.07515 s, because only S/8 crosses InfiniBand.
  EXPECT_LT(2 * one_way, 0.07515 / 6);
}

TEST_F(DgxA100, HierarchicalDegeneratesToRingWhenOneLevelIsUsed) {
  // Inside one node, and with one rank per node, hierarchical = the flat ring of that level.
  for (const std::vector<int>& ranks : {iota(0, 8), iota(0, 4, 8)}) {
    const double ring = collective_seconds(cluster, CollectiveKind::all_reduce, Algorithm::ring, ranks, 123'456'789);
    const double hierarchical =
        collective_seconds(cluster, CollectiveKind::all_reduce, Algorithm::hierarchical, ranks, 123'456'789);
    EXPECT_SECONDS(hierarchical, ring);
  }
  // One rank on each of 4 nodes, S = 1e9: 2*3 * 5e-6 + 2*3/4 * 1e9/25e9 = 30e-6 + 0.06
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 4, 8), 1'000'000'000), 0.06003);
}

TEST_F(DgxA100, SendSecondsUsesTheLevelThePairCrosses) {
  // Inside a node: 2e-6 + 1e6 / 300e9 = 5.333333e-6 s
  EXPECT_SECONDS(send_seconds(cluster, 0, 1, 1'000'000), 2e-6 + 1e6 / 300e9);
  // Ranks 7 and 8 sit in different nodes: 5e-6 + 1e6 / 25e9 = 45e-6 s
  EXPECT_SECONDS(send_seconds(cluster, 7, 8, 1'000'000), 45e-6);
  EXPECT_SECONDS(send_seconds(cluster, 8, 7, 1'000'000), 45e-6);
  EXPECT_EQ(send_seconds(cluster, 3, 3, 1'000'000), 0.0);
  EXPECT_EQ(send_seconds(cluster, 0, 1, 0), 0.0);
  // send_recv as a collective over the pair is the same send.
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::send_recv, std::vector<int>{7, 8}, 1'000'000), 45e-6);
}

TEST_F(DgxA100, HaloExchangeRunsBothNeighboursInParallel) {
  // Chain 6-7-8-9, 1e6 bytes to each neighbour: pairs (6,7) and (8,9) use NVLink
  // (2e-6 + 1e6/300e9), pair (7,8) crosses nodes (5e-6 + 1e6/25e9 = 45e-6); in parallel the
  // slowest pair sets the time: 45e-6 s.
  EXPECT_SECONDS(halo_exchange_seconds(cluster, iota(6, 4), 1'000'000), 45e-6);
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::halo_exchange, iota(6, 4), 1'000'000), 45e-6);
  EXPECT_SECONDS(halo_exchange_seconds(cluster, iota(0, 4), 1'000'000), 2e-6 + 1e6 / 300e9);
}

TEST_F(DgxA100, GroupOfOneRankOrZeroBytesCostsNothing) {
  const std::vector<int> one = {5};
  for (CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter, CollectiveKind::all_reduce,
                              CollectiveKind::all_to_all, CollectiveKind::halo_exchange, CollectiveKind::send_recv}) {
    EXPECT_EQ(collective_seconds(cluster, kind, one, 1'000'000'000), 0.0) << plans::collective_name(kind);
    EXPECT_EQ(collective_seconds(cluster, kind, iota(0, 16), 0), 0.0) << plans::collective_name(kind);
  }
  EXPECT_EQ(collective_seconds(cluster, CollectiveKind::all_reduce, std::vector<int>{}, 1000), 0.0);
}

TEST_F(DgxA100, BadArgumentsThrow) {
  EXPECT_THROW(collective_seconds(cluster, CollectiveKind::all_reduce, iota(1020, 8), 1000), ClusterError);
  EXPECT_THROW(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 8), -1), std::invalid_argument);
  EXPECT_THROW(collective_seconds(cluster, CollectiveKind::all_to_all, Algorithm::ring, iota(0, 8), 1000),
               std::invalid_argument);
  EXPECT_THROW(send_seconds(cluster, 0, 5000, 1000), ClusterError);
}

// Gholami et al. (SPAA 2018) on Cori KNL: alpha = 2 us, 1/beta = 6 GB/s, Bruck all-gather.
class CoriKnl : public ::testing::Test {
 protected:
  Cluster cluster = cluster_preset("cori-knl");
};

TEST_F(CoriKnl, BruckAllGatherMatchesGholamiClosedForm) {
  // P = 512, n = AlexNet's 61,100,840 fp32 parameters = 244,403,360 B:
  // alpha*ceil(log2 512) + beta*(P-1)/P*n = 9 * 2e-6 + 511/512 * 244403360 / 6e9
  //                                      = 18e-6 + 0.040654... = 0.040672... s
  const double all_gather = 9 * 2e-6 + 511.0 / 512.0 * 244'403'360.0 / 6e9;
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, iota(0, 512), 244'403'360), all_gather);
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::reduce_scatter, iota(0, 512), 244'403'360), all_gather);
  // Pure batch parallelism, eq. (4): the weight all-reduce is counted as twice the all-gather.
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 512), 244'403'360), 2 * all_gather);
}

TEST_F(CoriKnl, BruckRoundsRoundUpForNonPowersOfTwo) {
  // P = 12: ceil(log2 12) = 4 rounds: 4 * 2e-6 + 11/12 * 1.2e9 / 6e9 = 8e-6 + 0.18333 s
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, iota(100, 12), 1'200'000'000),
                 8e-6 + 11.0 / 12.0 * 0.2);
}

TEST_F(CoriKnl, IntegratedGridMatchesGholamiEquation8) {
  // One FC layer (AlexNet fc6: d_{i-1} = 9216, d_i = 4096), B = 2048, fp32, on a Pr x Pc =
  // 16 x 32 grid: the Pr = 16 model ranks of a row are contiguous, the Pc = 32 batch ranks
  // of a column are 16 apart.
  // eq. (8): 3*[alpha ceil(log Pr) + beta B (Pr-1)/(Pr Pc) d_i]
  //        + 2*[alpha ceil(log Pc) + beta (Pc-1)/Pc |W_i|/Pr], words of 4 bytes.
  const double beta = 1.0 / 6e9;
  const double d = 4096, batch = 2048, weights = 4096.0 * 9216.0;
  const double expected = 3 * (4 * 2e-6 + beta * 4 * batch * 15.0 / (16.0 * 32.0) * d) +
                          2 * (5 * 2e-6 + beta * 4 * 31.0 / 32.0 * weights / 16.0);
  // The forward all-gather of Y (B/Pc samples, d_i features) plus the input-gradient
  // all-reduce counted as 2 all-gathers: 3 all-gathers over the row; the weight all-reduce
  // of |W|/Pr over the column.
  const auto y_bytes = static_cast<int64_t>(4 * batch / 32 * d);
  const auto w_bytes = static_cast<int64_t>(4 * weights / 16);
  const double actual = 3 * collective_seconds(cluster, CollectiveKind::all_gather, iota(0, 16), y_bytes) +
                        collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 32, 16), w_bytes);
  EXPECT_SECONDS(actual, expected);
}

TEST_F(CoriKnl, HaloExchangeMatchesGholamiEquation7) {
  // Domain parallel, split H, 3x3 conv: the forward halo is alpha + beta*B*X_W*X_C*floor(k_h/2)
  // with B = 256, X_W = 56, X_C = 64, fp32: 256*56*64*1*4 = 3,670,016 B:
  // 2e-6 + 3670016 / 6e9 = 2e-6 + 611.669e-6 s
  EXPECT_SECONDS(halo_exchange_seconds(cluster, iota(0, 8), 3'670'016), 2e-6 + 3'670'016 / 6e9);
}

// The other algorithms, inside one node of the test cluster: n = 4, B = 100e9 B/s,
// alpha = 1 us, S = 4e8 B, so S/B = 4e-3 s and ceil(log2 4) = 2.
class OtherAlgorithms : public ::testing::Test {
 protected:
  double seconds(CollectiveKind kind, Algorithm algorithm) {
    return collective_seconds(cluster, kind, algorithm, std::vector<int>{0, 1, 2, 3}, 400'000'000);
  }
  Cluster cluster = testing::two_level_cluster();
};

TEST_F(OtherAlgorithms, Tree) {
  // all-reduce: binomial reduce + broadcast, 2 L (alpha + S/B) = 4 * (1e-6 + 4e-3) = 16.004e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_reduce, Algorithm::tree), 16.004e-3);
  // all-gather: gather (L alpha + 3/4 S/B) + broadcast L (alpha + S/B)
  //           = 2e-6 + 3e-3 + 2e-6 + 8e-3 = 11.004e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_gather, Algorithm::tree), 11.004e-3);
  EXPECT_SECONDS(seconds(CollectiveKind::reduce_scatter, Algorithm::tree), 11.004e-3);
}

TEST_F(OtherAlgorithms, RecursiveDoubling) {
  // all-reduce: L (alpha + S/B) = 2 * (1e-6 + 4e-3) = 8.002e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_reduce, Algorithm::recursive_doubling), 8.002e-3);
  // all-gather: L alpha + 3/4 S/B = 2e-6 + 3e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_gather, Algorithm::recursive_doubling), 3.002e-3);
}

// Recursive doubling across nodes, round by round: two-level test cluster cut to nodes of 2
// ranks, one port per node (uplink shared). n = 4 node-major: the round at distance 1 swaps S/4
// inside each node, the one at distance 2 sends S/2 from both ranks of a node through its port.
TEST(RecursiveDoubling, EachRoundCrossesItsLevelAndANodesRanksShareItsPort) {
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].fan_out = 2;
  cluster.levels[1].uplink_shared = true;
  const double s = 4e8;
  const double node_round = 1e-6 + s / 4 / 100e9;
  const double port_round = 10e-6 + 2 * (s / 2) / 10e9;
  for (const CollectiveKind kind : {CollectiveKind::all_gather, CollectiveKind::reduce_scatter}) {
    EXPECT_SECONDS(
        collective_seconds(cluster, kind, Algorithm::recursive_doubling, std::vector<int>{0, 1, 2, 3}, 400'000'000),
        node_round + port_round);
    // One rank per node: one stream through each port, S/2 in one round.
    EXPECT_SECONDS(
        collective_seconds(cluster, kind, Algorithm::recursive_doubling, std::vector<int>{0, 2}, 400'000'000),
        10e-6 + s / 2 / 10e9);
    // Two such groups at once ({0, 2} and {1, 3}) split the port.
    const int groups_crossing[] = {1, 2};
    EXPECT_SECONDS(collective_seconds(cluster, kind, Algorithm::recursive_doubling, std::vector<int>{0, 2}, 400'000'000,
                                      groups_crossing),
                   10e-6 + 2 * (s / 2) / 10e9);
  }
  // Without a shared port each stream has the link to itself; ranks numbered across nodes
  // ({0, 2, 1, 3}) cross the port in the first round and stay inside a node in the second.
  cluster.levels[1].uplink_shared = false;
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, Algorithm::recursive_doubling,
                                    std::vector<int>{0, 2, 1, 3}, 400'000'000),
                 10e-6 + s / 4 / 10e9 + 1e-6 + s / 2 / 100e9);
}

// Rabenseifner's all-reduce as Open MPI runs it, on the same nodes of 2 ranks with one port each:
// its reduce-scatter halves the vector at distance 1 first (S/2 stays inside the node), then
// sends S/4 from both ranks of a node through its port; the all-gather retraces those rounds.
// So the port carries S/2 each way, as for one rank per node, where recursive doubling's
// all-reduce sends the whole S from both ranks (measured over 1 Gb/s, 4 MiB: 39 ms against
// 36 ms with one rank per node, recursive doubling 70 ms; exec/comm/collective_algorithms.h).
TEST(Rabenseifner, HalvesInsideTheNodeFirstSoTheSharedPortCarriesWhatOneRankPerNodeSends) {
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].fan_out = 2;
  cluster.levels[1].uplink_shared = true;
  const double s = 4e8;
  auto all_reduce = [&](Algorithm algorithm, std::vector<int> ranks) {
    return collective_seconds(cluster, CollectiveKind::all_reduce, algorithm, ranks, 400'000'000);
  };
  const double one_rank_per_node = 2 * (10e-6 + s / 2 / 10e9);
  EXPECT_SECONDS(all_reduce(Algorithm::rabenseifner, {0, 2}), one_rank_per_node);
  EXPECT_SECONDS(all_reduce(Algorithm::rabenseifner, {0, 1, 2, 3}),
                 2 * (1e-6 + s / 2 / 100e9) + 2 * (10e-6 + 2 * (s / 4) / 10e9));
  EXPECT_SECONDS(all_reduce(Algorithm::recursive_doubling, {0, 1, 2, 3}), 1e-6 + s / 100e9 + 10e-6 + 2 * s / 10e9);
  // The flat formula over the slowest link charged the port 3/2 S.
  EXPECT_SECONDS(all_reduce(Algorithm::ring, {0, 1, 2, 3}), 6 * 10e-6 + 1.5 * s / 10e9);
  // Inside one node it is the textbook 2 (L alpha + (n-1)/n S beta).
  cluster = testing::two_level_cluster();
  EXPECT_SECONDS(all_reduce(Algorithm::rabenseifner, {0, 1, 2, 3}), 6.004e-3);
}

// `by_size` prices the algorithm the executor requests for each buffer (plans/all_reduce_algorithm.h).
TEST(BySize, PricesTheAlgorithmTheExecutorRequestsForThatBuffer) {
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].fan_out = 2;
  cluster.levels[1].uplink_shared = true;
  const std::vector<int> ranks = {0, 1, 2, 3};
  for (const int64_t bytes :
       {int64_t{8}, plans::kRecursiveDoublingMaxBytes, plans::kRecursiveDoublingMaxBytes + 4, int64_t{64} << 20}) {
    const Algorithm requested = plans::all_reduce_algorithm(bytes) == plans::AllReduceAlgorithm::rabenseifner
                                    ? Algorithm::rabenseifner
                                    : Algorithm::recursive_doubling;
    EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, Algorithm::by_size, ranks, bytes),
                   collective_seconds(cluster, CollectiveKind::all_reduce, requested, ranks, bytes))
        << bytes << " B";
    const Link& link = cluster.levels[1].link;
    const auto buffer_bytes = static_cast<double>(bytes);
    EXPECT_SECONDS(flat_collective_seconds(CollectiveKind::all_reduce, Algorithm::by_size, 4, buffer_bytes, link),
                   flat_collective_seconds(CollectiveKind::all_reduce, requested, 4, buffer_bytes, link))
        << bytes << " B";
  }
  // Recursive doubling up to the threshold and Rabenseifner's above: they differ, so the split is read.
  EXPECT_NE(collective_seconds(cluster, CollectiveKind::all_reduce, Algorithm::rabenseifner, ranks, 8),
            collective_seconds(cluster, CollectiveKind::all_reduce, Algorithm::recursive_doubling, ranks, 8));
  EXPECT_THROW(collective_seconds(cluster, CollectiveKind::all_gather, Algorithm::by_size, ranks, 8),
               std::invalid_argument);
}

TEST_F(OtherAlgorithms, Bruck) {
  // all-reduce (Rabenseifner RS + AG): 2 * (L alpha + 3/4 S/B) = 2 * (2e-6 + 3e-3) = 6.004e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_reduce, Algorithm::bruck), 6.004e-3);
  // all-to-all: L alpha + L * S/2 / B = 2e-6 + 2 * 2e-3 = 4.002e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_to_all, Algorithm::bruck), 4.002e-3);
}

TEST_F(OtherAlgorithms, PairwiseAllToAll) {
  // (n-1) alpha + (n-1)/n S/B = 3e-6 + 3e-3
  EXPECT_SECONDS(seconds(CollectiveKind::all_to_all, Algorithm::pairwise), 3.003e-3);
}

TEST(CollectiveCost, RingBusBandwidthEqualsLinkBandwidthWithoutLatency) {
  // nccl-tests: busbw = S/t * 2(n-1)/n for all-reduce, (n-1)/n for all-gather. With alpha = 0
  // a ring reaches exactly the link bandwidth.
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].link.latency_seconds = 0.0;
  const std::vector<int> ranks = {0, 1, 2, 3};
  const double s = 1e9;
  const double all_reduce = collective_seconds(cluster, CollectiveKind::all_reduce, ranks, 1'000'000'000);
  EXPECT_SECONDS(s / all_reduce * 2 * 3 / 4, 100e9);
  const double all_gather = collective_seconds(cluster, CollectiveKind::all_gather, ranks, 1'000'000'000);
  EXPECT_SECONDS(s / all_gather * 3 / 4, 100e9);
}

TEST(CollectiveCost, SlowestLinkSetsFlatCostEvenWhenInnerLevelIsSlower) {
  // An odd cluster whose inner level is the slow one: a group using both levels is costed
  // with the lower bandwidth and the higher latency of the two.
  Cluster cluster = testing::two_level_cluster();
  cluster.levels[0].link = {5e9, 20e-6};
  // n = 8 (2 nodes x 4): 2*7/8 * 1e9/5e9 + 14 * 20e-6 = 0.35 + 280e-6
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_reduce, iota(0, 8), 1'000'000'000), 0.35028);
}

TEST(CollectiveCost, AKindWithItsOwnLinkUsesIt) {
  // calibrate fits a link per kind: the all-gather's link changes the all-gather only.
  Cluster cluster = testing::two_level_cluster();
  const std::vector<int> ranks = {0, 1, 2, 3};
  const double gather = collective_seconds(cluster, CollectiveKind::all_gather, ranks, 1'000'000'000);
  const double reduce = collective_seconds(cluster, CollectiveKind::all_reduce, ranks, 1'000'000'000);
  cluster.levels[0].collective_links[CollectiveKind::all_gather] = {25e9, 1e-6};  // a quarter of the bandwidth
  // Ring: 3 alpha + 3/4 S/B = 3e-6 + 0.75 * 1e9 / 25e9 = 0.030003 s
  EXPECT_SECONDS(collective_seconds(cluster, CollectiveKind::all_gather, ranks, 1'000'000'000), 0.030003);
  EXPECT_GT(collective_seconds(cluster, CollectiveKind::all_gather, ranks, 1'000'000'000), 3.9 * gather);
  EXPECT_DOUBLE_EQ(collective_seconds(cluster, CollectiveKind::all_reduce, ranks, 1'000'000'000), reduce);
  // Point to point: send/recv has a link of its own too.
  cluster.levels[0].collective_links[CollectiveKind::send_recv] = {1e9, 5e-6};
  EXPECT_SECONDS(send_seconds(cluster, 0, 1, 1'000'000), 5e-6 + 1e-3);
}

}  // namespace
}  // namespace splitbrain::sim
