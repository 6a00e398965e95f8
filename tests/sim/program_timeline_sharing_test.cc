// The step's timeline where stages share nodes (NodeSharing): stages on nodes of their own run
// as unshared, stages on one core fill each other's bubbles, a stage's replicas take turns or
// contend, ranks beyond the cores compute at their share, and each pass records where its layers
// ran. Hand-set prices, as in program_timeline_test.cc.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "sim/program_timeline.h"
#include "tests/sim/program_timeline_fixtures.h"

namespace splitbrain::sim {
namespace {

using plans::PipelineSchedule;
using plans::StepInstruction;
using testing::end_of;
using testing::pass_prices;
using testing::pipeline;
using testing::Priced;
using testing::programs_of;

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

}  // namespace
}  // namespace splitbrain::sim
