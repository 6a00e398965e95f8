// The sharding DP against exhaustive enumeration on small instances (issue: "on small instances
// (up to 6 layers, up to 8 devices) an exhaustive enumeration of all per-layer choices finds no
// plan better than the search's"). "Better" is judged by the full simulator with gradient
// synchronisation not overlapped and one bucket per layer, the setting the DP is exact for.

#include <gtest/gtest.h>

#include <functional>

#include "model/graph_builder.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "sim/cluster_presets.h"
#include "sim/search/sharding_search.h"
#include "sim/simulation.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;

std::shared_ptr<const model::Model> mlp_chain(const std::vector<int64_t>& widths, int64_t inputs) {
  model::GraphBuilder b("chain", "test");
  std::string previous = b.add("data", model::OpKind::input, model::InputAttrs{{inputs}, false}, {});
  for (size_t i = 0; i < widths.size(); ++i) {
    model::LinearAttrs fc;
    fc.out_features = widths[i];
    previous = b.add("fc" + std::to_string(i + 1), model::OpKind::linear, fc, {previous});
  }
  b.add("loss", model::OpKind::softmax_cross_entropy, model::NoAttrs{}, {previous});
  return std::make_shared<model::Model>(b.build());
}

std::shared_ptr<const model::Model> conv_chain() {
  model::GraphBuilder b("convs", "test");
  b.add("data", model::OpKind::input, model::InputAttrs{{8, 16, 16}, false}, {});
  model::Conv2dAttrs conv;
  conv.out_channels = 16;
  conv.kernel = {3, 3};
  conv.padding = {1, 1};
  b.add("conv1", model::OpKind::conv2d, conv, {"data"});
  conv.out_channels = 32;
  b.add("conv2", model::OpKind::conv2d, conv, {"conv1"});
  b.add("flat", model::OpKind::flatten, model::NoAttrs{}, {"conv2"});
  model::LinearAttrs fc;
  fc.out_features = 16;
  b.add("fc", model::OpKind::linear, fc, {"flat"});
  b.add("loss", model::OpKind::softmax_cross_entropy, model::NoAttrs{}, {"fc"});
  return std::make_shared<model::Model>(b.build());
}

plans::Plan plan_with(std::shared_ptr<const model::Model> net, const SearchMesh& mesh, int64_t batch,
                      const std::vector<LayerSharding>& layers) {
  const model::Model* base = net.get();
  plans::Plan plan = plans::build_plan(std::move(net), "test", mesh.mesh, batch, [&](const model::Layer& layer) {
    return layers[static_cast<size_t>(&layer - base->layers().data())];
  });
  plan.overlap_gradient_sync = false;
  plan.gradient_bucket_bytes = 0;
  return plan;
}

double simulated(const plans::Plan& plan, const Cluster& cluster) { return simulate(plan, cluster).iteration_seconds; }

// Calls `visit` with every complete assignment of the deciding layers' candidates.
void enumerate(CostTable& table, const SearchMesh& mesh,
               const std::function<void(const std::vector<LayerSharding>&)>& visit) {
  const model::Model& net = table.model();
  std::vector<int> deciding;
  std::vector<std::vector<LayerSharding>> candidates;
  for (int v = 0; v < net.size(); ++v) {
    if (!plans::chooses_own_sharding(net.layer(v))) continue;
    deciding.push_back(v);
    candidates.push_back(decision_candidates(table, v, mesh));
  }
  std::vector<size_t> index(deciding.size(), 0);
  std::vector<LayerSharding> layers(static_cast<size_t>(net.size()));
  while (true) {
    for (size_t k = 0; k < deciding.size(); ++k) layers[static_cast<size_t>(deciding[k])] = candidates[k][index[k]];
    fill_followers(table, layers);
    visit(layers);
    size_t k = 0;
    while (k < index.size() && ++index[k] == candidates[k].size()) index[k++] = 0;
    if (k == index.size()) return;
  }
}

struct Instance {
  const char* name;
  std::function<std::shared_ptr<const model::Model>()> model;
  int data, space, model_axis;
  const char* cluster;
};

class ExhaustiveCheck : public testing::TestWithParam<Instance> {};

