// The bytes each rank sends, split by the cluster level each message crosses, and the level of
// every collective in the prediction JSON: on two nodes, a mesh axis inside a node sends over
// the node level and an axis across nodes over the level above.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "plans/compiled_plan.h"
#include "plans/plan_json.h"
#include "sim/cluster_presets.h"
#include "sim/prediction_json.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(SPLITBRAIN_SOURCE_DIR) / "plans" / "examples";

// dgx-a100-80g's links on `nodes` nodes of `ranks_per_node` devices.
Cluster two_level(int ranks_per_node, int nodes) {
  Cluster cluster = cluster_preset("dgx-a100-80g");
  cluster.levels.at(0).fan_out = ranks_per_node;
  cluster.levels.at(1).fan_out = nodes;
  return cluster;
}

bool crosses(const plans::Collective& c, int axis) {
  return std::find(c.axes.begin(), c.axes.end(), axis) != c.axes.end();
}

TEST(BytesPerLevel, EveryExamplePlanSplitsEveryRanksBytesOverTheLevels) {
  int plans_checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    const plans::Plan plan = plans::load_plan_file(entry.path());
    const int ranks = plan.mesh.rank_count();
    const int per_node = ranks >= 4 ? 2 : 1;
    const Prediction p = simulate(plan, two_level(per_node, ranks / per_node));
    int64_t across_nodes = 0;
    for (const RankPrediction& r : p.ranks) {
      ASSERT_EQ(r.comm_bytes_sent_per_level.size(), 2u) << entry.path();
      EXPECT_EQ(std::accumulate(r.comm_bytes_sent_per_level.begin(), r.comm_bytes_sent_per_level.end(), int64_t{0}),
                r.comm_bytes_sent)
          << entry.path() << " rank " << r.rank;
      across_nodes += r.comm_bytes_sent_per_level[1];
    }
    EXPECT_GT(across_nodes, 0) << entry.path() << ": its outermost axis spans the nodes";
    ++plans_checked;
  }
  EXPECT_GE(plans_checked, 6);
}

TEST(BytesPerLevel, APipelineAcrossTwoNodesHandsOverBetweenThemAndReducesInside) {
  // {pipe: 2, data: 2} on 2 nodes x 2: each stage is a node, so the data axis's gradient
  // all-reduces stay inside a node and the stage hand-overs cross between the nodes.
  const plans::Plan plan = plans::load_plan_file(kExamples / "vgg16-cifar10-pipeline-4.json");
  const Cluster cluster = two_level(2, 2);
  const Prediction p = simulate(plan, cluster);
  const int pipe = plan.pipe_axis;
  ASSERT_GE(pipe, 0);
  for (const RankPrediction& r : p.ranks) {
    int64_t inside = 0;
    int64_t between = 0;
    for (const CollectiveUse& u : p.collectives) {
      const bool hand_over = u.collective.kind == plans::CollectiveKind::send_recv;
      if (!hand_over && u.stage != r.stage) continue;
      const int64_t bytes =
          u.count * plans::bytes_sent(u.collective, plan.mesh.index_in_group(r.rank, u.collective.axes));
      (crosses(u.collective, pipe) ? between : inside) += bytes;
    }
    EXPECT_GT(inside, 0);
    EXPECT_EQ(r.comm_bytes_sent_per_level[0], inside) << "rank " << r.rank;
    EXPECT_EQ(r.comm_bytes_sent_per_level[1], between) << "rank " << r.rank;
  }
  EXPECT_GT(p.ranks[0].comm_bytes_sent_per_level[1], 0);  // stage 0 sends activations forward
  const auto json = prediction_to_json(plan, cluster, p);
  for (const auto& c : json["collectives"]) {
    const bool across = std::find(c["axes"].begin(), c["axes"].end(), "pipe") != c["axes"].end();
    EXPECT_EQ(c["level"], across ? "cluster" : "node") << c.dump();
  }
  EXPECT_EQ(json["ranks"][0]["comm_bytes_sent_per_level"]["node"], p.ranks[0].comm_bytes_sent_per_level[0]);
  EXPECT_EQ(json["ranks"][0]["comm_bytes_sent_per_level"]["cluster"], p.ranks[0].comm_bytes_sent_per_level[1]);
}

TEST(BytesPerLevel, AHaloCrossesTheLevelOfEachNeighbourPair) {
  // resnet18 split in height over 2 ranks: on one node its halos stay inside, on two nodes of
  // one rank each they all cross between the nodes.
  const plans::Plan plan = plans::load_plan_file(kExamples / "resnet18-spatial-2.json");
  const Prediction one_node = simulate(plan, two_level(2, 1));
  const Prediction two_nodes = simulate(plan, two_level(1, 2));
  for (int rank = 0; rank < 2; ++rank) {
    const auto& inside = one_node.ranks[static_cast<size_t>(rank)];
    const auto& across = two_nodes.ranks[static_cast<size_t>(rank)];
    EXPECT_GT(inside.comm_bytes_sent, 0);
    EXPECT_EQ(inside.comm_bytes_sent_per_level[0], inside.comm_bytes_sent);
    EXPECT_EQ(across.comm_bytes_sent_per_level[0], 0);
    EXPECT_EQ(across.comm_bytes_sent_per_level[1], inside.comm_bytes_sent);
  }
}

}  // namespace
}  // namespace splitbrain::sim
