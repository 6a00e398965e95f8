// stage_memory and micro_batches_in_flight: model states against the parameter count and the
// ZeRO formulas of Rajbhandari et al. (SC 2020), activations against a hand count.

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "model/graph_builder.h"
#include "model/statistics.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "plans/plan_builder.h"
#include "sim/memory_model.h"

namespace splitbrain::sim {
namespace {

using model::OpKind;
using plans::LayerSharding;
using plans::Mesh;
using plans::Plan;

constexpr int64_t kVgg16Params = 138'357'544;  // torchvision

Plan make_plan(std::shared_ptr<const model::Model> net, Mesh mesh, int64_t batch, const plans::ShardingRule& rule) {
  const std::string spec = net->name();
  return plans::build_plan(std::move(net), spec, std::move(mesh), batch, rule);
}

LayerSharding batch_on_axis_0(const model::Layer&) { return LayerSharding{{0}, {}, {}, {}}; }

Plan data_parallel(const std::string& zoo_spec, int ranks, int64_t batch) {
  return make_plan(std::make_shared<model::Model>(model::build_zoo_model(zoo_spec)), Mesh({{"data", ranks}}), batch,
                   batch_on_axis_0);
}

MemoryBreakdown memory_of(const Plan& plan, int stage = 0) {
  return stage_memory(plan, plans::compile_plan(plan), stage);
}

// data [16] -> fc1 (8) -> relu -> fc2 (4) -> loss.
std::shared_ptr<const model::Model> mlp() {
  model::GraphBuilder b("mlp", "test");
  b.add("data", OpKind::input, model::InputAttrs{{16}, false}, {});
  model::LinearAttrs fc;
  fc.out_features = 8;
  b.add("fc1", OpKind::linear, fc, {"data"});
  b.add("relu", OpKind::relu, model::NoAttrs{}, {"fc1"});
  fc.out_features = 4;
  b.add("fc2", OpKind::linear, fc, {"relu"});
  b.add("loss", OpKind::softmax_cross_entropy, model::NoAttrs{}, {"fc2"});
  return std::make_shared<model::Model>(b.build());
}

TEST(MemoryModel, DataParallelVgg16ModelStatesAreFourBytesPerParameter) {
  Plan plan = data_parallel("vgg16", 1, 32);
  ASSERT_EQ(plan.model->parameter_count(), kVgg16Params);
  MemoryBreakdown m = memory_of(plan);
  EXPECT_EQ(m.params, 4 * kVgg16Params);     // fp32 weights
  EXPECT_EQ(m.grads, 4 * kVgg16Params);      // fp32 gradients
  EXPECT_EQ(m.optimizer, 4 * kVgg16Params);  // one fp32 momentum buffer

  plan.optimizer.kind = plans::OptimizerKind::adam;
  EXPECT_EQ(memory_of(plan).optimizer, 8 * kVgg16Params);  // two fp32 moments

  plan.optimizer.kind = plans::OptimizerKind::sgd_momentum;
  plan.dtype = model::DType::bf16;
  m = memory_of(plan);
  EXPECT_EQ(m.params, 2 * kVgg16Params);
  EXPECT_EQ(m.grads, 2 * kVgg16Params);
  EXPECT_EQ(m.optimizer, (4 + 4) * kVgg16Params);  // momentum + fp32 master weights
}

TEST(MemoryModel, ZeroStagesShardModelStatesAsRajbhandariEtAl) {
  // Mixed-precision Adam: K = 12 (fp32 master 4 + moments 8). With Psi parameters over N_d = 4:
  //   ZeRO 0: (2+2+K) Psi;  1: 2 Psi + 2 Psi + K Psi/N_d;  2: 2 Psi + (2+K) Psi/N_d;
  //   3: (2+2+K) Psi/N_d, each Psi/N_d rounded up by the padding that makes the collectives even.
  Plan plan = data_parallel("vgg16", 4, 32);
  plan.dtype = model::DType::bf16;
  plan.optimizer.kind = plans::OptimizerKind::adam;
  constexpr int64_t k = 12;
  constexpr int64_t psi = kVgg16Params;

  plan.zero_stage = 0;
  EXPECT_EQ(memory_of(plan).params + memory_of(plan).grads + memory_of(plan).optimizer, (2 + 2 + k) * psi);

  for (int zero = 1; zero <= 3; ++zero) {
    plan.zero_stage = zero;
    const plans::CompiledPlan compiled = plans::compile_plan(plan);
    // The slice of a rank: one padded quarter of every bucket (padding < 4 elements a bucket).
    int64_t slice = 0;
    for (const plans::GradientBucket& bucket : compiled.buckets) {
      EXPECT_EQ(bucket.padded_elements % 4, 0);
      slice += bucket.padded_elements / 4;
    }
    EXPECT_GE(slice * 4, psi);
    EXPECT_LT(slice * 4, psi + 4 * static_cast<int64_t>(compiled.buckets.size()));
    // Stage 3 pads per layer (the parameter all-gathers).
    int64_t layer_slices = 0;
    for (const plans::CompiledLayer& layer : compiled.layers) {
      int64_t elements = 0;
      for (const plans::ParameterShard& p : layer.layouts.parameters) elements += p.local_elements;
      layer_slices += (elements + 3) / 4;
    }
    const MemoryBreakdown m = stage_memory(plan, compiled, 0);
    SCOPED_TRACE(zero);
    EXPECT_EQ(m.optimizer, k * slice);
    EXPECT_EQ(m.grads, zero >= 2 ? 2 * slice : 2 * psi);
    EXPECT_EQ(m.params, zero >= 3 ? 2 * layer_slices : 2 * psi);
    // Within padding of the paper's totals.
    const double paper = zero == 1 ? 4.0 * psi + k * psi / 4.0
                         : zero == 2 ? 2.0 * psi + (2 + k) * psi / 4.0
                                     : (2 + 2 + k) * psi / 4.0;
    const auto ours = static_cast<double>(m.params + m.grads + m.optimizer);
    EXPECT_GE(ours, paper);
    EXPECT_LE(ours, paper + 16.0 * 4 * static_cast<double>(compiled.buckets.size() + compiled.layers.size()));
  }
}

TEST(MemoryModel, ActivationsMatchAHandCountAndHalveWithTheBatch) {
  // Per sample, fp32, kept for backward (each tensor counted once, at its producer):
  //   data [16]: read by fc1's weight gradient            16 x 4 = 64 B
  //   fc1  [8]:  relu keeps its own output, not its input          0 B
  //   relu [8]:  read by relu's backward and fc2's          8 x 4 = 32 B
  //   fc2  [4]:  the loss keeps its softmax instead                0 B
  //   loss:      softmax probabilities 4 x 4 + a 4-byte label     20 B
  // 116 B per sample; batch 8 -> 928 B.
  const Plan one = make_plan(mlp(), Mesh({{"data", 1}}), 8, batch_on_axis_0);
  const MemoryBreakdown m = memory_of(one);
  EXPECT_EQ(m.activations, 928);
  EXPECT_EQ(m.activations, model::compute_statistics(*one.model, 8, model::DType::fp32).saved_bytes);
  // Buffers, as the executor holds them: the backward's working set peaks at relu, whose output
  // gradient and input gradient are 8 x 8 x 4 B each (512 B). One rank has no gradient bucket.
  EXPECT_EQ(m.buffers, 512);
  // At once: the backward's gradients come while some kept tensors are still held, but the two
  // peaks do not coincide (relu's working set comes after the loss and fc2 let go of theirs).
  EXPECT_GT(m.activations_and_buffers_at_once, m.activations);
  EXPECT_LT(m.activations_and_buffers_at_once, m.activations + m.buffers);
  EXPECT_EQ(m.total(), m.params + m.grads + m.optimizer + m.activations_and_buffers_at_once);
  // Parameters: fc1 16 x 8 + 8 = 136, fc2 8 x 4 + 4 = 36: 172 x 4 B.
  EXPECT_EQ(m.params, 688);
  // During the forward more lives at once than is kept, per sample: at relu, fc1's output (32 B)
  // is still alive beside its own (32 B) and the data (64 B): 128 B; at the loss, the data, relu's
  // and fc2's outputs (64 + 32 + 16 B), the loss's value (4 B) and its probabilities and label
  // (20 B): 136 B, the most; x 8 = 1088 B, the category's peak.
  EXPECT_EQ(m.activations_in_forward, 1088);
  EXPECT_EQ(m.activations_peak(), 1088);

  const Plan two = make_plan(mlp(), Mesh({{"data", 2}}), 8, batch_on_axis_0);
  const MemoryBreakdown split = memory_of(two);
  EXPECT_EQ(split.activations, 928 / 2);
  // Buffers: the bucket's all-reduce starts after fc1, the last layer of the backward, when every
  // gradient of the working set is gone: 172 x 4 = 688 B, more than relu's 256 B working set.
  EXPECT_EQ(split.buffers, 688);
}

TEST(MemoryModel, MicroBatchesInFlight) {
  Plan plan = data_parallel("fashion-vgg", 1, 64);
  plan.micro_batches = 4;
  EXPECT_EQ(micro_batches_in_flight(plan, 0), 1);  // no pipeline: one micro-batch at a time

  plan.mesh = Mesh({{"pipe", 4}, {"data", 1}});
  plan.pipe_axis = 0;
  plan.micro_batches = 8;
  plan.schedule = plans::PipelineSchedule::gpipe;
  for (int stage = 0; stage < 4; ++stage) EXPECT_EQ(micro_batches_in_flight(plan, stage), 8);
  plan.schedule = plans::PipelineSchedule::one_f_one_b;
  EXPECT_EQ(micro_batches_in_flight(plan, 0), 4);
  EXPECT_EQ(micro_batches_in_flight(plan, 3), 1);
  plan.micro_batches = 2;
  EXPECT_EQ(micro_batches_in_flight(plan, 0), 2);
  EXPECT_THROW(micro_batches_in_flight(plan, 4), plans::PlanError);
}

Plan two_stage_fashion_vgg(plans::PipelineSchedule schedule) {
  Plan plan = make_plan(std::make_shared<model::Model>(model::build_zoo_model("fashion-vgg")),
                        Mesh({{"pipe", 2}, {"data", 1}}), 64,
                        [](const model::Layer&) { return LayerSharding{{1}, {}, {}, {}}; });
  plan.pipe_axis = 0;
  plan.micro_batches = 8;
  plan.schedule = schedule;
  for (int i = plan.model->find("fc1"); i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  return plan;
}

TEST(MemoryModel, OneFOneBKeepsFewerMicroBatchesThanGPipe) {
  const Plan gpipe = two_stage_fashion_vgg(plans::PipelineSchedule::gpipe);
  const Plan ofob = two_stage_fashion_vgg(plans::PipelineSchedule::one_f_one_b);
  const MemoryBreakdown g0 = memory_of(gpipe, 0);
  const MemoryBreakdown o0 = memory_of(ofob, 0);
  // Stage 0 sends its flatten output [8, 3136] (100,352 B) for each of the 8 micro-batches and
  // the sends hold it until the step ends, whatever the schedule.
  const int64_t sends = 8 * 100'352;
  EXPECT_GT(o0.activations, sends);
  EXPECT_EQ(g0.activations - sends, 8 * (o0.activations - sends) / 2);  // 8 micro-batches in flight against 2
  EXPECT_EQ(g0.params, o0.params);

  // Per micro-batch, the two stages together keep what one unpipelined step keeps: the flatten
  // output fc1 reads moves from stage 0's count to stage 1's received copy.
  const MemoryBreakdown o1 = memory_of(ofob, 1);
  EXPECT_EQ((o0.activations - sends) / 2 + o1.activations,
            model::compute_statistics(*ofob.model, 8, model::DType::fp32).saved_bytes);
  // The stages split the parameters between them.
  EXPECT_EQ(o0.params + o1.params, 4 * ofob.model->parameter_count());
}

TEST(MemoryModel, ASentOutputTheStageKeepsStaysHeldPastItsBackward) {
  // Cut after relu5, which keeps its output [8, 256] (8,192 B per micro-batch) for its own
  // backward and sends it to dropout1 on stage 1. The backward lets go of it, the send does not.
  Plan gpipe = two_stage_fashion_vgg(plans::PipelineSchedule::gpipe);
  for (int i = 0; i < gpipe.model->size(); ++i) {
    gpipe.stage_of_layer[static_cast<size_t>(i)] = i >= gpipe.model->find("dropout1") ? 1 : 0;
  }
  Plan ofob = gpipe;
  ofob.schedule = plans::PipelineSchedule::one_f_one_b;
  const int64_t kept = memory_of(gpipe, 0).activations / 8;  // GPipe: all 8 kept at the first backward
  // 1F1B on stage 0: F0 F1 B0 F2 B1 ... F7 B6 B7. At B6's start micro-batches 6 and 7 are kept
  // whole and the sends still hold micro-batches 0-5's relu5 outputs.
  EXPECT_EQ(memory_of(ofob, 0).activations, 2 * kept + 6 * 8'192);
}

TEST(MemoryModel, RecomputationKeepsOnlyStageInputsPerMicroBatch) {
  Plan plan = two_stage_fashion_vgg(plans::PipelineSchedule::gpipe);
  const MemoryBreakdown plain = memory_of(plan, 0);
  plan.recompute_activations = true;
  const MemoryBreakdown recomputed = memory_of(plan, 0);
  // Stage 0 keeps the 8 micro-batches' data [8, 1, 28, 28] (8 x 784 x 4 = 25,088 B each) plus
  // one micro-batch's activations (a GPipe eighth of the plain figure without the sends, which
  // both hold: 8 x 100,352 B).
  const int64_t sends = 8 * 100'352;
  EXPECT_EQ(recomputed.activations, 8 * 25'088 + (plain.activations - sends) / 8 + sends);
  EXPECT_LT(recomputed.activations, plain.activations);
  // Stage 1 keeps the received flatten output: 8 x 3,136 x 4 = 100,352 B per micro-batch.
  const MemoryBreakdown stage1 = memory_of(plan, 1);
  plan.recompute_activations = false;
  EXPECT_EQ(stage1.activations, 8 * 100'352 + memory_of(plan, 1).activations / 8);
}

}  // namespace
}  // namespace splitbrain::sim
