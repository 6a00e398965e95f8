// The step compiler on the example plans: every rank's program is well formed (see
// step_program_properties.h), its memory walk ends where it started, and the listing's facts
// hold on a hand-checked case.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/hand_over_groups.h"
#include "plans/memory_walk.h"
#include "plans/plan_error.h"
#include "plans/pipeline_order.h"
#include "plans/plan_builder.h"
#include "plans/plan_json.h"
#include "plans/plan_validation.h"
#include "plans/step_compiler.h"
#include "tests/plans/step_program_properties.h"

namespace splitbrain::plans {
namespace {

namespace fs = std::filesystem;
const fs::path kExamples = fs::path(__FILE__).parent_path().parent_path().parent_path() / "plans" / "examples";

int count_ops(const StepProgram& program, StepOp op) {
  int count = 0;
  for (const StepInstruction& i : program.instructions) count += i.op == op ? 1 : 0;
  return count;
}

TEST(StepProgram, EveryExamplePlansEveryRankIsWellFormed) {
  int programs = 0;
  for (const auto& entry : fs::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".json") continue;
    const Plan plan = load_plan_file(entry.path().string());
    const CompiledPlan compiled = compile_plan(plan);
    for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
      const StepProgram program = compile_step(plan, compiled, rank);
      for (const std::string& problem : testing::step_program_problems(plan, compiled, program)) {
        ADD_FAILURE() << entry.path().filename() << " rank " << rank << ": " << problem;
      }
      EXPECT_GT(walk_memory(program).total, 0);
      ++programs;
    }
  }
  EXPECT_GE(programs, 6);
}

// fashion-vgg, SplitBrain on a group of 2: one micro-batch, so each layer's forward and backward
// once; the fc layers read an all-gathered copy of their input (a redistribution each way); the
// gradients go in buckets that start during the backward (overlap) and are waited for after it.
TEST(StepProgram, SplitBrainStepHasTheExpectedShape) {
  const Plan plan = load_plan_file((kExamples / "fashion-vgg-splitbrain-2.json").string());
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram program = compile_step(plan, compiled, 1);
  const int layers = plan.model->size();
  EXPECT_EQ(count_ops(program, StepOp::forward), layers - 1);
  EXPECT_EQ(count_ops(program, StepOp::backward), layers - 1);
  EXPECT_EQ(count_ops(program, StepOp::load_input), 1);
  EXPECT_EQ(count_ops(program, StepOp::loss_out), 1);
  EXPECT_GT(count_ops(program, StepOp::redistribute), 0);
  EXPECT_EQ(count_ops(program, StepOp::send), 0);
  int rank_buckets = 0;
  for (const GradientBucket& b : compiled.buckets) rank_buckets += b.stage == 0 ? 1 : 0;
  EXPECT_EQ(count_ops(program, StepOp::reduce), rank_buckets);
  EXPECT_EQ(count_ops(program, StepOp::optimizer), 1);
  // Every communication instruction a compute instruction reads from is listed in its `after`.
  for (const StepInstruction& i : program.instructions) {
    if (i.op != StepOp::forward) continue;
    for (int a : i.after) EXPECT_EQ(program.instructions[static_cast<size_t>(a)].stream, Stream::communication);
  }
}

// Small buckets on a data-parallel plan: the first starts (its reduce is issued) before the
// backward is over, and each is waited for after it.
TEST(StepProgram, BucketsStartDuringTheBackward) {
  Plan plan = load_plan_file((kExamples / "fashion-vgg-data-parallel-2.json").string());
  plan.gradient_bucket_bytes = 200'000;
  const CompiledPlan compiled = compile_plan(plan);
  ASSERT_GT(compiled.buckets.size(), 2u);
  const StepProgram program = compile_step(plan, compiled, 0);
  size_t first_reduce = program.instructions.size();
  size_t last_backward = 0;
  size_t first_wait = program.instructions.size();
  for (size_t n = 0; n < program.instructions.size(); ++n) {
    const StepOp op = program.instructions[n].op;
    if (op == StepOp::reduce) first_reduce = std::min(first_reduce, n);
    if (op == StepOp::backward) last_backward = n;
    if (op == StepOp::wait) first_wait = std::min(first_wait, n);
  }
  EXPECT_LT(first_reduce, last_backward);
  EXPECT_GT(first_wait, last_backward);
  EXPECT_EQ(count_ops(program, StepOp::reduce), static_cast<int>(compiled.buckets.size()));
  plan.overlap_gradient_sync = false;
  const StepProgram serial = compile_step(plan, compile_plan(plan), 0);
  for (size_t n = 0; n < serial.instructions.size(); ++n) {
    if (serial.instructions[n].op != StepOp::reduce) continue;
    for (size_t m = n; m < serial.instructions.size(); ++m) EXPECT_NE(serial.instructions[m].op, StepOp::backward);
  }
}

