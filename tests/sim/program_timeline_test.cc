// The step's timeline from the stages' step programs, with hand-set prices: the pipeline
// schedules' closed forms, the hand-overs on the critical path, and a program whose message
// never comes.

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

namespace splitbrain::sim {
namespace {

using plans::PipelineSchedule;
using plans::StepInstruction;
using plans::StepOp;

// fashion-vgg cut into `stages` stages of consecutive layers, batch over the data axis.
plans::Plan pipeline(int stages, int micro_batches, PipelineSchedule schedule) {
  plans::Plan plan = plans::build_plan("fashion-vgg", plans::Mesh({{"pipe", stages}, {"data", 1}}), 8 * micro_batches,
                                       [](const model::Layer&) {
                                         return plans::LayerSharding{{1}, {}, {}, {}};
                                       });
  plan.pipe_axis = 0;
  plan.micro_batches = micro_batches;
  plan.schedule = schedule;
  const int layers = plan.model->size();
  for (int i = 0; i < layers; ++i) plan.stage_of_layer[static_cast<size_t>(i)] = i * stages / layers;
  return plan;
}

struct Priced {
  std::vector<plans::StepProgram> programs;
  std::vector<int> first_layer;  // per stage: its first layer that computes
  std::vector<int> last_layer;
};

Priced programs_of(const plans::Plan& plan) {
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  Priced priced;
  for (int stage = 0; stage < plan.stage_count(); ++stage) {
    priced.programs.push_back(plans::compile_step(plan, compiled, stage));  // rank s is stage s ({pipe: S, data: 1})
    int first = -1;
    int last = -1;
    for (int v = 0; v < plan.model->size(); ++v) {
      if (plan.stage_of_layer[static_cast<size_t>(v)] != stage || plan.model->layer(v).kind == model::OpKind::input)
        continue;
      if (first < 0) first = v;
      last = v;
    }
    priced.first_layer.push_back(first);
    priced.last_layer.push_back(last);
  }
  return priced;
}

// A stage's forward pass costs `forward[s]` (charged to its first layer), its backward pass
// `backward[s]` (charged to its last layer, where the backward starts), a hand-over `send`;
// nothing else costs anything.
InstructionPricer pass_prices(const Priced& priced, std::vector<double> forward, std::vector<double> backward,
                              double send) {
  return [&priced, forward, backward, send](int stage, const StepInstruction& i) {
    InstructionCost cost;
    const auto s = static_cast<size_t>(stage);
    if (i.op == StepOp::forward && i.layer == priced.first_layer[s]) cost.compute_seconds = forward[s];
    if (i.op == StepOp::backward && i.layer == priced.last_layer[s]) cost.compute_seconds = backward[s];
    if (i.op == StepOp::send) cost.communication_seconds = send;
    return cost;
  };
}

double end_of(const ProgramTimeline& timeline) {
  double end = 0.0;
  for (const StageTimeline& stage : timeline.stages) end = std::max(end, stage.end_seconds);
  return end;
}

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

// Stages and their replicas on shared nodes of 2 ranks: `node_of_stage`, one replica each unless told.
NodeSharing sharing_of(std::vector<int> node_of_stage, int cores, double turn_seconds, int replicas = 1) {
  return {std::move(node_of_stage), replicas, 2, cores, turn_seconds};
}

// `prices` as a rank alone on its node computes, and `busy_over_alone` times them with all the
// node's ranks busy. By default 2: a core's 2 ranks taking turns, each getting half of it
// (calibrate's CPU share).
InstructionPricer with_busy_prices(const InstructionPricer& prices, double busy_over_alone = 2.0) {
  return [prices, busy_over_alone](int stage, const StepInstruction& i) {
    InstructionCost cost = prices(stage, i);
    cost.alone_compute_seconds = cost.compute_seconds;
    cost.compute_seconds *= busy_over_alone;
    return cost;
  };
}

TEST(ProgramTimeline, StagesOnNodesOfTheirOwnRunAsUnshared) {
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int micro : {1, 3, 8}) {
      const Priced priced = programs_of(pipeline(4, micro, schedule));
      const InstructionPricer prices = pass_prices(priced, {1.0, 2.0, 1.5, 0.5}, {2.0, 1.0, 3.0, 1.0}, 0.25);
      const ProgramTimeline alone = run_program_timeline(priced.programs, prices, 1.0);
      const NodeSharing own_nodes{{0, 1, 2, 3}, 1, 1, 1, 0.1};
      const ProgramTimeline shared = run_program_timeline(priced.programs, prices, 1.0, &own_nodes);
      for (size_t s = 0; s < alone.stages.size(); ++s) {
        EXPECT_NEAR(shared.stages[s].end_seconds, alone.stages[s].end_seconds, 1e-9) << "stage " << s;
        EXPECT_NEAR(shared.stages[s].phases.waiting, alone.stages[s].phases.waiting, 1e-9) << "stage " << s;
      }
    }
  }
}

