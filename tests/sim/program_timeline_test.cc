// The step's timeline from the stages' step programs, with hand-set prices: the pipeline
// schedules' closed forms, the hand-overs on the critical path, and a program whose message
// never comes. Stages on shared nodes: program_timeline_sharing_test.cc.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <tuple>

#include "model/zoo.h"
#include "plans/compiled_plan.h"
#include "plans/plan_builder.h"
#include "plans/plan_validation.h"
#include "plans/step_compiler.h"
#include "sim/program_timeline.h"
#include "tests/sim/program_timeline_fixtures.h"

namespace splitbrain::sim {
namespace {

using plans::PipelineSchedule;
using plans::StepInstruction;
using plans::StepOp;
using testing::end_of;
using testing::pass_prices;
using testing::pipeline;
using testing::Priced;
using testing::programs_of;

TEST(ProgramTimeline, UniformStagesTakeMicroBatchesPlusStagesMinusOneSlots) {
  // S uniform stages, M micro-batches, F forward and B backward per micro-batch, free hand-over:
  // both GPipe and 1F1B take (M + S - 1)(F + B) (Huang et al. 2019; Narayanan et al. 2019).
  const double f = 1.0;
  const double b = 2.0;
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int stages : {1, 2, 4}) {
      for (int micro : {1, 3, 8}) {
        const Priced priced = programs_of(pipeline(stages, micro, schedule));
        const auto per_stage = static_cast<size_t>(stages);
        const ProgramTimeline timeline = run_program_timeline(
            priced.programs,
            pass_prices(priced, std::vector<double>(per_stage, f), std::vector<double>(per_stage, b), 0.0), 1.0);
        EXPECT_DOUBLE_EQ(end_of(timeline), (micro + stages - 1) * (f + b))
            << "stages " << stages << " micro-batches " << micro;
        EXPECT_EQ(timeline.passes.size(), static_cast<size_t>(2 * stages * micro));
        // A stage's time is its passes and its waits; the first stage ends last, having waited
        // the whole bubble, (S - 1)(F + B).
        for (const StageTimeline& stage : timeline.stages) {
          EXPECT_NEAR(stage.phases.waiting + micro * (f + b), stage.end_seconds, 1e-12);
        }
        EXPECT_NEAR(timeline.stages[0].phases.waiting, (stages - 1) * (f + b), 1e-12);
      }
    }
  }
}

TEST(ProgramTimeline, SlowestStageAndHandOverSetThePace) {
  // Two stages, the second twice as slow; each hand-over takes 0.5.
  const Priced priced = programs_of(pipeline(2, 1, PipelineSchedule::gpipe));
  const ProgramTimeline one =
      run_program_timeline(priced.programs, pass_prices(priced, {1.0, 2.0}, {1.0, 2.0}, 0.5), 1.0);
  // F0 on stage 0 [0, 1], hand-over to 1.5, F0 on stage 1 [1.5, 3.5], B0 [3.5, 5.5], hand-over
  // to 6 (stage 1 waits for its send), B0 on stage 0 [6, 7].
  EXPECT_DOUBLE_EQ(one.stages[1].backward_end_seconds, 5.5);
  EXPECT_DOUBLE_EQ(one.stages[1].end_seconds, 6.0);
  EXPECT_DOUBLE_EQ(one.stages[0].end_seconds, 7.0);
  EXPECT_DOUBLE_EQ(one.stages[0].phases.waiting, 5.0);
}

// fashion-vgg on {pipe: S, data: 1} in S x V model chunks of about equal layer counts; V = 1 is
// plain 1F1B over S stages, V > 1 the interleaved schedule.
plans::Plan chunked_pipeline(int stages, int virtual_stages, int micro_batches) {
  plans::Plan plan = pipeline(stages, micro_batches, PipelineSchedule::one_f_one_b);
  if (virtual_stages > 1) {
    plan.schedule = PipelineSchedule::interleaved_one_f_one_b;
    plan.virtual_stages = virtual_stages;
  }
  plan.stage_of_layer = plans::even_chunks(*plan.model, plan.chunk_count()).value();
  plans::validate_plan(plan, "test");
  return plan;
}