// GPipe holds every micro-batch's activations at once; 1F1B on the first of 4 stages at most 4:
// with 8 micro-batches the walk's activation peak must be lower under 1F1B.
TEST(StepProgram, OneFOneBHoldsFewerMicroBatchesThanGPipe) {
  Plan plan = load_plan_file((kExamples / "vgg16-cifar10-pipeline-4.json").string());
  plan.micro_batches = 8;
  plan.schedule = PipelineSchedule::gpipe;
  const int64_t gpipe = walk_memory(compile_step(plan, compile_plan(plan), 0)).of(MemoryCategory::activations);
  plan.schedule = PipelineSchedule::one_f_one_b;
  const int64_t one_f_one_b = walk_memory(compile_step(plan, compile_plan(plan), 0)).of(MemoryCategory::activations);
  EXPECT_LT(one_f_one_b, gpipe);
}

// What the executor takes from the program: the passes in the schedule's order, and which
// buckets start during the backward (none when the plan reduces them after it).
TEST(StepProgram, PassesAndBucketStartsAsTheExecutorReadsThem) {
  Plan plan = load_plan_file((kExamples / "vgg16-cifar10-pipeline-4.json").string());
  plan.micro_batches = 8;
  for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
    const StepProgram program = compile_step(plan, compile_plan(plan), rank);
    EXPECT_EQ(pass_sequence(program), pass_order(program.stage, plan.stage_count(), plan.micro_batches, plan.schedule))
        << "rank " << rank;
  }
  plan = load_plan_file((kExamples / "fashion-vgg-data-parallel-2.json").string());
  plan.gradient_bucket_bytes = 200'000;
  const CompiledPlan compiled = compile_plan(plan);
  const auto overlapped = buckets_started_after(compile_step(plan, compiled, 0), plan.model->size());
  size_t started = 0;
  for (size_t v = 0; v < overlapped.size(); ++v) {
    for (int b : overlapped[v]) {
      ++started;
      EXPECT_EQ(compiled.buckets[static_cast<size_t>(b)].layers.back(), static_cast<int>(v));
    }
  }
  EXPECT_EQ(started, compiled.buckets.size());
  plan.overlap_gradient_sync = false;
  for (const auto& after_layer : buckets_started_after(compile_step(plan, compile_plan(plan), 0), plan.model->size())) {
    EXPECT_TRUE(after_layer.empty());
  }
}

// GPT in two stages cut at h1.ln_1: h0's output is read there by h1.ln_1 and by h1's residual
// add. It crosses once per micro-batch each way; both readers share what arrived, and their two
// gradients are added before the one message back.
TEST(StepProgram, ATensorWithTwoReadersOnTheNextStageCrossesOnce) {
  const Plan plan = plan_from_text(R"({
    "format": "splitbrain-plan", "version": 1, "model": "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16",
    "batch": 8, "mesh": {"pipe": 2}, "default": {},
    "pipeline": {"axis": "pipe", "stage_starts": ["h1.ln_1"], "micro_batches": 4, "schedule": "1f1b"}
  })",
                                   "two-readers", ".");
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram first = compile_step(plan, compiled, 0);
  const StepProgram second = compile_step(plan, compiled, 1);
  // Forward: h0's output, one message per micro-batch; and each way once, the tied table's
  // gradient (lm_head on the second stage holds a copy of wte's table).
  EXPECT_EQ(count_ops(first, StepOp::send), plan.micro_batches + 1);
  EXPECT_EQ(count_ops(second, StepOp::recv), plan.micro_batches + 1);
  // Backward: one summed gradient of h0's output per micro-batch.
  EXPECT_EQ(count_ops(second, StepOp::send), plan.micro_batches + 1);
  EXPECT_EQ(count_ops(first, StepOp::recv), plan.micro_batches + 1);
  for (const StepProgram* program : {&first, &second}) {
    for (const std::string& problem : testing::step_program_problems(plan, compiled, *program))
      ADD_FAILURE() << problem;
  }
  int carriers = 0;
  for (const CompiledLayer& layer : compiled.layers) {
    for (const InputTransfer& input : layer.inputs) carriers += input.from_other_stage && input.forward_send ? 1 : 0;
  }
  EXPECT_EQ(carriers, 1);
}