// Two stages on one core with free hand-overs: one of them can always compute, so the core is
// never idle and the step is all of both stages' work, whatever the turn and the schedule: the
// second stage fills the first's bubble, where on cores of their own it would wait.
TEST(ProgramTimeline, StagesSharingOneCoreFillEachOthersBubbles) {
  const double f = 1.0;
  const double b = 2.0;
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int micro : {1, 3, 8}) {
      for (double turn : {0.1, 1.0, 100.0}) {
        const Priced priced = programs_of(pipeline(2, micro, schedule));
        const InstructionPricer prices = pass_prices(priced, {f, f}, {b, b}, 0.0);
        const NodeSharing one_core = sharing_of({0, 0}, 1, turn);
        const ProgramTimeline shared = run_program_timeline(priced.programs, with_busy_prices(prices), 1.0, &one_core);
        EXPECT_NEAR(end_of(shared), 2 * micro * (f + b), 1e-9) << "micro-batches " << micro << " turn " << turn;
        // Two cores: each stage its own, the pipeline's (M + 1)(F + B).
        const NodeSharing two_cores = sharing_of({0, 0}, 2, turn);
        EXPECT_NEAR(end_of(run_program_timeline(priced.programs, prices, 1.0, &two_cores)), (micro + 1) * (f + b),
                    1e-9);
      }
    }
  }
}

// Replicas of a stage (its ranks on the node) run its program side by side: on one core they
// take turns, on as many cores as replicas they run at once, slowed by the cores' contention.
TEST(ProgramTimeline, ReplicasTakeTurnsOrContendForTheirNode) {
  const Priced priced = programs_of(pipeline(1, 4, PipelineSchedule::one_f_one_b));
  const InstructionPricer prices = pass_prices(priced, {1.0}, {2.0}, 0.0);
  const double work = 4 * 3.0;
  for (double turn : {0.5, 100.0}) {
    const NodeSharing one_core = sharing_of({0}, 1, turn, 2);
    EXPECT_NEAR(end_of(run_program_timeline(priced.programs, with_busy_prices(prices), 1.0, &one_core)), 2 * work,
                1e-9);
  }
  // Priced alone at the passes' prices and 1.25 times that with both ranks of the node busy.
  const InstructionPricer contended_prices = with_busy_prices(prices, 1.25);
  const NodeSharing two_cores = sharing_of({0}, 2, 1.0, 2);
  const ProgramTimeline contended = run_program_timeline(priced.programs, contended_prices, 1.0, &two_cores);
  EXPECT_NEAR(end_of(contended), 1.25 * work, 1e-9);
  EXPECT_NEAR(contended.stages[0].phases.compute_forward, 1.25 * 4, 1e-9);
  // Unshared, the same prices are the busy ones.
  EXPECT_NEAR(end_of(run_program_timeline(priced.programs, contended_prices, 1.0)), 1.25 * work, 1e-9);
  // One replica on two cores computes alone.
  const NodeSharing one_replica = sharing_of({0}, 2, 1.0, 1);
  EXPECT_NEAR(end_of(run_program_timeline(priced.programs, contended_prices, 1.0, &one_replica)), work, 1e-9);
  EXPECT_EQ(contended.passes.size(), 2u * 4u);  // the replica that ends last's
}