TEST_P(ExhaustiveCheck, NoEnumeratedPlanBeatsTheSearch) {
  const Instance& instance = GetParam();
  const Cluster cluster = cluster_preset(instance.cluster);
  const SearchMesh mesh = make_search_mesh(1, instance.data, instance.space, instance.model_axis);
  const auto net = instance.model();
  const int64_t batch = 32;
  plans::Plan skeleton = plan_with(net, mesh, batch, std::vector<LayerSharding>(static_cast<size_t>(net->size())));
  CostTable table(skeleton, cluster, 1);

  const auto found = search_shardings(table, mesh, {});
  ASSERT_TRUE(found.has_value());
  const double found_simulated = simulated(plan_with(net, mesh, batch, found->layers), cluster);
  EXPECT_NEAR(assignment_seconds(table, found->layers), found->seconds, 1e-12 * found->seconds);

  int enumerated = 0;
  enumerate(table, mesh, [&](const std::vector<LayerSharding>& layers) {
    ++enumerated;
    EXPECT_GE(assignment_seconds(table, layers), found->seconds * (1 - 1e-12));
    EXPECT_GE(simulated(plan_with(net, mesh, batch, layers), cluster), found_simulated * (1 - 1e-12));
  });
  EXPECT_GT(enumerated, 8);
}

INSTANTIATE_TEST_SUITE_P(SmallInstances, ExhaustiveCheck,
                         testing::Values(Instance{"mlp_on_2x4",
                                                  [] {
                                                    return mlp_chain({64, 64, 32, 8}, 128);
                                                  },
                                                  2, 1, 4, "dgx-a100-80g"},
                                         Instance{"mlp_on_4x2_two_nodes",
                                                  [] {
                                                    return mlp_chain({256, 512, 16}, 64);
                                                  },
                                                  4, 1, 2, "v100-pcie-10gbe"},
                                         Instance{"mlp_on_model_8",
                                                  [] {
                                                    return mlp_chain({512, 512, 512, 8}, 64);
                                                  },
                                                  1, 1, 8, "v100-pcie-10gbe"},
                                         Instance{"convs_on_2x2x2", conv_chain, 2, 2, 2, "dgx-a100-80g"},
                                         Instance{"convs_on_space_4", conv_chain, 1, 4, 1, "v100-pcie-10gbe"}),
                         [](const testing::TestParamInfo<Instance>& case_info) {
                           return std::string(case_info.param.name);
                         });

TEST(ShardingSearch, MemoryLimitIsRespectedOptimally) {
  const auto net = mlp_chain({2048, 2048, 8}, 1024);
  const SearchMesh mesh = make_search_mesh(1, 2, 1, 4);
  plans::Plan skeleton = plan_with(net, mesh, 512, std::vector<LayerSharding>(static_cast<size_t>(net->size())));
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  CostTable table(skeleton, cluster, 1);
  ShardingSearchOptions options;
  options.pareto_limit = 1000;  // keep whole Pareto fronts: the DP is then exact on a chain
  const auto fastest = search_shardings(table, mesh, options);
  ASSERT_TRUE(fastest.has_value());

  // Every assignment's (time, memory), by the DP's own additive estimates.
  std::vector<std::pair<double, int64_t>> all;
  enumerate(table, mesh, [&](const std::vector<LayerSharding>& layers) {
    int64_t memory = 0;
    for (int v = 0; v < net->size(); ++v) memory += table.layer_cost(v, layers[static_cast<size_t>(v)]).memory_bytes;
    all.emplace_back(assignment_seconds(table, layers), memory);
  });
  int64_t least = fastest->memory_bytes;
  for (const auto& [seconds, memory] : all) least = std::min(least, memory);
  ASSERT_LT(least, fastest->memory_bytes) << "the instance must trade memory for time";

  options.memory_limit_bytes = (least + fastest->memory_bytes) / 2;
  const auto frugal = search_shardings(table, mesh, options);
  ASSERT_TRUE(frugal.has_value());
  EXPECT_LE(frugal->memory_bytes, options.memory_limit_bytes);
  EXPECT_GE(frugal->seconds, fastest->seconds);
  for (const auto& [seconds, memory] : all) {
    if (memory <= options.memory_limit_bytes) {
      EXPECT_GE(seconds, frugal->seconds * (1 - 1e-12));
    }
  }
  options.memory_limit_bytes = least - 1;  // below every assignment
  EXPECT_FALSE(search_shardings(table, mesh, options).has_value());
}

TEST(ShardingSearch, HandlesResidualDags) {
  const auto net = std::make_shared<model::Model>(model::build_zoo_model("resnet18"));
  const SearchMesh mesh = make_search_mesh(1, 4, 1, 2);
  plans::Plan skeleton = plan_with(net, mesh, 64, std::vector<LayerSharding>(static_cast<size_t>(net->size())));
  const Cluster cluster = cluster_preset("dgx-a100-80g");
  CostTable table(skeleton, cluster, 1);
  const auto found = search_shardings(table, mesh, {});
  ASSERT_TRUE(found.has_value());
  EXPECT_NEAR(assignment_seconds(table, found->layers), found->seconds, 1e-9 * found->seconds);
  // The result is a valid plan the simulator accepts.
  EXPECT_GT(simulated(plan_with(net, mesh, 64, found->layers), cluster), 0.0);
}

}  // namespace
}  // namespace splitbrain::sim