// Every chunk's forward costs `forward` / V (charged to its first layer that computes), its
// backward `backward` / V (charged to its last layer); nothing else costs anything.
InstructionPricer chunk_prices(const plans::Plan& plan, double forward, double backward) {
  std::map<int, int> first;  // per chunk
  std::map<int, int> last;
  for (int v = 0; v < plan.model->size(); ++v) {
    if (plan.model->layer(v).kind == model::OpKind::input) continue;
    const int chunk = plan.stage_of_layer[static_cast<size_t>(v)];
    first.try_emplace(chunk, v);
    last[chunk] = v;
  }
  const double chunks = plan.virtual_stages;
  return [&plan, first, last, forward, backward, chunks](int, const StepInstruction& i) {
    InstructionCost cost;
    if (i.op != StepOp::forward && i.op != StepOp::backward) return cost;
    const int chunk = plan.stage_of_layer[static_cast<size_t>(i.layer)];
    if (i.op == StepOp::forward && i.layer == first.at(chunk)) cost.compute_seconds = forward / chunks;
    if (i.op == StepOp::backward && i.layer == last.at(chunk)) cost.compute_seconds = backward / chunks;
    return cost;
  };
}

// Narayanan et al. SC21, Section 2.2.2: with V chunks per stage the bubble is (S - 1)(F + B) / V,
// (S - 1) / (V M) of the ideal M (F + B). The timeline knows no formula: it runs the stages'
// programs, so the smaller bubble must come out of the interleaved schedule's order. With free
// hand-overs and equal chunks every pass starts when a neighbour's pass of the same price ends,
// so the closed form holds exactly; the tolerance covers floating-point rounding only (F = 1 and
// B = 2 split into halves are exact binary fractions, so even that is not needed here).
TEST(ProgramTimeline, InterleavingShrinksTheBubbleByTheVirtualStages) {
  constexpr int kStages = 4;
  constexpr int kMicroBatches = 8;
  constexpr double kForward = 1.0;
  constexpr double kBackward = 2.0;
  const double ideal = kMicroBatches * (kForward + kBackward);
  std::map<int, double> step;  // per V
  for (int chunks : {1, 2}) {
    const plans::Plan plan = chunked_pipeline(kStages, chunks, kMicroBatches);
    const plans::CompiledPlan compiled = plans::compile_plan(plan);
    std::vector<plans::StepProgram> programs;
    for (int stage = 0; stage < kStages; ++stage) programs.push_back(plans::compile_step(plan, compiled, stage));
    const ProgramTimeline timeline = run_program_timeline(programs, chunk_prices(plan, kForward, kBackward), 1.0);
    step[chunks] = end_of(timeline);
    EXPECT_EQ(timeline.passes.size(), static_cast<size_t>(2 * kStages * chunks * kMicroBatches));
    const double bubble = (step[chunks] - ideal) / ideal;
    EXPECT_NEAR(bubble, (kStages - 1.0) / (chunks * kMicroBatches), 1e-9) << chunks << " chunk(s) per stage";
    // The first stage waits the whole bubble.
    EXPECT_NEAR(timeline.stages[0].phases.waiting, step[chunks] - ideal, 1e-9);
  }
  // 4 stages, 8 micro-batches: 11 (F + B) with one chunk per stage, 9.5 (F + B) with two.
  EXPECT_NEAR(step[1] - step[2], (kStages - 1) * (kForward + kBackward) * (1.0 - 1.0 / 2), 1e-9);
  EXPECT_NEAR(step[2], 9.5 * (kForward + kBackward), 1e-9);
}

// A chunk's passes are the timeline's: each (chunk, micro-batch) forward and backward once.
TEST(ProgramTimeline, InterleavedPassesNameTheirChunks) {
  const plans::Plan plan = chunked_pipeline(2, 2, 4);
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  std::vector<plans::StepProgram> programs;
  for (int stage = 0; stage < 2; ++stage) programs.push_back(plans::compile_step(plan, compiled, stage));
  const ProgramTimeline timeline = run_program_timeline(programs, chunk_prices(plan, 1.0, 2.0), 1.0);
  std::set<std::tuple<int, int, PassKind>> seen;
  for (const ScheduledPass& pass : timeline.passes) {
    EXPECT_EQ(pass.chunk % 2, pass.stage);
    EXPECT_TRUE(seen.insert({pass.chunk, pass.micro_batch, pass.kind}).second);
  }
  EXPECT_EQ(seen.size(), 2u * 4u * 4u);
}

