// The pure parts of rank placement: how a node's CPUs are split among its ranks, and the text
// the commands print. place_ranks itself needs an MPI job: placement.sh runs it under mpirun.

#include "exec/comm/rank_placement.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace splitbrain::exec::comm {
namespace {

std::vector<int> cpus_from(int first, int count) {
  std::vector<int> cpus(static_cast<size_t>(count));
  std::iota(cpus.begin(), cpus.end(), first);
  return cpus;
}

TEST(SplitCpus, EvenSplitGivesEachRankItsOwnBlock) {
  const std::vector<int> allowed = cpus_from(0, 8);
  EXPECT_EQ(split_cpus(allowed, 0, 2), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(split_cpus(allowed, 1, 2), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(split_cpus(allowed, 3, 4), (std::vector<int>{6, 7}));
}

TEST(SplitCpus, UnevenSplitCoversEveryCpuOnceAndDiffersByAtMostOne) {
  const std::vector<int> allowed = cpus_from(0, 7);
  for (int ranks = 1; ranks <= 7; ++ranks) {
    std::vector<int> seen;
    size_t smallest = allowed.size();
    size_t largest = 0;
    for (int i = 0; i < ranks; ++i) {
      const std::vector<int> mine = split_cpus(allowed, i, ranks);
      seen.insert(seen.end(), mine.begin(), mine.end());
      smallest = std::min(smallest, mine.size());
      largest = std::max(largest, mine.size());
    }
    EXPECT_EQ(seen, allowed) << ranks << " ranks";
    EXPECT_LE(largest - smallest, 1u) << ranks << " ranks";
  }
  // 7 over 3: [0, 7/3) = [0, 2), [2, 14/3) = [2, 4), [4, 7).
  EXPECT_EQ(split_cpus(allowed, 0, 3), (std::vector<int>{0, 1}));
  EXPECT_EQ(split_cpus(allowed, 2, 3), (std::vector<int>{4, 5, 6}));
}

TEST(SplitCpus, SplitsTheAllowedSetNotCpuNumbers) {
  // A node whose allowed CPUs are not 0..c-1 (a cpuset, or offline CPUs in between).
  const std::vector<int> allowed{2, 3, 8, 9};
  EXPECT_EQ(split_cpus(allowed, 0, 2), (std::vector<int>{2, 3}));
  EXPECT_EQ(split_cpus(allowed, 1, 2), (std::vector<int>{8, 9}));
}

TEST(SplitCpus, MoreRanksThanCpusShareRoundRobin) {
  const std::vector<int> allowed{0, 1};
  EXPECT_EQ(split_cpus(allowed, 0, 5), std::vector<int>{0});
  EXPECT_EQ(split_cpus(allowed, 1, 5), std::vector<int>{1});
  EXPECT_EQ(split_cpus(allowed, 2, 5), std::vector<int>{0});
  EXPECT_EQ(split_cpus(allowed, 4, 5), std::vector<int>{0});
  EXPECT_EQ(split_cpus({5}, 2, 3), std::vector<int>{5});
}

TEST(SplitCpus, RefusesNonsense) {
  EXPECT_THROW(split_cpus({}, 0, 1), std::invalid_argument);
  EXPECT_THROW(split_cpus({0, 1}, 2, 2), std::invalid_argument);
  EXPECT_THROW(split_cpus({0, 1}, -1, 2), std::invalid_argument);
  EXPECT_THROW(split_cpus({0, 1}, 0, 0), std::invalid_argument);
}

TEST(CpuListText, UsesRangesLikeTheKernel) {
  EXPECT_EQ(cpu_list_text({0, 1, 2, 3, 6}), "0-3,6");
  EXPECT_EQ(cpu_list_text({1}), "1");
  EXPECT_EQ(cpu_list_text({0, 2, 4, 5}), "0,2,4-5");
  EXPECT_EQ(cpu_list_text({}), "none");
}

JobPlacement two_ranks(PlacedBy first, PlacedBy second, const std::string& second_host = "node") {
  JobPlacement job;
  job.ranks = {{0, "node", {0}, first}, {1, second_host, {1}, second}};
  return job;
}

TEST(PlacementSummary, NamesWhoPlacedTheRanks) {
  EXPECT_EQ(placement_summary(two_ranks(PlacedBy::splitbrain, PlacedBy::splitbrain)),
            "rank 0 cpus 0, rank 1 cpus 1 (pinned by splitbrain)");
  EXPECT_EQ(placement_summary(two_ranks(PlacedBy::launcher, PlacedBy::launcher)),
            "rank 0 cpus 0, rank 1 cpus 1 (bound by the launcher)");
  EXPECT_EQ(placement_summary(two_ranks(PlacedBy::launcher, PlacedBy::none)),
            "rank 0 cpus 0 (bound by the launcher), rank 1 cpus 1 (not bound)");
  EXPECT_EQ(placement_summary(two_ranks(PlacedBy::none, PlacedBy::none, "other")),
            "rank 0 on node cpus 0, rank 1 on other cpus 1 (not bound)");
}

TEST(FewestCpusPerHost, CountsEachHostsCpusOnceAndKeepsTheFewest) {
  JobPlacement job = two_ranks(PlacedBy::launcher, PlacedBy::launcher);
  EXPECT_EQ(fewest_cpus_per_host(job), 2);  // ranks on CPUs 0 and 1 of one host
  job.ranks[1].cpus = {0};
  EXPECT_EQ(fewest_cpus_per_host(job), 1);  // both bound to CPU 0: they take turns
  job.ranks[0].cpus = {0, 1, 2, 3};
  EXPECT_EQ(fewest_cpus_per_host(job), 4);  // unbound ranks share the host's CPUs
  job = two_ranks(PlacedBy::none, PlacedBy::none, "other");
  job.ranks[1].cpus = {4, 5, 6};
  EXPECT_EQ(fewest_cpus_per_host(job), 1);  // node: 1 CPU, other: 3
  EXPECT_EQ(fewest_cpus_per_host(JobPlacement{}), 0);
}

TEST(ThreadsWarning, OnlyWhenARankHasFewerCpusThanThreads) {
  JobPlacement job = two_ranks(PlacedBy::splitbrain, PlacedBy::splitbrain);
  EXPECT_EQ(threads_warning(job, 1), "");
  job.ranks[0].cpus = {0, 1};
  EXPECT_EQ(threads_warning(job, 2), "--threads 2 but rank 1 has 1 CPU (1): its threads will time-share them");
}

TEST(PlacedByName, MatchesTheReportVocabulary) {
  EXPECT_STREQ(placed_by_name(PlacedBy::launcher), "launcher");
  EXPECT_STREQ(placed_by_name(PlacedBy::splitbrain), "splitbrain");
  EXPECT_STREQ(placed_by_name(PlacedBy::none), "none");
}

TEST(CoreSharingGroups, LabelsEachRankWithTheLowestRankItSharesACoreWith) {
  // 0 and 2 share CPU 0; 3 shares CPU 5 with 2's other CPU: one group through 2; 1 and 4 alone.
  EXPECT_EQ(core_sharing_groups({{0}, {1}, {0, 5}, {5}, {7}}), (std::vector<int>{0, 1, 0, 0, 4}));
  EXPECT_EQ(core_sharing_groups({{0, 1}, {2, 3}}), (std::vector<int>{0, 1}));
  EXPECT_TRUE(core_sharing_groups({}).empty());
}

TEST(CoreSharingGroups, AcrossAJobOnlyRanksOfOneHostShare) {
  // Two emulated nodes of two ranks each, both nodes' ranks on CPU 0 of their own namespace, and
  // the hosts' ranks interleaved in world order: each host's pair is a group, never across.
  const auto placed = [](int rank, const std::string& host, std::vector<int> cpus) {
    RankPlacement p;
    p.rank = rank;
    p.host = host;
    p.cpus = std::move(cpus);
    return p;
  };
  EXPECT_EQ(job_core_sharing_groups({placed(0, "a", {0}), placed(1, "b", {0}), placed(2, "a", {0}), placed(3, "b", {0}),
                                     placed(4, "a", {1})}),
            (std::vector<int>{0, 1, 0, 1, 4}));
  EXPECT_TRUE(job_core_sharing_groups({}).empty());
}

TEST(CoreSharingGroups, RoundRobinSharingGroupsTheRanksOfEachCpu) {
  // The property split_cpus promises for more ranks than CPUs: ranks i and j share exactly when
  // i = j mod c, so the groups are the residues, each labelled by its lowest rank.
  for (int cpus = 1; cpus <= 4; ++cpus) {
    std::vector<int> allowed(static_cast<size_t>(cpus));
    std::iota(allowed.begin(), allowed.end(), 0);
    for (int ranks = cpus; ranks <= 3 * cpus + 1; ++ranks) {
      std::vector<std::vector<int>> placed;
      for (int r = 0; r < ranks; ++r) placed.push_back(split_cpus(allowed, r, ranks));
      const std::vector<int> groups = core_sharing_groups(placed);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(groups[static_cast<size_t>(r)], ranks > cpus ? r % cpus : r) << ranks << " ranks on " << cpus;
      }
    }
  }
}

}  // namespace
}  // namespace splitbrain::exec::comm