// Where a node's ranks outnumber its cores, a rank computes at its share of the busy seconds
// (busy x cores / N, calibrate's CPU share) even while its core-mates wait: they wait polling on
// the core, not asleep. One micro-batch over 2 stages on one core never computes on both at once.
TEST(ProgramTimeline, RanksBeyondTheCoresComputeAtTheirShareEvenWhileTheOthersWait) {
  const Priced priced = programs_of(pipeline(2, 1, PipelineSchedule::one_f_one_b));
  const InstructionPricer prices = pass_prices(priced, {1.0, 1.0}, {2.0, 2.0}, 0.0);
  const double work = 2 * (1.0 + 2.0);
  const NodeSharing one_core = sharing_of({0, 0}, 1, 0.1);
  for (const double busy_over_alone : {2.5, 1.6}) {
    const InstructionPricer shared_prices = with_busy_prices(prices, busy_over_alone);
    // The share, even below the seconds alone (those are timed beside a napping core-mate).
    EXPECT_NEAR(end_of(run_program_timeline(priced.programs, shared_prices, 1.0, &one_core)),
                busy_over_alone / 2 * work, 1e-9)
        << busy_over_alone;
  }
}

// Each pass records its layers' ops where they ran: in order inside the pass, none of a stage's
// overlapping another, at their prices where each stage has a core of its own and longer where
// two stages take turns on one (a trace drawn at the prices overlapped there).
TEST(ProgramTimeline, PassesRecordWhereTheirLayersRan) {
  const Priced priced = programs_of(pipeline(2, 3, PipelineSchedule::one_f_one_b));
  const InstructionPricer prices = pass_prices(priced, {1.0, 1.0}, {2.0, 2.0}, 0.0);
  const NodeSharing one_core = sharing_of({0, 0}, 1, 0.1);
  for (const NodeSharing* sharing : {static_cast<const NodeSharing*>(nullptr), &one_core}) {
    const ProgramTimeline timeline =
        run_program_timeline(priced.programs, sharing != nullptr ? with_busy_prices(prices) : prices, 1.0, sharing);
    std::map<int, std::vector<std::pair<double, double>>> computes_of_stage;
    double longest = 0.0;
    for (const ScheduledPass& pass : timeline.passes) {
      ASSERT_FALSE(pass.layers.empty());
      double previous_end = pass.start_seconds;
      for (const LayerSpan& span : pass.layers) {
        EXPECT_GE(span.compute_start_seconds, previous_end - 1e-12);
        EXPECT_LE(span.compute_start_seconds, span.compute_end_seconds);
        EXPECT_LE(span.compute_end_seconds, span.end_seconds);
        previous_end = span.end_seconds;
        const double seconds = span.compute_end_seconds - span.compute_start_seconds;
        if (seconds > 0.0)
          computes_of_stage[pass.stage].push_back({span.compute_start_seconds, span.compute_end_seconds});
        longest = std::max(longest, seconds / (pass.kind == PassKind::forward ? 1.0 : 2.0));
        if (sharing == nullptr && seconds > 0.0) {
          EXPECT_NEAR(seconds, pass.kind == PassKind::forward ? 1.0 : 2.0, 1e-12);
        }
      }
      EXPECT_NEAR(previous_end, pass.end_seconds, 1e-12);
    }
    for (auto& [stage, computes] : computes_of_stage) {
      EXPECT_EQ(computes.size(), 2u * 3u) << "stage " << stage;
      std::sort(computes.begin(), computes.end());
      for (size_t i = 1; i < computes.size(); ++i) {
        EXPECT_GE(computes[i].first, computes[i - 1].second - 1e-12) << "stage " << stage;
      }
    }
    if (sharing != nullptr) {
      EXPECT_GT(longest, 1.0 + 1e-9);  // some layer waited for its turn
    }
  }
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