// Where a stage's host is not running a pass it is waiting or moving data, and the timeline says
// which instruction: the passes' spans and the other instructions' (here the receives' and the
// sends' waits: the only other costs) tile each stage's host time without gap or overlap, and a
// stage waits for a receive only where the other stage's send has yet to arrive.
TEST(ProgramTimeline, PassesAndTheOtherInstructionsTileEachStagesTime) {
  const Priced priced = programs_of(pipeline(2, 3, PipelineSchedule::one_f_one_b));
  const ProgramTimeline timeline =
      run_program_timeline(priced.programs, pass_prices(priced, {1.0, 1.0}, {2.0, 2.0}, 0.5), 1.0);
  for (int stage = 0; stage < 2; ++stage) {
    std::vector<std::pair<double, double>> spans;
    for (const ScheduledPass& pass : timeline.passes) {
      if (pass.stage != stage) continue;
      for (const LayerSpan& span : pass.layers) {
        if (span.end_seconds > span.compute_start_seconds)
          spans.push_back({span.compute_start_seconds, span.end_seconds});
      }
    }
    int receive_waits = 0;
    for (const InstructionSpan& other : timeline.other_instructions) {
      if (other.stage != stage) continue;
      EXPECT_TRUE(other.op == StepOp::recv || other.op == StepOp::wait) << plans::step_op_name(other.op);
      EXPECT_LT(other.start_seconds, other.end_seconds);
      receive_waits += other.op == StepOp::recv ? 1 : 0;
      spans.push_back({other.start_seconds, other.end_seconds});
    }
    std::sort(spans.begin(), spans.end());
    double covered = 0.0;
    for (const auto& [start, end] : spans) {
      EXPECT_NEAR(start, covered, 1e-12) << "stage " << stage;
      covered = end;
    }
    EXPECT_NEAR(covered, timeline.stages[static_cast<size_t>(stage)].end_seconds, 1e-12) << "stage " << stage;
    // Stage 1 waits for its first forward's input, stage 0 for its first backward's gradient.
    EXPECT_GE(receive_waits, 1) << "stage " << stage;
  }
}

// An alloc's zero-fill takes the host's time in the instruction after it, where the executor's
// clock counts it: every alloc priced at 0.25 s lengthens the step by 0.25 s each, the passes'
// spans and the other instructions' still tile the step, and no span is an alloc's or a free's.
TEST(ProgramTimeline, AnAllocsFillCountsInTheInstructionAfterIt) {
  const Priced priced = programs_of(pipeline(1, 2, PipelineSchedule::gpipe));
  const InstructionPricer passes = pass_prices(priced, {1.0}, {2.0}, 0.0);
  const double fill = 0.25;
  const InstructionPricer with_fills = [&](int stage, const StepInstruction& i) {
    InstructionCost cost = passes(stage, i);
    if (i.op == StepOp::alloc) cost.compute_seconds = fill;
    return cost;
  };
  const auto allocs = std::ranges::count_if(priced.programs[0].instructions,
                                            [](const StepInstruction& i) { return i.op == StepOp::alloc; });
  ASSERT_GT(allocs, 0);
  const ProgramTimeline without = run_program_timeline(priced.programs, passes, 1.0);
  const ProgramTimeline with = run_program_timeline(priced.programs, with_fills, 1.0);
  EXPECT_NEAR(end_of(with), end_of(without) + fill * static_cast<double>(allocs), 1e-9);
  double spans = 0.0;
  for (const ScheduledPass& pass : with.passes) {
    for (const LayerSpan& span : pass.layers) spans += span.end_seconds - span.compute_start_seconds;
  }
  for (const InstructionSpan& other : with.other_instructions) {
    EXPECT_NE(other.op, StepOp::alloc);
    EXPECT_NE(other.op, StepOp::free);
    spans += other.end_seconds - other.start_seconds;
  }
  EXPECT_NEAR(spans, end_of(with), 1e-9);
}

