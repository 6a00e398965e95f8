// The fit behind the runtime's host time per pass: each forward's and backward's queuing in a
// measured step (from the host's mark before it) against its predicted span, matched by the step
// interpreter's names; other instructions' host time counts to no pass but moves the marks.

#include "tools/calibration/pass_host_excess.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/cluster_presets.h"
#include "sim/simulation.h"
#include "tests/support/test_plans.h"

namespace splitbrain::tools {
namespace {

TEST(PassHostExcess, EachPassesQueuingBeyondItsPredictedSpanInStepOrder) {
  const plans::Plan plan = testing_support::data_parallel_plan("fashion-vgg", 1, 64);
  sim::Cluster cluster = sim::cluster_preset("dgx-h100");
  cluster.device.launch_host_seconds = 1e-4;  // every pass queued in a predicted span of its own
  const sim::Prediction prediction = sim::simulate(plan, cluster);
  const model::Model& model = *plan.model;

  // A step whose host took each pass 7 us more than predicted, and 40 us for what lies between.
  std::vector<exec::TimelineEvent> step;
  double host = 0.0;
  auto add = [&](std::string name, double host_seconds) {
    host += host_seconds;
    exec::TimelineEvent event;
    event.name = std::move(name);
    event.host_end_seconds = host;
    step.push_back(event);
  };
  add("load_input data mb0", 40e-6);
  std::vector<double> expected;
  for (const sim::ScheduledPass& pass : prediction.passes) {
    for (const sim::LayerSpan& span : pass.layers) {
      const double predicted = span.host_queue_end_seconds - span.host_queue_start_seconds;
      ASSERT_GT(predicted, 0.0);
      const char* op = pass.kind == plans::PassKind::forward ? "forward " : "backward ";
      add(op + model.layer(span.layer).name + " mb" + std::to_string(pass.micro_batch), predicted + 7e-6);
      expected.push_back(7e-6);
    }
    add("loss_out loss mb0", 40e-6);
  }
  add("forward no_such_layer mb0", 40e-6);
  add("optimizer", 40e-6);

  const std::vector<PassHostExcess> excess = pass_host_excess(step, prediction, model);
  ASSERT_EQ(excess.size(), expected.size());
  for (size_t i = 0; i < excess.size(); ++i) EXPECT_NEAR(excess[i].seconds, expected[i], 1e-12) << "pass " << i;
  EXPECT_EQ(excess.front().kind, plans::PassKind::forward);
  EXPECT_EQ(excess.back().kind, plans::PassKind::backward);
  // By op, in first-seen order: the first pass is the first layer with an op's forward.
  const std::string by_op = excess_by_op(excess, model);
  EXPECT_EQ(by_op.rfind(std::string(model::op_name(model.layer(excess.front().layer).kind)) + " forward +7.0 us (", 0),
            0u)
      << by_op;
  EXPECT_NE(by_op.find(" backward +7.0 us ("), std::string::npos) << by_op;
}

std::vector<PassHostExcess> passes_of(const std::vector<double>& seconds) {
  std::vector<PassHostExcess> passes;
  for (double s : seconds) passes.push_back({0, plans::PassKind::forward, s});
  return passes;
}

TEST(PassHostExcess, PerPassIsTheMeanWithTheHighestAndLowestTenthLeftOut) {
  // Twenty passes: 16 small ops at 5 us, two convolutions at 50 us and 80 us, a pass that waited
  // 2 ms on the GPU, and one 30 us faster than priced. The tenth at each end (two passes) goes:
  // the wait and the 80 us convolution above, the -30 us and one 5 us below.
  std::vector<double> seconds(16, 5e-6);
  seconds.insert(seconds.end(), {50e-6, 80e-6, 2e-3, -30e-6});
  const double expected = (15 * 5e-6 + 50e-6) / 16;
  EXPECT_NEAR(per_pass_host_seconds(passes_of(seconds)), expected, 1e-12);
  // The median would be 5 us: the convolutions' share of the step's host time would go unpriced.
  EXPECT_GT(per_pass_host_seconds(passes_of(seconds)), 5e-6 + 1e-7);
}

TEST(PassHostExcess, PerPassIsNeverNegativeAndZeroWithoutPasses) {
  EXPECT_EQ(per_pass_host_seconds({}), 0.0);
  EXPECT_EQ(per_pass_host_seconds(passes_of({-4e-6, -2e-6, -3e-6})), 0.0);
  // Fewer than ten passes: nothing is left out.
  EXPECT_NEAR(per_pass_host_seconds(passes_of({1e-6, 2e-6, 6e-6})), 3e-6, 1e-12);
}

}  // namespace
}  // namespace splitbrain::tools
