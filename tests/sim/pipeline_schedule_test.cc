// Pipeline timelines against the textbook closed forms.

#include <gtest/gtest.h>

#include "sim/pipeline_schedule.h"

namespace splitbrain::sim {
namespace {

using plans::PipelineSchedule;

TEST(PipelineSchedule, UniformStagesTakeMicroBatchesPlusStagesMinusOneSlots) {
  // S uniform stages, M micro-batches, F forward and B backward per micro-batch, free hand-over:
  // both GPipe and 1F1B take (M + S - 1)(F + B) (Huang et al. 2019; Narayanan et al. 2019).
  const double f = 1.0;
  const double b = 2.0;
  for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    for (int stages : {1, 2, 4}) {
      for (int micro : {1, 3, 8}) {
        const std::vector<StageWork> work(static_cast<size_t>(stages), StageWork{f, b, 0.0, 0.0});
        const PipelineTimeline timeline = schedule_pipeline(work, micro, schedule);
        EXPECT_DOUBLE_EQ(timeline.end_seconds, (micro + stages - 1) * (f + b))
            << "stages " << stages << " micro-batches " << micro;
        EXPECT_EQ(timeline.passes.size(), static_cast<size_t>(2 * stages * micro));
      }
    }
  }
}

TEST(PipelineSchedule, OneFOneBInterleavesAfterWarmUp) {
  const auto order = pass_order(0, 4, 6, PipelineSchedule::one_f_one_b);
  // Stage 0 of 4: three warm-up forwards, then F3 B0 F4 B1 F5 B2, then B3 B4 B5.
  const std::vector<std::pair<PassKind, int>> expected = {
      {PassKind::forward, 0},  {PassKind::forward, 1},  {PassKind::forward, 2},  {PassKind::forward, 3},
      {PassKind::backward, 0}, {PassKind::forward, 4},  {PassKind::backward, 1}, {PassKind::forward, 5},
      {PassKind::backward, 2}, {PassKind::backward, 3}, {PassKind::backward, 4}, {PassKind::backward, 5}};
  EXPECT_EQ(order, expected);
}

TEST(PipelineSchedule, SlowestStageAndHandOverSetThePace) {
  // Two stages, the second twice as slow; each hand-over takes 0.5.
  const std::vector<StageWork> work = {{1.0, 1.0, 0.5, 0.5}, {2.0, 2.0, 0.5, 0.5}};
  const PipelineTimeline one = schedule_pipeline(work, 1, PipelineSchedule::gpipe);
  // F0 on stage 0 [0, 1], hand-over to 1.5, F0 on stage 1 [1.5, 3.5], B0 [3.5, 5.5],
  // hand-over to 6, B0 on stage 0 [6, 7].
  EXPECT_DOUBLE_EQ(one.end_seconds, 7.0);
  EXPECT_DOUBLE_EQ(one.stage_end_seconds[1], 5.5);
}

}  // namespace
}  // namespace splitbrain::sim
