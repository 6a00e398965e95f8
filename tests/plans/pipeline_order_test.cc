// The pipeline schedules' pass orders (plans/pipeline_order.h): interleaved 1F1B against the
// order Megatron-LM's forward_backward_pipelining_with_interleaving runs, written out by hand for
// 2 stages x 2 chunks x 4 micro-batches; and on many shapes, each (chunk, micro-batch) runs
// forward once and backward once, in micro-batch order per chunk, and the stages' orders
// together finish with the bubble the paper gives: (S - 1) / (V M) of the ideal time.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "plans/pipeline_order.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

constexpr PassKind F = PassKind::forward;
constexpr PassKind B = PassKind::backward;

TEST(PipelineOrder, InterleavedIsMegatronsOrderOnTwoStagesTwoChunksFourMicroBatches) {
  // Stage 0 holds chunks 0 and 2; warm-up 2 (2 - 0 - 1) + (2 - 1) 2 = 4 forwards.
  const std::vector<PipelinePass> stage0 = {{F, 0, 0}, {F, 1, 0}, {F, 0, 2}, {F, 1, 2},  // warm-up
                                            {F, 2, 0}, {B, 0, 2}, {F, 3, 0}, {B, 1, 2},
                                            {F, 2, 2}, {B, 0, 0}, {F, 3, 2}, {B, 1, 0},   // 1F1B
                                            {B, 2, 2}, {B, 3, 2}, {B, 2, 0}, {B, 3, 0}};  // cool-down
  // Stage 1 holds chunks 1 and 3; warm-up (2 - 1) 2 = 2 forwards.
  const std::vector<PipelinePass> stage1 = {{F, 0, 1}, {F, 1, 1}, {F, 0, 3}, {B, 0, 3}, {F, 1, 3}, {B, 1, 3},
                                            {F, 2, 1}, {B, 0, 1}, {F, 3, 1}, {B, 1, 1}, {F, 2, 3}, {B, 2, 3},
                                            {F, 3, 3}, {B, 3, 3}, {B, 2, 1}, {B, 3, 1}};
  EXPECT_EQ(pass_order(0, 2, 4, PipelineSchedule::interleaved_one_f_one_b, 2), stage0);
  EXPECT_EQ(pass_order(1, 2, 4, PipelineSchedule::interleaved_one_f_one_b, 2), stage1);
}

TEST(PipelineOrder, AsManyMicroBatchesAsStagesRunsEveryForwardFirst) {
  // Megatron-LM's special case: with M = S every stage warms up with all its forwards.
  const std::vector<PipelinePass> order = pass_order(3, 4, 4, PipelineSchedule::interleaved_one_f_one_b, 2);
  ASSERT_EQ(order.size(), 16u);
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i].kind, i < 8 ? F : B) << i;
}

TEST(PipelineOrder, OneChunkPerStageKeepsTheStageAsItsChunk) {
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (const PipelinePass& pass : pass_order(2, 4, 8, schedule)) EXPECT_EQ(pass.chunk, 2);
  }
}

TEST(PipelineOrder, InterleavedNeedsAMultipleOfTheStagesAsMicroBatches) {
  EXPECT_THROW(pass_order(0, 4, 6, PipelineSchedule::interleaved_one_f_one_b, 2), PlanError);
  EXPECT_THROW(pass_order(0, 4, 8, PipelineSchedule::one_f_one_b, 2), PlanError);
  EXPECT_THROW(pass_order(4, 4, 8, PipelineSchedule::one_f_one_b), PlanError);
}

