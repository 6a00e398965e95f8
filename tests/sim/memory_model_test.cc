// stage_memory (the walk of the step program) and micro_batches_in_flight: model states against
// the parameter count and the ZeRO formulas of Rajbhandari et al. (SC 2020), activations against a
// hand count.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "model/graph_builder.h"
#include "model/statistics.h"
#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/sequence_parallel.h"
#include "plans/plan_error.h"
#include "plans/plan_builder.h"
#include "plans/step_compiler.h"
#include "sim/memory_model.h"
#include "tests/support/test_plans.h"

namespace splitbrain::sim {
namespace {

using model::OpKind;
using plans::LayerSharding;
using plans::Mesh;
using plans::Plan;

constexpr int64_t kVgg16Params = 138'357'544;  // torchvision

using testing_support::batch_on_first_axis;
using testing_support::data_parallel_plan;

MemoryBreakdown memory_of(const Plan& plan, int stage = 0) {
  return stage_memory(plan, plans::compile_plan(plan), stage);
}

// The activation bytes alive on `stage` right before the step program first runs `op` on
// micro-batch `micro` (a backward's start: what the forwards before it kept).
int64_t activations_before(const Plan& plan, int stage, plans::StepOp op, int micro) {
  int rank = 0;
  while (plan.pipe_axis >= 0 && plan.mesh.coordinate(rank, plan.pipe_axis) != stage) ++rank;
  const plans::StepProgram program = plans::compile_step(plan, plans::compile_plan(plan), rank);
  int64_t alive = 0;
  for (const plans::StepInstruction& i : program.instructions) {
    if (i.op == op && i.micro_batch == micro) return alive;
    if (i.op != plans::StepOp::alloc && i.op != plans::StepOp::free) continue;
    const plans::StepBuffer& b = program.buffers[static_cast<size_t>(i.buffer)];
    if (b.category == plans::MemoryCategory::activations) alive += i.op == plans::StepOp::alloc ? b.bytes : -b.bytes;
  }
  ADD_FAILURE() << "no " << plans::step_op_name(op) << " of micro-batch " << micro << " on stage " << stage;
  return -1;
}

int64_t activations_when_the_backward_starts(const Plan& plan) {
  return activations_before(plan, 0, plans::StepOp::backward, 0);
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
  Plan plan = data_parallel_plan("vgg16", 1, 32);
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
  Plan plan = data_parallel_plan("vgg16", 4, 32);
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
    const double paper = zero == 1   ? 4.0 * psi + k * psi / 4.0
                         : zero == 2 ? 2.0 * psi + (2 + k) * psi / 4.0
                                     : (2 + 2 + k) * psi / 4.0;
    const auto ours = static_cast<double>(m.params + m.grads + m.optimizer);
    EXPECT_GE(ours, paper);
    EXPECT_LE(ours, paper + 16.0 * 4 * static_cast<double>(compiled.buckets.size() + compiled.layers.size()));
  }
}

TEST(MemoryModel, MegatronMixedPrecisionKeepsEighteenBytesPerParameter) {
  // bf16 weights 2, fp32 main gradients 4, fp32 master weights 4, Adam's moments 8: 18 Psi; the
  // distributed optimizer (ZeRO 1 over data parallelism) shards the last 12.
  Plan plan = data_parallel_plan("vgg16", 4, 32);
  plan.dtype = model::DType::bf16;
  plan.gradient_dtype = model::DType::fp32;
  plan.optimizer.kind = plans::OptimizerKind::adam;
  constexpr int64_t psi = kVgg16Params;
  MemoryBreakdown m = memory_of(plan);
  EXPECT_EQ(m.params, 2 * psi);
  EXPECT_EQ(m.grads, 4 * psi);
  EXPECT_EQ(m.optimizer, 12 * psi);
  EXPECT_EQ(m.params + m.grads + m.optimizer, 18 * psi);
  // The gradient buckets are reduced in fp32: twice the bytes of bf16 ones (up to padding).
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Plan half = plan;
  half.gradient_dtype.reset();
  auto reduced_bytes = [](const plans::CompiledPlan& c) {
    int64_t bytes = 0;
    for (const plans::GradientBucket& b : c.buckets) bytes += b.reduction.front().buffer_bytes;
    return bytes;
  };
  const plans::CompiledPlan half_compiled = plans::compile_plan(half);
  EXPECT_NEAR(static_cast<double>(reduced_bytes(compiled)), 2.0 * static_cast<double>(reduced_bytes(half_compiled)),
              16.0 * static_cast<double>(compiled.buckets.size() + half_compiled.buckets.size()));
  plan.zero_stage = 1;
  m = memory_of(plan);
  EXPECT_EQ(m.params + m.grads, 6 * psi);
  EXPECT_NEAR(static_cast<double>(m.optimizer), 12.0 * psi / 4,
              12.0 * 4 * static_cast<double>(compiled.buckets.size()));
}

// Korthikanti et al. 2022, Section 4: one transformer layer keeps sbh(34 + 5as/h) bytes of 16-bit
// activations without parallelism, sbh(10 + 24/t + 5as/(ht)) with t-way tensor parallelism
// (Megatron's: c_attn and c_fc split their outputs, the c_proj layers their inputs) and
// (sbh/t)(34 + 5as/h) when sequence parallelism also splits the rest of the layer (layer norms,
// dropouts, residual adds) along the sequence and keeps the column-parallel linears' inputs split
// (Plan::regather_saved_inputs), for a GPT with Megatron's dropouts (attention probabilities
// included); selective recomputation drops the 5as/(ht) term. Their count leaves out the layer
// norms' per-token statistics (mean and 1/std in fp32: 2 x 8 sb bytes here, split like the
// sequence). One layer's bytes: the activation peak of a model with one more layer, less the
// model's.
TEST(MemoryModel, ATransformerLayerKeepsKorthikantiEtAlsActivations) {
  constexpr int64_t s = 64, b = 2, h = 64, a = 4;
  enum class Split { tensor, tensor_and_sequence };
  auto activations_per_layer = [&](int t, bool selective = false, Split split = Split::tensor) {
    auto peak = [&](int layers) {
      const std::string spec = fmt::format(
          "gpt:layers={},hidden={},heads={},seq={},vocab=96,positions={},attn_dropout=10", layers, h, a, s, s);
      Plan plan = plans::build_plan(spec, Mesh({{"model", t}}), b, [&](const model::Layer& layer) {
        plans::LayerSharding sharding;
        // The attention core and GELU take their producer's split, as a plan file's
        // inheritance gives them.
        const bool first_half = layer.name.ends_with("c_attn") || layer.name.ends_with("c_fc") ||
                                layer.name.ends_with("attn.core") || layer.name.ends_with("gelu");
        const bool second_half = layer.name.ends_with("c_proj");
        if (t > 1 && first_half) sharding.out = {0};
        if (t > 1 && second_half) sharding.in = {0};
        return sharding;
      });
      plan.dtype = model::DType::bf16;
      plan.recompute_attention = selective;
      if (split == Split::tensor_and_sequence) plan = plans::with_sequence_parallelism(plan).value();
      return memory_of(plan).activations_peak();
    };
    return peak(2) - peak(1);
  };
  constexpr int64_t statistics = 2 * 8 * s * b;
  EXPECT_EQ(activations_per_layer(1), s * b * h * (34 + 5 * a * s / h) + statistics);
  for (int t : {2, 4}) {
    SCOPED_TRACE(t);
    EXPECT_EQ(activations_per_layer(t), s * b * h * (10 + 24 / t) + 5 * a * s * s * b / t + statistics);
    EXPECT_EQ(activations_per_layer(t, true), s * b * h * (10 + 24 / t) + statistics);
    EXPECT_EQ(activations_per_layer(t, false, Split::tensor_and_sequence),
              s * b * h * (34 + 5 * a * s / h) / t + statistics / t);
    EXPECT_EQ(activations_per_layer(t, true, Split::tensor_and_sequence), 34 * s * b * h / t + statistics / t);
  }
  // Without tensor parallelism there is nothing to split the sequence over.
  EXPECT_THROW(activations_per_layer(1, false, Split::tensor_and_sequence), std::bad_optional_access);
}

// Recomputation by blocks (Megatron's block method): the first N blocks of the stage keep only
// their input, the others all they save. Blocks are cut where one tensor crosses: the input, the
// two embeddings and their sum, the embedding dropout, then each transformer layer's attention
// and MLP halves (residual blocks). Rerunning two more blocks keeps exactly one layer's
// Korthikanti bytes (sbh(34 + 5as/h) and the layer norms' statistics) less when the backward
// starts, but for the two blocks' inputs (each block is checkpointed on its own: 2sbh in bf16
// each); rerunning every block so keeps less then than rerunning the chunk as one, which has
// made all its activations again before its first backward.
TEST(MemoryModel, RecomputingTheFirstBlocksDropsTheirActivations) {
  constexpr int64_t s = 32, b = 2, h = 32, a = 4;
  const std::string spec =
      fmt::format("gpt:layers=4,hidden={},heads={},seq={},vocab=64,positions={},attn_dropout=10", h, a, s, s);
  Plan plan = plans::build_plan(spec, Mesh({{"data", 1}}), b, batch_on_first_axis);
  plan.dtype = model::DType::bf16;
  auto kept = [&](bool recompute, int blocks) {
    Plan p = plan;
    p.recompute_activations = recompute;
    p.recompute_blocks = blocks;
    return activations_when_the_backward_starts(p);
  };
  const int64_t layer = s * b * h * (34 + 5 * a * s / h) + 2 * 8 * s * b;
  for (int blocks : {3, 5, 7}) {
    SCOPED_TRACE(blocks);
    EXPECT_EQ(kept(true, blocks) - kept(true, blocks + 2), layer - 2 * (2 * s * b * h));
  }
  EXPECT_EQ(kept(true, 2) - kept(true, 3), s * b * h);  // the embedding dropout's mask
  EXPECT_LT(kept(true, 50), kept(true, 0));             // more blocks than the model has: all of them
  EXPECT_EQ(kept(true, 1), kept(false, 0));             // block 1 is the input alone: nothing to rerun
}

TEST(MemoryModel, ActivationsMatchAHandCountAndHalveWithTheBatch) {
  // Per sample, fp32, kept for backward (each tensor counted once, at its producer):
  //   data [16]: read by fc1's weight gradient            16 x 4 = 64 B
  //   fc1  [8]:  relu keeps its own output, not its input          0 B
  //   relu [8]:  read by relu's backward and fc2's          8 x 4 = 32 B
  //   fc2  [4]:  the loss keeps its softmax instead                0 B
  //   loss:      softmax probabilities 4 x 4 + a 4-byte label     20 B
  // 116 B per sample; batch 8 -> 928 B held when the backward starts.
  const Plan one = plans::build_plan(mlp(), "mlp", Mesh({{"data", 1}}), 8, batch_on_first_axis);
  EXPECT_EQ(activations_when_the_backward_starts(one), 928);
  EXPECT_EQ(activations_when_the_backward_starts(one),
            model::compute_statistics(*one.model, 8, model::DType::fp32).saved_bytes);
  const MemoryBreakdown m = memory_of(one);
  // During the forward more lives at once than is kept, per sample: at relu, fc1's output (32 B)
  // is still alive beside its own (32 B) and the data (64 B): 128 B; at the loss, the data, relu's
  // and fc2's outputs (64 + 32 + 16 B), the loss's value (4 B) and its probabilities and label
  // (20 B): 136 B, the most; x 8 = 1088 B, the category's peak.
  EXPECT_EQ(m.activations, 1088);
  // Buffers, as the executor holds them: the backward's working set peaks at relu, whose output
  // gradient and input gradient are 8 x 8 x 4 B each (512 B). One rank has no gradient bucket.
  EXPECT_EQ(m.buffers, 512);
  // At once: the backward's gradients come while some kept tensors are still held, but the two
  // peaks do not coincide (relu's working set comes after the loss and fc2 let go of theirs).
  const int64_t states = m.params + m.grads + m.optimizer;
  EXPECT_GT(m.total(), states + 928);
  EXPECT_LT(m.total(), states + m.activations + m.buffers);
  // Parameters: fc1 16 x 8 + 8 = 136, fc2 8 x 4 + 4 = 36: 172 x 4 B.
  EXPECT_EQ(m.params, 688);

  const Plan two = plans::build_plan(mlp(), "mlp", Mesh({{"data", 2}}), 8, batch_on_first_axis);
  const MemoryBreakdown split = memory_of(two);
  EXPECT_EQ(activations_when_the_backward_starts(two), 928 / 2);
  EXPECT_EQ(split.activations, 1088 / 2);
  // Buffers: the bucket's all-reduce starts after fc1, the last layer of the backward, when every
  // gradient of the working set is gone: 172 x 4 = 688 B, more than relu's 256 B working set.
  EXPECT_EQ(split.buffers, 688);
}

TEST(MemoryModel, MicroBatchesInFlight) {
  Plan plan = data_parallel_plan("fashion-vgg", 1, 64);
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
  Plan plan = plans::build_plan("fashion-vgg", Mesh({{"pipe", 2}, {"data", 1}}), 64, [](const model::Layer&) {
    return LayerSharding{{1}, {}, {}, {}};
  });
  plan.pipe_axis = 0;
  plan.micro_batches = 8;
  plan.schedule = schedule;
  for (int i = plan.model->find("fc1"); i < plan.model->size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = 1;
  return plan;
}

TEST(MemoryModel, OneFOneBKeepsFewerMicroBatchesThanGPipe) {
  const Plan gpipe = two_stage_fashion_vgg(plans::PipelineSchedule::gpipe);
  const Plan ofob = two_stage_fashion_vgg(plans::PipelineSchedule::one_f_one_b);
  using plans::StepOp;
  // Stage 0 sends its flatten output [8, 3136] (100,352 B) for each micro-batch; a send holds it
  // until the next send on that edge, so one is held at a time. At the first backward GPipe has
  // run all 8 forwards, 1F1B two (stages - stage).
  const int64_t send = 100'352;
  const int64_t g0 = activations_before(gpipe, 0, StepOp::backward, 0);
  const int64_t o0 = activations_before(ofob, 0, StepOp::backward, 0);
  EXPECT_EQ(g0 - send, 4 * (o0 - send));
  EXPECT_GT(memory_of(gpipe, 0).activations, memory_of(ofob, 0).activations);
  EXPECT_EQ(memory_of(gpipe, 0).params, memory_of(ofob, 0).params);

  // Per micro-batch, the two stages together keep what one unpipelined step keeps: the flatten
  // output fc1 reads moves from stage 0's count to stage 1's received copy. The last stage runs
  // each micro-batch's backward right after its forward.
  const int64_t o1 = activations_before(ofob, 1, StepOp::backward, 0);
  EXPECT_EQ((o0 - send) / 2 + o1, model::compute_statistics(*ofob.model, 8, model::DType::fp32).saved_bytes);
  // The stages split the parameters between them.
  EXPECT_EQ(memory_of(ofob, 0).params + memory_of(ofob, 1).params, 4 * ofob.model->parameter_count());
}

TEST(MemoryModel, ASentOutputTheStageKeepsStaysHeldPastItsBackward) {
  // Cut after relu5, which keeps its output [8, 256] (8,192 B per micro-batch) for its own
  // backward and sends it to dropout1 on stage 1. The backward lets go of it, the send does not:
  // the last micro-batch's send is waited for only after the passes, so once stage 0's last
  // backward is done its relu5 output is all the activations left.
  Plan ofob = two_stage_fashion_vgg(plans::PipelineSchedule::one_f_one_b);
  for (int i = 0; i < ofob.model->size(); ++i) {
    ofob.stage_of_layer[static_cast<size_t>(i)] = i >= ofob.model->find("dropout1") ? 1 : 0;
  }
  const plans::StepProgram program = plans::compile_step(ofob, plans::compile_plan(ofob), 0);
  int64_t alive = 0;
  int64_t alive_at_last_wait = -1;
  for (const plans::StepInstruction& i : program.instructions) {
    if (i.op == plans::StepOp::wait) alive_at_last_wait = alive;
    if (i.op != plans::StepOp::alloc && i.op != plans::StepOp::free) continue;
    const plans::StepBuffer& b = program.buffers[static_cast<size_t>(i.buffer)];
    if (b.category == plans::MemoryCategory::activations) alive += i.op == plans::StepOp::alloc ? b.bytes : -b.bytes;
  }
  EXPECT_EQ(alive_at_last_wait, 8'192);
  EXPECT_EQ(alive, 0);
}

TEST(MemoryModel, RecomputationKeepsOnlyStageInputsPerMicroBatch) {
  Plan plan = two_stage_fashion_vgg(plans::PipelineSchedule::gpipe);
  const MemoryBreakdown plain = memory_of(plan, 0);
  plan.recompute_activations = true;
  const MemoryBreakdown recomputed = memory_of(plan, 0);
  // When the first layer is recomputed stage 0 holds the 8 micro-batches' data [8, 1, 28, 28]
  // (8 x 784 x 4 = 25,088 B each), in its last send the last flatten output (100,352 B), and the
  // output conv1 is about to write again ([8, 32, 28, 28]: 802,816 B).
  EXPECT_EQ(activations_before(plan, 0, plans::StepOp::recompute, 0), 8 * 25'088 + 100'352 + 802'816);
  EXPECT_LT(recomputed.activations, plain.activations);
  // Stage 1 holds the received flatten outputs (8 x 3,136 x 4 = 100,352 B per micro-batch) and the
  // output fc1 is about to write again ([8, 256]: 8,192 B).
  EXPECT_EQ(activations_before(plan, 1, plans::StepOp::recompute, 0), 8 * 100'352 + 8'192);
}

}  // namespace
}  // namespace splitbrain::sim