// Under 1F1B the first stage holds at most as many micro-batches as there are stages, and each
// send is waited for before the next on its edge: its peak does not grow with the number of
// micro-batches (the same micro-batch size, 8 or 64 of them).
TEST(StepProgram, OneFOneBMemoryDoesNotGrowWithMicroBatches) {
  auto peak_of_rank_0 = [](int micro_batches) {
    const Plan plan = plan_from_text(fmt::format(R"({{
      "format": "splitbrain-plan", "version": 1, "model": "gpt:layers=4,hidden=64,heads=4,seq=16,vocab=96,positions=16",
      "batch": {}, "mesh": {{"pipe": 4}}, "default": {{}},
      "pipeline": {{"axis": "pipe", "stage_starts": ["h1.ln_1", "h2.ln_1", "h3.ln_1"], "micro_batches": {},
                   "schedule": "1f1b"}}
    }})",
                                                 2 * micro_batches, micro_batches),
                                     "micro-batches", ".");
    return walk_memory(compile_step(plan, compile_plan(plan), 0)).total;
  };
  EXPECT_EQ(peak_of_rank_0(8), peak_of_rank_0(64));
}

// Selective recompute: each attention core runs forward again before its backward, once per
// micro-batch, and its probabilities are not kept between the passes, so the activation peak
// drops by at least one micro-batch's probabilities of every attention layer but the last.
TEST(StepProgram, SelectiveRecomputeRedoesOnlyTheAttentionCores) {
  Plan plan = plan_from_text(R"({
    "format": "splitbrain-plan", "version": 1, "model": "gpt:layers=3,hidden=64,heads=4,seq=32,vocab=96,positions=32",
    "batch": 8, "mesh": {"data": 1}, "default": {}, "micro_batches": 2
  })",
                             "selective", ".");
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram kept = compile_step(plan, compiled, 0);
  plan.recompute_attention = true;
  const StepProgram selective = compile_step(plan, compiled, 0);
  for (const std::string& problem : testing::step_program_problems(plan, compiled, selective)) ADD_FAILURE() << problem;
  int attention_layers = 0;
  for (const model::Layer& layer : plan.model->layers())
    attention_layers += layer.kind == model::OpKind::self_attention;
  EXPECT_EQ(attention_layers, 3);
  EXPECT_EQ(count_ops(selective, StepOp::recompute), attention_layers * plan.micro_batches);
  for (const StepInstruction& i : selective.instructions) {
    if (i.op == StepOp::recompute) {
      EXPECT_EQ(plan.model->layer(i.layer).kind, model::OpKind::self_attention);
    }
  }
  EXPECT_EQ(count_ops(kept, StepOp::recompute), 0);
  // Probabilities of one micro-batch: 4 heads x 32 x 32 fp32 per sample, 4 samples.
  const int64_t probabilities = 4 * 32 * 32 * 4 * 4;
  const int64_t saved =
      walk_memory(kept).of(MemoryCategory::activations) - walk_memory(selective).of(MemoryCategory::activations);
  EXPECT_GE(saved, (attention_layers - 1) * probabilities);
}

TEST(StepProgram, ARankOutsideTheMeshIsRefused) {
  const Plan plan = load_plan_file((kExamples / "fashion-vgg-splitbrain-2.json").string());
  EXPECT_THROW(compile_step(plan, compile_plan(plan), 2), PlanError);
}

}  // namespace
}  // namespace splitbrain::plans

