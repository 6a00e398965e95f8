// compile_plan: the communication around every layer and the gradient buckets, for the plan
// families the planner emits.

#include <gtest/gtest.h>

#include <functional>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/plan_error.h"
#include "tests/support/test_plans.h"

namespace splitbrain::plans {
namespace {

int64_t bytes_of(const std::vector<Collective>& list) {
  int64_t total = 0;
  for (const Collective& c : list) total += group_bytes_sent(c);
  return total;
}

TEST(CompiledPlan, DataParallelMovesOnlyGradients) {
  const Plan plan = testing_support::data_parallel_plan("fashion-vgg", 2, 64);
  const CompiledPlan compiled = compile_plan(plan);
  for (const CompiledLayer& layer : compiled.layers) {
    for (const InputTransfer& input : layer.inputs) {
      EXPECT_TRUE(input.forward.empty());
      EXPECT_TRUE(input.backward.empty());
    }
  }
  // 870,634 parameters = 3.48 MB of fp32 gradients: one bucket under the 25 MB default.
  ASSERT_EQ(compiled.buckets.size(), 1u);
  EXPECT_EQ(compiled.buckets[0].elements, 870'634);
  ASSERT_EQ(compiled.buckets[0].reduction.size(), 1u);
  EXPECT_EQ(compiled.buckets[0].reduction[0].kind, CollectiveKind::all_reduce);
  EXPECT_EQ(compiled.buckets[0].reduction[0].buffer_bytes, 870'634 * 4);
  EXPECT_EQ(compiled.buckets[0].layers.front(), plan.model->find("fc2"));  // backward order
}

TEST(CompiledPlan, SplitBrainGathersActivationsIntoTheShardedClassifier) {
  // Mesh {data: 1, model: 2}: convs split the batch over both axes; fc1 and fc2 split the batch
  // over data and their output features over model (SplitBrain's group of g = 2).
  const Mesh mesh({{"data", 1}, {"model", 2}});
  const Plan plan = build_plan("fashion-vgg", mesh, 64, [](const model::Layer& layer) {
    if (layer.kind == model::OpKind::linear || layer.name == "relu5" || layer.name == "dropout1") {
      return LayerSharding{{0}, {1}, {}, {}};
    }
    if (layer.kind == model::OpKind::softmax_cross_entropy) return LayerSharding{{0}, {}, {}, {}};
    return LayerSharding{{0, 1}, {}, {}, {}};
  });
  const CompiledPlan compiled = compile_plan(plan);
  const model::Model& net = *plan.model;

  // flatten [64, 3136], batch split 2 ways -> fc1 wants the whole batch: all-gather on dim 0.
  const InputTransfer& into_fc1 = compiled.layers[static_cast<size_t>(net.find("fc1"))].inputs[0];
  ASSERT_EQ(into_fc1.forward.size(), 1u);
  EXPECT_EQ(into_fc1.forward[0].kind, CollectiveKind::all_gather);
  EXPECT_EQ(into_fc1.forward[0].dim, 0);
  EXPECT_EQ(into_fc1.forward[0].buffer_bytes, 64 * 3136 * 4);
  // Backward: fc1's input gradient is a partial sum over model; the flatten output is split on
  // the batch over model: a reduce-scatter on dim 0.
  ASSERT_EQ(into_fc1.backward.size(), 1u);
  EXPECT_EQ(into_fc1.backward[0].kind, CollectiveKind::reduce_scatter);

  // fc2's logits are split over model; the loss wants whole rows: all-gather on dim 1.
  const InputTransfer& into_loss = compiled.layers[static_cast<size_t>(net.find("loss"))].inputs[0];
  ASSERT_EQ(into_loss.forward.size(), 1u);
  EXPECT_EQ(into_loss.forward[0].kind, CollectiveKind::all_gather);
  EXPECT_EQ(into_loss.forward[0].dim, 1);

  // fc1 -> relu5 -> dropout1 -> fc2: fc2 splits its *output* features, so it needs its input
  // whole: all-gather of [64, 256] on dim 1 (Gholami's forward all-gather of Y).
  const InputTransfer& into_fc2 = compiled.layers[static_cast<size_t>(net.find("fc2"))].inputs[0];
  ASSERT_EQ(into_fc2.forward.size(), 1u);
  EXPECT_EQ(into_fc2.forward[0].kind, CollectiveKind::all_gather);
  EXPECT_EQ(group_bytes_sent(into_fc2.forward[0]), 2 * (64 * 256 * 4) / 2);

  // Gradients: the convs sync over both axes, the classifier over data (size 1: nothing).
  ASSERT_EQ(compiled.buckets.size(), 1u);
  EXPECT_EQ(compiled.buckets[0].axes, (std::vector<int>{0, 1}));
  EXPECT_EQ(compiled.buckets[0].elements, 320 + 9248 + 18496 + 36928);
}

TEST(CompiledPlan, PipelineSendsActivationsForwardAndGradientsBack) {
  const Mesh mesh({{"pipe", 2}, {"data", 2}});
  Plan plan = build_plan("fashion-vgg", mesh, 64, [](const model::Layer&) { return LayerSharding{{1}, {}, {}, {}}; });
  plan.pipe_axis = 0;
  plan.micro_batches = 4;
  const int fc1 = plan.model->find("fc1");
  for (int i = fc1; i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  const CompiledPlan compiled = compile_plan(plan);
  EXPECT_EQ(compiled.micro_batch, 16);
  const InputTransfer& into_fc1 = compiled.layers[static_cast<size_t>(fc1)].inputs[0];
  ASSERT_TRUE(into_fc1.forward_send.has_value());
  EXPECT_EQ(into_fc1.forward_send->kind, CollectiveKind::send_recv);
  EXPECT_EQ(into_fc1.forward_send->buffer_bytes, 16 / 2 * 3136 * 4);  // this rank's half of a micro-batch
  ASSERT_TRUE(into_fc1.backward_send.has_value());
  EXPECT_EQ(into_fc1.backward_send->source_index, 1);
  EXPECT_EQ(into_fc1.backward_send->destination_index, 0);
  // One bucket per stage, each synchronised over data.
  ASSERT_EQ(compiled.buckets.size(), 2u);
  EXPECT_EQ(compiled.buckets[0].stage, 1);
  EXPECT_EQ(compiled.buckets[1].stage, 0);
}

TEST(CompiledPlan, ZeroStage3PadsEachLayerOfABucketAsItsGather) {
  // Over 3 ranks most layers do not split evenly. Stage 3 keeps each layer's padded slice (what
  // its all-gather assembles), so a bucket's reduce-scatter must cover exactly those slices: the
  // layers' padded sizes added up, not the bucket's total padded once (stages 1-2).
  Plan plan = testing_support::data_parallel_plan("fashion-vgg", 3, 48);
  plan.zero_stage = 3;
  const CompiledPlan compiled = compile_plan(plan);
  ASSERT_FALSE(compiled.buckets.empty());
  int64_t padded_once = 0;
  for (const GradientBucket& bucket : compiled.buckets) {
    int64_t gathered_elements = 0;
    for (int v : bucket.layers) {
      const CompiledLayer& layer = compiled.layers[static_cast<size_t>(v)];
      ASSERT_EQ(layer.parameter_gathers.size(), 1u);
      gathered_elements += layer.parameter_gathers[0].buffer_bytes / 4;
    }
    EXPECT_EQ(bucket.padded_elements, gathered_elements);
    EXPECT_EQ(bucket.padded_elements % 3, 0);
    EXPECT_EQ(bucket.reduction[0].buffer_bytes, bucket.padded_elements * 4);
    EXPECT_TRUE(bucket.gather.empty());
    padded_once += (bucket.elements + 2) / 3 * 3;
  }
  plan.zero_stage = 2;
  int64_t stage2 = 0;
  for (const GradientBucket& bucket : compile_plan(plan).buckets) stage2 += bucket.padded_elements;
  EXPECT_EQ(stage2, padded_once);
  int64_t stage3 = 0;
  for (const GradientBucket& bucket : compiled.buckets) stage3 += bucket.padded_elements;
  EXPECT_GT(stage3, stage2) << "fashion-vgg's layers should not all split evenly over 3";
}

TEST(CompiledPlan, ZeroShardsTheBucketsAndPadsThem) {
  Plan plan = testing_support::data_parallel_plan("fashion-vgg", 4, 64);
  plan.zero_stage = 2;
  const CompiledPlan compiled = compile_plan(plan);
  ASSERT_EQ(compiled.buckets.size(), 1u);
  const GradientBucket& bucket = compiled.buckets[0];
  EXPECT_EQ(bucket.padded_elements, 870'636);  // next multiple of 4
  EXPECT_EQ(bucket.reduction[0].kind, CollectiveKind::reduce_scatter);
  EXPECT_EQ(bucket.gather[0].kind, CollectiveKind::all_gather);
  // A reduce-scatter plus an all-gather move what one all-reduce would: 2 (n-1)/n S each rank.
  EXPECT_EQ(bytes_of(bucket.reduction) + bytes_of(bucket.gather), 4 * 2 * 3 * (870'636 * 4 / 4));
}

TEST(CompiledPlan, RejectsMicroBatchesThatDoNotDivide) {
  Plan plan = testing_support::data_parallel_plan("fashion-vgg", 2, 64);
  plan.micro_batches = 5;
  EXPECT_THROW(compile_plan(plan), PlanError);
}

void expect_same_layouts(const LayerLayouts& got, const LayerLayouts& want) {
  EXPECT_EQ(got.inputs, want.inputs);
  EXPECT_EQ(got.output, want.output);
  EXPECT_EQ(got.input_gradients, want.input_gradients);
  ASSERT_EQ(got.parameters.size(), want.parameters.size());
  for (size_t p = 0; p < got.parameters.size(); ++p) {
    EXPECT_EQ(got.parameters[p].global_shape, want.parameters[p].global_shape);
    EXPECT_EQ(got.parameters[p].layout, want.parameters[p].layout);
    EXPECT_EQ(got.parameters[p].local_elements, want.parameters[p].local_elements);
  }
  EXPECT_EQ(got.gradient_sync_axes, want.gradient_sync_axes);
  EXPECT_EQ(got.forward_internal, want.forward_internal);
  EXPECT_EQ(got.backward_internal, want.backward_internal);
  EXPECT_EQ(got.work_fraction, want.work_fraction);
}

TEST(CompiledPlan, AlikeLayersSharingWorkGetWhatEachWouldAlone) {
  // compile_plan works layouts and redistributions out once per class of alike layers
  // (model/alike_layers.h), sharding and layouts. Here alike blocks differ in sharding (tensor
  // parallel or replicated) and in stage: every layer must get what working it out alone gives.
  const Mesh mesh({{"pipe", 2}, {"model", 2}});
  Plan plan =
      build_plan("gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16", mesh, 8, [](const model::Layer& layer) {
        LayerSharding sharding;
        const bool tensor_parallel = layer.name.starts_with("h0.") || layer.name.starts_with("h2.");
        if (!tensor_parallel) return sharding;
        if (layer.name.ends_with("c_attn") || layer.name.ends_with("c_fc")) sharding.out = {1};
        if (layer.name.ends_with("c_proj")) sharding.in = {1};
        return sharding;
      });
  plan.pipe_axis = 0;
  plan.micro_batches = 2;
  for (int i = plan.model->find("h2.ln_1"); i < plan.model->size(); ++i)
    plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  const CompiledPlan compiled = compile_plan(plan);
  const model::Model& net = *plan.model;
  int sends = 0;
  for (int i = 0; i < net.size(); ++i) {
    SCOPED_TRACE(net.layer(i).name);
    const CompiledLayer& layer = compiled.layers[static_cast<size_t>(i)];
    expect_same_layouts(layer.layouts, layer_layouts(net, i, plan.layers[static_cast<size_t>(i)], plan.mesh,
                                                     compiled.micro_batch, plan.dtype, layer.tied_copy.has_value()));
    ASSERT_EQ(layer.inputs.size(), net.layer(i).inputs.size());
    for (int position = 0; position < static_cast<int>(layer.inputs.size()); ++position) {
      const InputTransfer& got = layer.inputs[static_cast<size_t>(position)];
      const int producer = net.layer(i).inputs[static_cast<size_t>(position)];
      const InputTransfer want =
          compile_input(plan, compiled.layers[static_cast<size_t>(producer)], layer, i, position);
      EXPECT_EQ(got.producer, want.producer);
      EXPECT_EQ(got.from_other_stage, want.from_other_stage);
      EXPECT_EQ(got.forward, want.forward);
      EXPECT_EQ(got.backward, want.backward);
      EXPECT_EQ(got.gradient_flows, want.gradient_flows);
      // A tensor read by several layers of a later stage crosses once (the first reader's send).
      if (got.forward_send) {
        EXPECT_EQ(got.forward_send, want.forward_send);
      }
      if (got.backward_send) {
        EXPECT_EQ(got.backward_send, want.backward_send);
      }
      sends += got.forward_send ? 1 : 0;
    }
  }
  EXPECT_GT(sends, 0);
  // The tensor-parallel blocks move activations where the replicated ones do not.
  auto collectives_in = [&](const std::string& block) {
    size_t count = 0;
    for (int i = 0; i < net.size(); ++i) {
      if (!net.layer(i).name.starts_with(block)) continue;
      for (const InputTransfer& input : compiled.layers[static_cast<size_t>(i)].inputs) count += input.forward.size();
    }
    return count;
  };
  EXPECT_GT(collectives_in("h0."), 0u);
  EXPECT_GT(collectives_in("h2."), 0u);
  EXPECT_EQ(collectives_in("h1."), 0u);
}

}  // namespace
}  // namespace splitbrain::plans
