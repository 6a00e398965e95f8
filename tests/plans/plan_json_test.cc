// The plan file: resolution of per-layer shardings and exact round trips (every example plan
// among them). The validation errors are in plan_json_errors_test.cc.
#include "plans/plan_json.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "model/model_json.h"
#include "plans/compiled_plan.h"
#include "tests/plans/plan_documents.h"

namespace splitbrain::plans {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// This file lives in tests/plans/, so the repository root is three levels up from it.
const fs::path kExamples = fs::path(__FILE__).parent_path().parent_path().parent_path() / "plans" / "examples";

Plan read(const ordered_json& document) { return plan_from_json(document, "test.json", ""); }

void expect_same_plan(const Plan& a, const Plan& b) {
  ASSERT_NE(a.model, nullptr);
  ASSERT_NE(b.model, nullptr);
  EXPECT_EQ(a.family, b.family);
  EXPECT_EQ(a.description, b.description);
  EXPECT_EQ(a.model->name(), b.model->name());
  EXPECT_EQ(a.model->size(), b.model->size());
  EXPECT_EQ(a.global_batch, b.global_batch);
  EXPECT_EQ(a.dtype, b.dtype);
  EXPECT_EQ(a.mesh, b.mesh);
  EXPECT_TRUE(a.layers == b.layers);
  EXPECT_EQ(a.pipe_axis, b.pipe_axis);
  EXPECT_EQ(a.stage_of_layer, b.stage_of_layer);
  EXPECT_EQ(a.micro_batches, b.micro_batches);
  EXPECT_EQ(a.schedule, b.schedule);
  EXPECT_EQ(a.virtual_stages, b.virtual_stages);
  EXPECT_TRUE(a.optimizer == b.optimizer);
  EXPECT_EQ(a.recompute_activations, b.recompute_activations);
  EXPECT_EQ(a.recompute_attention, b.recompute_attention);
  EXPECT_EQ(a.gradient_dtype, b.gradient_dtype);
  EXPECT_EQ(a.zero_stage, b.zero_stage);
  EXPECT_EQ(a.overlap_gradient_sync, b.overlap_gradient_sync);
  EXPECT_EQ(a.gradient_bucket_bytes, b.gradient_bucket_bytes);
}

// Designated initializers would trip -Wmissing-field-initializers; this spells roles in order.
LayerSharding shard(std::vector<int> batch, std::vector<int> out = {}, std::vector<int> in = {},
                    std::vector<int> spatial = {}) {
  LayerSharding sharding;
  sharding.batch = std::move(batch);
  sharding.out = std::move(out);
  sharding.in = std::move(in);
  sharding.spatial = std::move(spatial);
  return sharding;
}

const LayerSharding& sharding_of(const Plan& plan, std::string_view layer) {
  const int index = plan.model->find(layer);
  EXPECT_GE(index, 0) << layer;
  return plan.layers.at(static_cast<size_t>(index));
}

// A fresh, empty folder under the system's temporary directory.
fs::path scratch_folder(std::string_view name) {
  const fs::path folder = fs::temp_directory_path() / fmt::format("splitbrain_plan_json_{}", name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

TEST(PlanJson, StageCountAndOptimizerStateBytes) {
  EXPECT_EQ(optimizer_state_bytes_per_parameter(OptimizerKind::sgd_momentum), 4);
  EXPECT_EQ(optimizer_state_bytes_per_parameter(OptimizerKind::adam), 8);
  EXPECT_EQ(read(base_plan()).stage_count(), 1);
  EXPECT_EQ(read(pipeline_plan()).stage_count(), 2);
}

TEST(PlanJson, ListedLayersDefaultAndInheritance) {
  const Plan plan = read(base_plan());
  const LayerSharding both = shard({0, 1});
  const LayerSharding split_features = shard({0}, {1});
  EXPECT_EQ(plan.global_batch, 8);
  EXPECT_EQ(plan.dtype, model::DType::fp32);  // the default dtype
  EXPECT_EQ(plan.pipe_axis, -1);
  EXPECT_EQ(plan.micro_batches, 1);
  EXPECT_EQ(plan.stage_of_layer, std::vector<int>(static_cast<size_t>(plan.model->size()), 0));
  EXPECT_TRUE(sharding_of(plan, "data") == both);   // an input takes the default
  EXPECT_TRUE(sharding_of(plan, "conv1") == both);  // so does a layer with parameters
  EXPECT_TRUE(sharding_of(plan, "relu1") == both);  // parameter-free: inherits from conv1
  EXPECT_TRUE(sharding_of(plan, "flatten1") == both);
  EXPECT_TRUE(sharding_of(plan, "fc1") == split_features);    // listed
  EXPECT_TRUE(sharding_of(plan, "relu5") == split_features);  // inherits from fc1
  EXPECT_TRUE(sharding_of(plan, "dropout1") == split_features);
  // The loss cannot split the classes: it keeps fc2's batch split and replicates over 'model'.
  EXPECT_TRUE(sharding_of(plan, "loss") == shard({0}));
}

TEST(PlanJson, ResolutionKeepsOnlyTheRolesTheOpAllows) {
  // A layer norm cannot split its features, so after an out-split linear it keeps the batch only.
  const model::Model model = model::resolve_model("gpt:layers=1,hidden=64,heads=4,seq=16,vocab=128");
  std::vector<std::optional<LayerSharding>> listed(static_cast<size_t>(model.size()));
  const int c_proj = model.find("h0.mlp.c_proj");
  ASSERT_GE(c_proj, 0);
  listed[static_cast<size_t>(c_proj)] = shard({0}, {}, {1});
  const std::vector<LayerSharding> layers = resolve_layer_shardings(model, listed, shard({0}), "x");
  const int dropout = model.find("h0.mlp.dropout");
  ASSERT_EQ(model.layer(dropout).inputs.front(), c_proj);
  EXPECT_TRUE(layers[static_cast<size_t>(dropout)] == shard({0}));  // 'in' dropped
}

TEST(PlanJson, MeshKeepsTheWrittenAxisOrder) {
  ordered_json document = base_plan();
  document["mesh"] = ordered_json::parse(R"({"model": 2, "data": 2})");
  const Plan plan = read(document);
  EXPECT_EQ(plan.mesh.to_string(), "{model: 2, data: 2}");
  EXPECT_TRUE(sharding_of(plan, "fc1") == shard({1}, {0}));
  EXPECT_EQ(plan_to_json(plan)["mesh"].dump(), R"({"model":2,"data":2})");
}

TEST(PlanJson, PipelineStagesFollowStageStarts) {
  const Plan plan = read(pipeline_plan());
  EXPECT_EQ(plan.pipe_axis, 0);
  EXPECT_EQ(plan.micro_batches, 2);
  EXPECT_EQ(plan.micro_batch_size(), 4);
  EXPECT_EQ(plan.schedule, PipelineSchedule::gpipe);
  const int conv3 = plan.model->find("conv3");
  for (int i = 0; i < plan.model->size(); ++i) {
    EXPECT_EQ(plan.stage_of_layer[static_cast<size_t>(i)], i < conv3 ? 0 : 1) << plan.model->layer(i).name;
  }
  EXPECT_EQ(plan_to_json(plan)["pipeline"].dump(),
            R"({"axis":"pipe","stage_starts":["conv3"],"micro_batches":2,"schedule":"gpipe"})");
}

TEST(PlanJson, InterleavedChunksFollowStageStartsRoundTheStages) {
  const Plan plan = read(interleaved_plan());
  EXPECT_EQ(plan.schedule, PipelineSchedule::interleaved_one_f_one_b);
  EXPECT_EQ(plan.virtual_stages, 2);
  EXPECT_EQ(plan.stage_count(), 2);
  EXPECT_EQ(plan.chunk_count(), 4);
  const int conv3 = plan.model->find("conv3");
  const int fc1 = plan.model->find("fc1");
  const int fc2 = plan.model->find("fc2");
  const CompiledPlan compiled = compile_plan(plan);
  for (int i = 0; i < plan.model->size(); ++i) {
    const int chunk = i < conv3 ? 0 : i < fc1 ? 1 : i < fc2 ? 2 : 3;
    EXPECT_EQ(plan.stage_of_layer[static_cast<size_t>(i)], chunk) << plan.model->layer(i).name;
    EXPECT_EQ(compiled.layers[static_cast<size_t>(i)].chunk, chunk) << plan.model->layer(i).name;
    EXPECT_EQ(compiled.layers[static_cast<size_t>(i)].stage, chunk % 2) << plan.model->layer(i).name;
  }
  // Chunk 1 (stage 1) hands fc1 its input back on stage 0: the last stage sends to the first.
  const InputTransfer& into_fc1 = compiled.layers[static_cast<size_t>(fc1)].inputs.at(0);
  ASSERT_TRUE(into_fc1.forward_send.has_value());
  EXPECT_EQ(into_fc1.forward_send->source_index, 1);
  EXPECT_EQ(into_fc1.forward_send->destination_index, 0);
  ASSERT_TRUE(into_fc1.backward_send.has_value());
  EXPECT_EQ(into_fc1.backward_send->source_index, 0);
  EXPECT_EQ(into_fc1.backward_send->destination_index, 1);
  EXPECT_EQ(plan_to_json(plan)["pipeline"].dump(),
            R"({"axis":"pipe","stage_starts":["conv3","fc1","fc2"],"micro_batches":2,"schedule":"interleaved_1f1b",)"
            R"("virtual_stages":2})");
  EXPECT_EQ(plan_to_json(read(plan_to_json(plan))), plan_to_json(plan));
}

TEST(PlanJson, MicroBatchesWithoutAPipelineAccumulateGradients) {
  ordered_json document = base_plan();
  document["micro_batches"] = 2;
  const Plan plan = read(document);
  EXPECT_EQ(plan.pipe_axis, -1);
  EXPECT_EQ(plan.stage_count(), 1);
  EXPECT_EQ(plan.micro_batches, 2);
  EXPECT_EQ(plan.micro_batch_size(), 4);
  EXPECT_EQ(plan_to_json(plan)["micro_batches"], 2);
  expect_same_plan(plan, read(plan_to_json(plan)));
  EXPECT_FALSE(plan_to_json(read(base_plan())).contains("micro_batches"));
}

TEST(PlanJson, GradientDtypeIsReadAndWritten) {
  ordered_json document = base_plan();
  document["dtype"] = "bf16";
  document["options"] = ordered_json::parse(R"({"gradient_dtype": "fp32"})");
  const Plan plan = read(document);
  EXPECT_EQ(plan.gradient_dtype, model::DType::fp32);
  EXPECT_EQ(plan_to_json(plan)["options"]["gradient_dtype"], "fp32");
  expect_same_plan(plan, read(plan_to_json(plan)));
  EXPECT_FALSE(plan_to_json(read(base_plan()))["options"].contains("gradient_dtype"));
}

TEST(PlanJson, SelectiveRecomputeIsReadAndWritten) {
  ordered_json document = base_plan();
  document["options"] = ordered_json::parse(R"({"recompute": "selective"})");
  const Plan plan = read(document);
  EXPECT_TRUE(plan.recompute_attention);
  EXPECT_FALSE(plan.recompute_activations);
  EXPECT_EQ(plan_to_json(plan)["options"]["recompute"], "selective");
  EXPECT_TRUE(read(plan_to_json(plan)).recompute_attention);
}

TEST(PlanJson, OptimizerAndOptionsAreRead) {
  ordered_json document = base_plan();
  document["dtype"] = "bf16";
  document["optimizer"] = ordered_json::parse(
      R"({"kind": "adam", "learning_rate": 0.001, "beta1": 0.8, "beta2": 0.99, "epsilon": 1e-6, "weight_decay": 0.1})");
  document["options"] = ordered_json::parse(
      R"({"recompute": true, "zero_stage": 2, "overlap_gradient_sync": false, "gradient_bucket_bytes": 1000})");
  const Plan plan = read(document);
  EXPECT_EQ(plan.dtype, model::DType::bf16);
  EXPECT_TRUE(plan.optimizer == (OptimizerConfig{OptimizerKind::adam, 0.001, 0.9, 0.8, 0.99, 1e-6, 0.1}));
  EXPECT_TRUE(plan.recompute_activations);
  EXPECT_EQ(plan.zero_stage, 2);
  EXPECT_FALSE(plan.overlap_gradient_sync);
  EXPECT_EQ(plan.gradient_bucket_bytes, 1000);
  expect_same_plan(plan, read(plan_to_json(plan)));
}

TEST(PlanJson, WrittenPlanListsEveryLayerAndReloadsIdentically) {
  const Plan plan = read(base_plan());
  const ordered_json written = plan_to_json(plan);
  EXPECT_FALSE(written.contains("default"));
  EXPECT_EQ(written["layers"].size(), static_cast<size_t>(plan.model->size()));
  EXPECT_EQ(written["layers"]["loss"].dump(), R"({"batch":["data"]})");
  expect_same_plan(plan, read(written));
}

TEST(PlanJson, ExamplePlansLoadAndRoundTrip) {
  const fs::path folder = scratch_folder("examples");
  int count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kExamples)) {
    SCOPED_TRACE(entry.path().string());
    const Plan plan = load_plan_file(entry.path());
    const fs::path copy = folder / entry.path().filename();
    save_plan_file(plan, copy);
    expect_same_plan(plan, load_plan_file(copy));
    ++count;
  }
  EXPECT_EQ(count, 8);
}

TEST(PlanJson, ExamplePlansSayWhatTheirNamesSay) {
  const Plan splitbrain = load_plan_file(kExamples / "fashion-vgg-splitbrain-2.json");
  EXPECT_EQ(splitbrain.family, "splitbrain");
  EXPECT_FALSE(splitbrain.description.empty());
  EXPECT_TRUE(sharding_of(splitbrain, "conv4") == shard({0, 1}));
  EXPECT_TRUE(sharding_of(splitbrain, "fc2") == shard({0}, {1}));

  const Plan pipeline = load_plan_file(kExamples / "vgg16-cifar10-pipeline-4.json");
  EXPECT_EQ(pipeline.mesh.rank_count(), 4);
  EXPECT_EQ(pipeline.stage_count(), 2);
  EXPECT_EQ(pipeline.micro_batches, 4);
  EXPECT_EQ(pipeline.schedule, PipelineSchedule::one_f_one_b);

  const Plan interleaved = load_plan_file(kExamples / "vgg16-cifar10-interleaved-4.json");
  EXPECT_EQ(interleaved.stage_count(), 2);
  EXPECT_EQ(interleaved.chunk_count(), 4);
  EXPECT_EQ(interleaved.schedule, PipelineSchedule::interleaved_one_f_one_b);
  EXPECT_EQ(interleaved.micro_batches % interleaved.stage_count(), 0);

  const Plan megatron = load_plan_file(kExamples / "gpt2-small-megatron-8.json");
  EXPECT_EQ(megatron.mesh.rank_count(), 8);
  EXPECT_TRUE(sharding_of(megatron, "h5.attn.core") == shard({0}, {1}));
  EXPECT_TRUE(sharding_of(megatron, "h5.mlp.c_proj") == shard({0}, {}, {1}));
  EXPECT_EQ(megatron.optimizer.kind, OptimizerKind::adam);

  const Plan spatial = load_plan_file(kExamples / "resnet18-spatial-2.json");
  EXPECT_TRUE(sharding_of(spatial, "layer1.0.relu1") == shard({}, {}, {}, {0}));
  EXPECT_TRUE(sharding_of(spatial, "layer2.0.conv1") == shard({0}));  // stride 2

  // Attention inherits the sequence split of its q|k|v projection: context parallelism.
  const Plan context = load_plan_file(kExamples / "llama-tiny-context-parallel-4.json");
  EXPECT_TRUE(sharding_of(context, "h1.attention.core") == shard({0}, {}, {}, {1}));
}

TEST(PlanJson, RelativeModelPathIsRelativeToThePlanFile) {
  const fs::path root = scratch_folder("relative");
  fs::create_directories(root / "a");
  fs::create_directories(root / "b");
  model::save_model_file(model::resolve_model("fashion-vgg"), root / "a" / "net.json");
  ordered_json document = base_plan();
  document["model"] = "net.json";
  std::ofstream(root / "a" / "plan.json") << document.dump(2);

  const Plan plan = load_plan_file(root / "a" / "plan.json");
  EXPECT_EQ(plan.model->name(), "fashion-vgg");
  save_plan_file(plan, root / "b" / "plan.json");
  const Plan moved = load_plan_file(root / "b" / "plan.json");
  expect_same_plan(plan, moved);
  std::ifstream written(root / "b" / "plan.json");
  EXPECT_EQ(ordered_json::parse(written)["model"], "../a/net.json");
}

}  // namespace
}  // namespace splitbrain::plans