namespace splitbrain::plans {
namespace {

// fashion-vgg on {pipe: S} in S x V chunks of about equal layer counts, interleaved 1F1B.
Plan interleaved_fashion_vgg(int stages, int virtual_stages, int micro_batches) {
  Plan plan = build_plan("fashion-vgg", Mesh({{"pipe", stages}}), 2 * micro_batches,
                         [](const model::Layer&) { return LayerSharding{}; });
  plan.pipe_axis = 0;
  plan.micro_batches = micro_batches;
  plan.schedule = PipelineSchedule::interleaved_one_f_one_b;
  plan.virtual_stages = virtual_stages;
  plan.stage_of_layer = even_chunks(*plan.model, plan.chunk_count()).value();
  validate_plan(plan, "test");
  return plan;
}

// Runs the stages' programs together, every send rendezvous: a wait for a send returns only once
// the receiver has reached the matching receive (MPI's protocol for large messages; small ones
// complete at once, which can only help). Sends, receives and waits as the executor runs them
// (exec/runtime/stage_link.h: a non-blocking send, a blocking receive). False when the stages
// wait on each other for ever.
bool deliverable_with_rendezvous_sends(const std::vector<StepProgram>& programs) {
  using Message = std::tuple<int, int, int, bool>;  // consumer, input position, micro-batch, gradient
  const auto message_of = [](const StepProgram& program, const StepInstruction& i) {
    return Message{i.layer, i.index, i.micro_batch, moves_gradient(program, i)};
  };
  std::set<Message> sent;
  std::set<Message> received;
  std::vector<size_t> next(programs.size(), 0);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (size_t s = 0; s < programs.size(); ++s) {
      const StepProgram& program = programs[s];
      for (; next[s] < program.instructions.size(); ++next[s], progressed = true) {
        const StepInstruction& i = program.instructions[next[s]];
        if (i.op == StepOp::recv) {
          if (!sent.contains(message_of(program, i))) break;
          received.insert(message_of(program, i));
        } else if (i.op == StepOp::send) {
          sent.insert(message_of(program, i));
        } else if (i.op == StepOp::wait) {
          const StepInstruction& target = program.instructions.at(static_cast<size_t>(i.waits_for));
          if (target.op == StepOp::send && !received.contains(message_of(program, target))) break;
        }
      }
    }
  }
  for (size_t s = 0; s < programs.size(); ++s) {
    if (next[s] < programs[s].instructions.size()) return false;
  }
  return true;
}

// Interleaved programs on 2-4 stages of 2-3 chunks, as many micro-batches as stages or more,
// with and without recompute: well formed, their passes in the schedule's order, chunk by chunk
// (each chunk's layers only), and every message delivered even when each send waits for its
// receiver, and in the groups of a rendezvous transport (NCCL: plans/hand_over_groups.h). A
// stage's programs for the training step and for evaluation.
TEST(StepProgram, InterleavedProgramsRunTheScheduleAndCannotDeadlock) {
  for (int stages : {2, 3, 4}) {
    for (int chunks : {2, 3}) {
      for (int groups : {1, 2}) {
        for (bool recompute : {false, true}) {
          Plan plan = interleaved_fashion_vgg(stages, chunks, groups * stages);
          plan.recompute_activations = recompute;
          const std::string name = fmt::format("{} stages x {} chunks, {} micro-batches{}", stages, chunks,
                                               plan.micro_batches, recompute ? ", recompute" : "");
          const CompiledPlan compiled = compile_plan(plan);
          std::vector<StepProgram> programs;
          std::vector<StepProgram> evaluations;
          for (int rank = 0; rank < stages; ++rank) {
            programs.push_back(compile_step(plan, compiled, rank));
            evaluations.push_back(compile_evaluation(plan, compiled, rank));
            const StepProgram& program = programs.back();
            for (const std::string& problem : testing::step_program_problems(plan, compiled, program)) {
              ADD_FAILURE() << name << " rank " << rank << ": " << problem;
            }
            EXPECT_EQ(pass_sequence(program), pass_order(plan, rank)) << name << " rank " << rank;
            for (const StepInstruction& i : program.instructions) {
              const bool pass = i.op == StepOp::forward || i.op == StepOp::backward || i.op == StepOp::recompute;
              if (pass) {
                EXPECT_EQ(compiled.layers[static_cast<size_t>(i.layer)].stage, rank) << name;
              }
            }
          }
          EXPECT_TRUE(deliverable_with_rendezvous_sends(programs)) << name;
          EXPECT_TRUE(deliverable_with_rendezvous_sends(evaluations)) << name << " (evaluation)";
          for (const auto& [walked, what] : {std::pair{&programs, "step"}, std::pair{&evaluations, "evaluation"}}) {
            const auto stall = stall_of_grouped_hand_overs(*walked);
            EXPECT_FALSE(stall.has_value()) << name << " (" << what << "): " << (stall ? stall->message : "");
          }
        }
      }
    }
  }
}

// The check above can fail: two stages' programs of a 1F1B pipeline where the second stage runs
// its passes in the order of the first never get their messages through.
TEST(StepProgram, RendezvousCheckFindsAStageThatWaitsForEver) {
  const Plan plan = interleaved_fashion_vgg(2, 2, 4);
  const CompiledPlan compiled = compile_plan(plan);
  EXPECT_FALSE(deliverable_with_rendezvous_sends({compile_step(plan, compiled, 1)}));
}

// GPT in 2 stages x 2 chunks cut between blocks: the embeddings (chunk 0) and h1 (chunk 2) on
// stage 0, h0 (chunk 1) and the head (chunk 3) on stage 1. Each block's output has two readers in
// the next chunk and crosses once per micro-batch each way; the last stage hands h0's output back
// round to stage 0.
TEST(StepProgram, InterleavedGptHandsEachChunkBoundaryOverOnce) {
  const Plan plan = plan_from_text(R"({
    "format": "splitbrain-plan", "version": 1, "model": "gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16",
    "batch": 8, "mesh": {"pipe": 2}, "default": {},
    "pipeline": {"axis": "pipe", "stage_starts": ["h0.ln_1", "h1.ln_1", "ln_f"], "micro_batches": 4,
                 "schedule": "interleaved_1f1b", "virtual_stages": 2}
  })",
                                   "interleaved-gpt", ".");
  const CompiledPlan compiled = compile_plan(plan);
  const StepProgram first = compile_step(plan, compiled, 0);
  const StepProgram second = compile_step(plan, compiled, 1);
  // Stage 0 sends forward from chunks 0 and 2, back from chunk 2; stage 1 forward from chunk 1,
  // back from chunks 1 and 3. And each way once, the tied table's gradient (wte on stage 0,
  // lm_head's copy on stage 1).
  EXPECT_EQ(count_ops(first, StepOp::send), 3 * plan.micro_batches + 1);
  EXPECT_EQ(count_ops(second, StepOp::recv), 3 * plan.micro_batches + 1);
  EXPECT_EQ(count_ops(second, StepOp::send), 3 * plan.micro_batches + 1);
  EXPECT_EQ(count_ops(first, StepOp::recv), 3 * plan.micro_batches + 1);
  for (const StepProgram* program : {&first, &second}) {
    for (const std::string& problem : testing::step_program_problems(plan, compiled, *program))
      ADD_FAILURE() << problem;
  }
  const int h1 = plan.model->find("h1.ln_1");
  const InputTransfer& into_h1 = compiled.layers[static_cast<size_t>(h1)].inputs.at(0);
  ASSERT_TRUE(into_h1.forward_send.has_value());
  EXPECT_EQ(into_h1.forward_send->source_index, 1);  // from the last stage round to the first
  EXPECT_EQ(into_h1.forward_send->destination_index, 0);
  EXPECT_TRUE(deliverable_with_rendezvous_sends({first, second}));
  const auto stall = stall_of_grouped_hand_overs(std::vector<StepProgram>{first, second});
  EXPECT_FALSE(stall.has_value()) << (stall ? stall->message : "");
  EXPECT_TRUE(hand_overs_complete_in_groups(plan, compiled)) << "training and evaluation";
}

