// with_sequence_parallelism: on a tensor-parallel GPT the per-token layers split the sequence over
// the tensor axis, so a row-parallel linear's partial sums are reduce-scattered (no all-reduce is
// left) and each column-parallel linear all-gathers its input, which it keeps split.

#include <gtest/gtest.h>

#include <string>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/sequence_parallel.h"
#include "tests/support/test_plans.h"

namespace splitbrain::plans {
namespace {

Plan megatron_tensor_parallel(const std::string& spec, int t) {
  return build_plan(spec, Mesh({{"data", 2}, {"model", t}}), 4, [](const model::Layer& layer) {
    LayerSharding sharding{{0}, {}, {}, {}};
    if (layer.name.ends_with("c_attn") || layer.name.ends_with("c_fc")) sharding.out = {1};
    if (layer.name.ends_with("c_proj")) sharding.in = {1};
    return sharding;
  });
}

int count_kind(const CompiledPlan& compiled, CollectiveKind kind) {
  int n = 0;
  for (const CompiledLayer& layer : compiled.layers) {
    for (const InputTransfer& input : layer.inputs) {
      for (const Collective& c : input.forward) n += c.kind == kind ? 1 : 0;
    }
  }
  return n;
}

TEST(SequenceParallel, RowParallelSumsAreReduceScatteredAndColumnParallelInputsGathered) {
  const std::string spec = "gpt:layers=2,hidden=32,heads=4,seq=8,vocab=50,positions=8";
  const Plan tensor = megatron_tensor_parallel(spec, 2);
  const std::optional<Plan> sequence = with_sequence_parallelism(tensor);
  ASSERT_TRUE(sequence.has_value());
  EXPECT_EQ(sequence->family, tensor.family + " +sp");
  EXPECT_TRUE(sequence->regather_saved_inputs);
  for (int v = 0; v < tensor.model->size(); ++v) {
    const model::Layer& layer = tensor.model->layer(v);
    const LayerSharding& sharding = sequence->layers[static_cast<size_t>(v)];
    const bool per_token = layer.kind == model::OpKind::layernorm || layer.kind == model::OpKind::dropout ||
                           layer.kind == model::OpKind::add;
    SCOPED_TRACE(layer.name);
    EXPECT_EQ(sharding.spatial, per_token ? std::vector<int>{1} : std::vector<int>{});
    EXPECT_EQ(sharding.batch, std::vector<int>{0});
  }
  const CompiledPlan before = compile_plan(tensor);
  const CompiledPlan after = compile_plan(*sequence);
  // Per block: two row-parallel outputs all-reduced before; reduce-scattered after, and the two
  // column-parallel linears (and the head) gather their inputs.
  EXPECT_EQ(count_kind(before, CollectiveKind::all_reduce), 4);
  EXPECT_EQ(count_kind(after, CollectiveKind::all_reduce), 0);
  EXPECT_EQ(count_kind(after, CollectiveKind::reduce_scatter), 4);
  EXPECT_GE(count_kind(after, CollectiveKind::all_gather), 4);
}

TEST(SequenceParallel, NeedsTensorParallelismAndASequenceThatDivides) {
  const Plan data_parallel = build_plan("gpt:layers=1,hidden=32,heads=4,seq=8,vocab=50,positions=8",
                                        Mesh({{"data", 2}}), 4, testing_support::batch_on_first_axis);
  EXPECT_FALSE(with_sequence_parallelism(data_parallel).has_value());
  // 9 positions do not split over 2 ranks.
  EXPECT_FALSE(with_sequence_parallelism(
                   megatron_tensor_parallel("gpt:layers=1,hidden=32,heads=4,seq=9,vocab=50,positions=9", 2))
                   .has_value());
}

}  // namespace
}  // namespace splitbrain::plans