TEST(ProgramTimeline, AnOverlappedReductionTakesItsWholeTimeAndTheHostTheShareNotHidden) {
  // fashion-vgg data-parallel over 2 ranks, its gradients in several buckets reduced during the
  // backward: each layer's backward 1 ms, each bucket's reduction 3 ms. Whatever the overlap, a
  // bucket holds the communication stream for all its 3 ms (the last one ends the step no sooner
  // than 3 ms after it starts); the host is charged at least (1 - overlap) x 3 ms per bucket.
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"data", 2}}), 16, [](const model::Layer&) {
    return plans::LayerSharding{{0}, {}, {}, {}};
  });
  plan.overlap_gradient_sync = true;
  plan.gradient_bucket_bytes = 100'000;
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const std::vector<plans::StepProgram> programs = {plans::compile_step(plan, compiled, 0)};
  constexpr double kBackwardSeconds = 1e-3;
  constexpr double kReduceSeconds = 3e-3;
  const InstructionPricer price = [](int, const StepInstruction& i) {
    InstructionCost cost;
    if (i.op == StepOp::backward) cost.compute_seconds = kBackwardSeconds;
    if (i.op == StepOp::reduce) cost.communication_seconds = kReduceSeconds;
    return cost;
  };
  const auto backwards = std::count_if(programs[0].instructions.begin(), programs[0].instructions.end(),
                                       [](const StepInstruction& i) { return i.op == StepOp::backward; });
  for (const double overlap : {-1.0, -0.5, 0.0, 0.5, 1.0}) {
    const ProgramTimeline timeline = run_program_timeline(programs, price, overlap);
    ASSERT_GE(timeline.gradient_sync.size(), 3u);
    double last_end = 0.0;
    for (const SyncInterval& bucket : timeline.gradient_sync) {
      EXPECT_NEAR(bucket.end_seconds - bucket.start_seconds, kReduceSeconds, 1e-12) << "overlap " << overlap;
      last_end = std::max(last_end, bucket.end_seconds);
    }
    EXPECT_GE(end_of(timeline), last_end - 1e-12) << "overlap " << overlap;
    // Besides its share of each bucket, the host waits at the end for the buckets still running.
    const double buckets = static_cast<double>(timeline.gradient_sync.size());
    EXPECT_GE(timeline.stages[0].phases.comm_exposed, std::min(1.0 - overlap, 1.0) * kReduceSeconds * buckets - 1e-9)
        << "overlap " << overlap;
    // Below 0 a reduction costs the host more than its own time: the excess is the backward's.
    EXPECT_NEAR(timeline.stages[0].phases.compute_backward,
                static_cast<double>(backwards) * kBackwardSeconds + std::max(-overlap, 0.0) * kReduceSeconds * buckets,
                1e-9)
        << "overlap " << overlap;
  }
}

// Every layer pass of one rank's program costs the device `device` seconds and the host `host`
// to queue; `waits`: the host waits for the device after each.
InstructionPricer queued_prices(double device, double host, bool waits) {
  return [device, host, waits](int, const StepInstruction& i) {
    InstructionCost cost;
    if (i.op == StepOp::forward || i.op == StepOp::backward) {
      cost.compute_seconds = device;
      cost.host_seconds = host;
      cost.host_waits = waits;
    }
    return cost;
  };
}

TEST(ProgramTimeline, AHostSlowerThanItsDeviceSetsThePaceAndOneAheadIsCaughtUpWhereItWaits) {
  const Priced priced = programs_of(pipeline(1, 1, PipelineSchedule::gpipe));
  const auto passes = static_cast<double>(std::ranges::count_if(priced.programs[0].instructions, [](const auto& i) {
    return i.op == StepOp::forward || i.op == StepOp::backward;
  }));
  ASSERT_GT(passes, 10.0);
  const auto end_with = [&](double device, double host, bool waits) {
    const ProgramTimeline timeline = run_program_timeline(priced.programs, queued_prices(device, host, waits), 1.0);
    const StagePhases& phases = timeline.stages[0].phases;
    // The device's waits for the host belong to the passes, as the executor's marks time them.
    EXPECT_NEAR(phases.compute_forward + phases.compute_backward, end_of(timeline), 1e-9);
    return end_of(timeline);
  };
  // Host-bound: pass n runs once queued, at n x host, and the last one's kernels after it.
  EXPECT_NEAR(end_with(1.0, 3.0, false), 3.0 * passes + 1.0, 1e-9);
  // Device-bound: the host's queuing hides behind the kernels but for the first.
  EXPECT_NEAR(end_with(3.0, 1.0, false), 1.0 + 3.0 * passes, 1e-9);
  // A host that waits for the device after each pass queues the next only then: both in turn.
  EXPECT_NEAR(end_with(3.0, 1.0, true), 4.0 * passes, 1e-9);
  // Where the host computes (no queuing), the device's seconds alone.
  EXPECT_NEAR(end_with(3.0, 0.0, false), 3.0 * passes, 1e-9);
}

TEST(ProgramTimeline, AStageWhoseMessageNeverComesIsADeadlock) {
  const Priced priced = programs_of(pipeline(2, 2, PipelineSchedule::one_f_one_b));
  const std::vector<plans::StepProgram> second_only = {priced.programs[1]};
  // Stage 1's program alone, as stage 0: nobody sends what it receives.
  EXPECT_THROW(run_program_timeline(
                   second_only, [](int, const StepInstruction&) { return InstructionCost{}; }, 1.0),
               std::logic_error);
}

}  // namespace
}  // namespace splitbrain::sim