// Like 1F1B, the interleaved schedule bounds what a stage holds by its warm-up, not by the number
// of micro-batches: with the same micro-batch size, 8 or 32 of them peak alike on every stage.
TEST(StepProgram, InterleavedMemoryDoesNotGrowWithMicroBatches) {
  for (int rank = 0; rank < 2; ++rank) {
    const Plan eight = interleaved_fashion_vgg(2, 2, 8);
    const Plan many = interleaved_fashion_vgg(2, 2, 32);
    EXPECT_EQ(walk_memory(compile_step(eight, compile_plan(eight), rank)).total,
              walk_memory(compile_step(many, compile_plan(many), rank)).total)
        << "rank " << rank;
  }
}

// Every label a trace gets (each op, with and without a layer, a bucket and a micro-batch) comes
// apart again into the label without its micro-batch, and that micro-batch.
TEST(StepProgram, EveryInstructionLabelSplitsBackIntoItsInstructionAndMicroBatch) {
  const model::Model net = model::build_zoo_model("fashion-vgg");
  for (int op = 0; op <= static_cast<int>(StepOp::loss_out); ++op) {
    for (const int layer : {-1, 0, net.size() - 1}) {
      for (const int bucket : {-1, 0, 12}) {
        const std::string instruction = instruction_label(net, static_cast<StepOp>(op), layer, bucket, -1);
        for (const int micro : {-1, 0, 7, 130}) {
          const LabelParts parts =
              split_instruction_label(instruction_label(net, static_cast<StepOp>(op), layer, bucket, micro));
          EXPECT_EQ(parts.instruction, instruction);
          EXPECT_EQ(parts.micro_batch, micro);
        }
      }
    }
  }
  // What is not a micro-batch stays in the instruction.
  EXPECT_EQ(split_instruction_label("forward mbconv").instruction, "forward mbconv");
  EXPECT_EQ(split_instruction_label("forward conv1 mb").micro_batch, -1);
  EXPECT_EQ(split_instruction_label("forward conv1 mb2x").micro_batch, -1);
}

}  // namespace
}  // namespace splitbrain::plans
