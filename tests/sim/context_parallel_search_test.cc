// Context parallelism in the overall search (sim/search/context_parallel_search.h): which sizes
// and micro-batch counts are built, the sequence-parallel twin that keeps the context split, and
// a planner ranking that holds context-parallel plans where the batch is too small for the ranks,
// ranked as the exhaustive search ranks them.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "model/zoo.h"
#include "sim/search/context_parallel_search.h"
#include "sim/search/planner.h"
#include "sim/search/searched_plans.h"
#include "tests/sim/planner_requests.h"

namespace splitbrain::sim {
namespace {

constexpr const char* kLlama = "llama:layers=4,hidden=256,heads=8,kv_heads=2,ffn=512,seq=4096,vocab=1000";

TEST(ContextParallelSearch, SizesDivideTheSequenceIntoTwoChunksPerRank) {
  PlannerRequest request = testing::large_model_request(kLlama, 16, 8);
  EXPECT_EQ(attention_sequence_length(*request.model), 4096);
  EXPECT_EQ(context_parallel_sizes(request), (std::vector<int>{2, 4, 8}));
  request.max_space_axis = 4;
  EXPECT_EQ(context_parallel_sizes(request), (std::vector<int>{2, 4}));
  // 4,100 positions: 2 x 2 chunks divide them, 2 x 4 and 2 x 8 do not.
  request = testing::large_model_request("llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=4100,vocab=96", 16, 8);
  EXPECT_EQ(context_parallel_sizes(request), (std::vector<int>{2}));
  // Under 4,096 positions the search gives no context-parallel mesh.
  request = testing::large_model_request("llama:layers=2,hidden=64,heads=4,kv_heads=2,ffn=96,seq=2048,vocab=96", 16, 8);
  EXPECT_TRUE(context_parallel_sizes(request).empty());
  EXPECT_TRUE(context_parallel_meshes(request, 8).empty());
  // A convolutional net's space axis splits image height; an MLP has no sequence.
  EXPECT_TRUE(context_parallel_sizes(testing::zoo_request("vgg11-cifar10", 8, 64, "dgx-a100-80g")).empty());
  EXPECT_TRUE(context_parallel_sizes(testing::zoo_request("mlp", 8, 64, "dgx-a100-80g")).empty());
}

TEST(ContextParallelSearch, OnlyMicroBatchesTooSmallForEveryContextRankAreBuilt) {
  // 1,024 samples over 8 replicas: 128 a replica. On 16 stages, micro-batches of 1 sample (128 of
  // them) cannot split over 2 context ranks; 2 samples or more could go to a data axis instead.
  EXPECT_EQ(context_parallel_micro_batch_counts(1024, 16, 8, 2), (std::vector<int>{128}));
  // Over 4 context ranks: 1 and 2 samples (128 and 64 micro-batches); 4 and 8 would divide.
  EXPECT_EQ(context_parallel_micro_batch_counts(1024, 16, 8, 4), (std::vector<int>{128, 64}));
  // On 2 stages, 1, 2 and 4 samples over 8 context ranks would make 128, 64 and 32 micro-batches:
  // only 32 is within 16 a stage.
  EXPECT_EQ(context_parallel_micro_batch_counts(1024, 2, 8, 8), (std::vector<int>{32}));
  // Without a pipeline the one micro-batch is the replica's batch: 2 samples over 4 ranks qualify,
  // 4 samples over 4 ranks do not.
  EXPECT_EQ(context_parallel_micro_batch_counts(64, 1, 32, 4), (std::vector<int>{1}));
  EXPECT_TRUE(context_parallel_micro_batch_counts(64, 1, 16, 4).empty());
  EXPECT_TRUE(context_parallel_micro_batch_counts(64, 1, 3, 2).empty());  // the batch does not divide
}

TEST(ContextParallelSearch, MeshesAreThoseWithACountWorthBuilding) {
  const PlannerRequest request = testing::large_model_request(kLlama, 16, 8);
  const std::vector<SearchMesh> meshes = context_parallel_meshes(request, 8);
  ASSERT_FALSE(meshes.empty());
  for (const SearchMesh& mesh : meshes) {
    SCOPED_TRACE(mesh.mesh.to_string());
    ASSERT_GE(mesh.space, 0);
    EXPECT_FALSE(context_parallel_micro_batch_counts(request.global_batch, mesh.size_of(mesh.pipe),
                                                     mesh.size_of(mesh.data), mesh.size_of(mesh.space))
                     .empty());
  }
  // {data: 8, space: 2}: one sample per replica cannot split over 2 ranks; {data: 4, space: 2}
  // gives each replica 2 samples, which {data: 8} splits without gathers.
  const auto has = [&](const std::string& text) {
    return std::any_of(meshes.begin(), meshes.end(), [&](const SearchMesh& m) { return m.mesh.to_string() == text; });
  };
  EXPECT_TRUE(has("{data: 8, space: 2}"));
  EXPECT_FALSE(has("{data: 4, space: 2, model: 2}"));
  EXPECT_TRUE(has("{data: 2, space: 8}"));
}

// A searched plan on a context-parallel mesh splits the sequence of every layer over 'space'; its
// sequence-parallel twin splits the per-token layers' sequence over 'space', then 'model'.
TEST(ContextParallelSearch, SearchedPlanSplitsEverySequenceAndItsTwinKeepsIt) {
  const PlannerRequest request = testing::large_model_request(kLlama, 8, 2);
  const SearchMesh mesh = make_search_mesh(1, 1, 4, 2);
  SearchStats stats;
  const std::optional<plans::Plan> plan = searched_plan(request, mesh, 1, nullptr, stats);
  ASSERT_TRUE(plan.has_value());
  bool splits_features = false;
  for (int v = 0; v < plan->model->size(); ++v) {
    const model::Layer& layer = plan->model->layer(v);
    const plans::LayerSharding& sharding = plan->layers[static_cast<size_t>(v)];
    if (layer.kind == model::OpKind::softmax_cross_entropy) continue;  // its positions, or nothing
    EXPECT_EQ(sharding.spatial.front(), mesh.space) << layer.name;
    splits_features = splits_features || !sharding.out.empty() || !sharding.in.empty();
  }
  ASSERT_TRUE(splits_features) << "no tensor parallelism to take a sequence-parallel twin of";
  const std::optional<plans::Plan> twin = sequence_parallel_twin(*plan);
  ASSERT_TRUE(twin.has_value());
  EXPECT_TRUE(twin->regather_saved_inputs);
  int both = 0;
  for (int v = 0; v < twin->model->size(); ++v) {
    const plans::LayerSharding& sharding = twin->layers[static_cast<size_t>(v)];
    if (sharding.spatial == std::vector<int>{mesh.space, mesh.model}) ++both;
    if (twin->model->layer(v).kind == model::OpKind::softmax_cross_entropy) continue;
    EXPECT_EQ(sharding.spatial.front(), mesh.space) << twin->model->layer(v).name;
  }
  EXPECT_GT(both, 0) << "no per-token layer split its sequence over both axes";
}

// 2 samples on 16 GPUs: data parallelism reaches 2 ranks, so the other ranks split features,
// layers or the sequence. The ranking holds context-parallel plans, as the exhaustive search
// ranks them.
TEST(ContextParallelSearch, SmallBatchRankingHoldsContextParallelPlansAsTheExhaustiveSearch) {
  PlannerRequest request = testing::large_model_request(kLlama, 16, 2);
  request.exhaustive = true;
  const PlannerResult exhaustive = plan_training(request);
  request.exhaustive = false;
  const PlannerResult pruned = plan_training(request);
  ASSERT_EQ(pruned.plans.size(), exhaustive.plans.size());
  bool context_parallel = false;
  for (size_t i = 0; i < pruned.plans.size(); ++i) {
    EXPECT_EQ(pruned.plans[i].plan.family, exhaustive.plans[i].plan.family) << i;
    EXPECT_EQ(pruned.plans[i].prediction.iteration_seconds, exhaustive.plans[i].prediction.iteration_seconds) << i;
    context_parallel = context_parallel || pruned.plans[i].plan.family.find("+cp ") != std::string::npos;
  }
  EXPECT_TRUE(context_parallel) << "no context-parallel plan ranked";
}

}  // namespace
}  // namespace splitbrain::sim