// The step time of the stages' orders run together: a chunk's forward costs f and its backward
// b, hand-overs are free; F(c, m) waits for F(c - 1, m), B(c, m) for B(c + 1, m) (the last
// chunk's for its own forward). -1 when the orders wait on each other for ever.
double makespan(int stages, int micro_batches, PipelineSchedule schedule, int chunks, double f, double b) {
  std::vector<std::vector<PipelinePass>> orders;
  for (int s = 0; s < stages; ++s) orders.push_back(pass_order(s, stages, micro_batches, schedule, chunks));
  const int last = stages * chunks - 1;
  std::map<std::tuple<PassKind, int, int>, double> done;  // (kind, micro-batch, chunk) -> end
  std::vector<size_t> next(static_cast<size_t>(stages), 0);
  std::vector<double> clock(static_cast<size_t>(stages), 0.0);
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (size_t s = 0; s < orders.size(); ++s) {
      for (; next[s] < orders[s].size(); ++next[s], progressed = true) {
        const PipelinePass& p = orders[s][next[s]];
        const auto needed = p.kind == F ? std::make_tuple(F, p.micro_batch, p.chunk - 1)
                                        : std::make_tuple(p.chunk == last ? F : B, p.micro_batch,
                                                          p.chunk == last ? p.chunk : p.chunk + 1);
        double ready = 0.0;
        if (p.kind == B || p.chunk > 0) {
          const auto it = done.find(needed);
          if (it == done.end()) break;
          ready = it->second;
        }
        clock[s] = std::max(clock[s], ready) + (p.kind == F ? f : b);
        EXPECT_TRUE(done.emplace(std::make_tuple(p.kind, p.micro_batch, p.chunk), clock[s]).second) << "pass repeated";
      }
    }
  }
  for (size_t s = 0; s < orders.size(); ++s) {
    if (next[s] < orders[s].size()) return -1.0;
  }
  return *std::max_element(clock.begin(), clock.end());
}

TEST(PipelineOrder, InterleavedRunsEveryPassOnceInOrderAndShrinksTheBubbleVFold) {
  for (int stages : {2, 3, 4, 8}) {
    for (int chunks : {2, 3, 4}) {
      for (int groups : {1, 2, 3}) {
        const int micro_batches = groups * stages;
        for (int s = 0; s < stages; ++s) {
          // Per chunk of the stage: its micro-batches forward in order, then backward in order,
          // each after its forward.
          std::map<int, std::vector<int>> forwards;
          std::map<int, std::vector<int>> backwards;
          for (const PipelinePass& p :
               pass_order(s, stages, micro_batches, PipelineSchedule::interleaved_one_f_one_b, chunks)) {
            ASSERT_EQ(p.chunk % stages, s);
            ASSERT_LT(p.chunk, stages * chunks);
            auto& list = p.kind == F ? forwards[p.chunk] : backwards[p.chunk];
            list.push_back(p.micro_batch);
            if (p.kind == B) {
              EXPECT_GT(forwards[p.chunk].size(), static_cast<size_t>(p.micro_batch));
            }
          }
          std::vector<int> in_order(static_cast<size_t>(micro_batches));
          for (int m = 0; m < micro_batches; ++m) in_order[static_cast<size_t>(m)] = m;
          ASSERT_EQ(forwards.size(), static_cast<size_t>(chunks));
          for (const auto& [chunk, list] : forwards) EXPECT_EQ(list, in_order) << "chunk " << chunk;
          for (const auto& [chunk, list] : backwards) EXPECT_EQ(list, in_order) << "chunk " << chunk;
        }
        // A stage's chunk costs 1/V of a stage's pass (F = 1, B = 2 per micro-batch): the
        // ideal step is M (F + B) and the bubble (S - 1)(F + B) / V.
        const double f = 1.0 / chunks;
        const double b = 2.0 / chunks;
        const double ideal = micro_batches * 3.0;
        const double step = makespan(stages, micro_batches, PipelineSchedule::interleaved_one_f_one_b, chunks, f, b);
        EXPECT_NEAR(step, ideal * (1.0 + (stages - 1.0) / (chunks * micro_batches)), 1e-9)
            << stages << " stages, " << chunks << " chunks, " << micro_batches << " micro-batches";
        EXPECT_NEAR(makespan(stages, micro_batches, PipelineSchedule::one_f_one_b, 1, 1.0, 2.0),
                    ideal * (1.0 + (stages - 1.0) / micro_batches), 1e-9);
      }
    }
  }
}

}  // namespace
}  // namespace splitbrain::plans
