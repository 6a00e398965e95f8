// Where the host waits for a device that queues its work: the executor's count per instruction
// (StepResult::host_wait_instructions, from DeviceClock::host_waits) against the simulator's
// (sim::StageTiming::host_wait_instructions), on one rank. The device here is HostDevice counting a
// wait where the CUDA device waits for its stream: each upload and download of its link (an upload's
// host memory may go when it returns), not the queued uploads of the input batches. On one rank
// nothing else moves between host and device in a step (the loss's labels and value travel by the
// ops' queued copies, the embedding checks its ids on the host, a 1-rank plan has no collective),
// so both sides must say the host never waits before the step's end.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_process.h"
#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/host_array_link.h"
#include "exec/runtime/host_device.h"
#include "exec/runtime/trainer.h"
#include "plans/step_program.h"
#include "sim/cluster_presets.h"
#include "sim/simulation.h"
#include "tests/support/test_plans.h"

namespace splitbrain::exec {
namespace {

// HostDevice's link, whose host waits as the CUDA device's does: once per upload and per
// download, not for a queued upload (whose count is kept apart, to see the inputs went that way).
class WaitCountingLink final : public HostArrayLink {
 public:
  int64_t waits() const { return waits_; }
  int64_t queued_uploads() const { return queued_uploads_; }

 protected:
  void upload_values(std::span<const float> host, DeviceArray& into) override {
    ++waits_;
    HostArrayLink::upload_values(host, into);
  }
  void download_values(const DeviceArray& from, std::span<float> host) override {
    ++waits_;
    HostArrayLink::download_values(from, host);
  }
  void upload_values_queued(std::span<const float> host, DeviceArray& into) override {
    ++queued_uploads_;
    HostArrayLink::upload_values(host, into);
  }

 private:
  int64_t waits_ = 0;
  int64_t queued_uploads_ = 0;
};

// The host's clock, reporting the link's waits as the CUDA device's clock reports its stream's.
class WaitCountingClock final : public DeviceClock {
 public:
  explicit WaitCountingClock(const WaitCountingLink& link) : link_(link) {}
  std::optional<int64_t> host_waits() const override { return link_.waits(); }

 private:
  const WaitCountingLink& link_;
};

// Inputs of zeros (token 0 for token models) and labels 0: what they hold does not matter here.
class ZeroBatch final : public BatchSource {
 public:
  explicit ZeroBatch(int64_t values_per_sample) : values_per_sample_(values_per_sample) {}
  void images(int64_t, int64_t, int64_t count, float* out) override {
    std::fill(out, out + count * values_per_sample_, 0.0f);
  }
  std::vector<int32_t> labels(int64_t, int64_t, int64_t count) override {
    return std::vector<int32_t>(static_cast<size_t>(count * labels_per_sample), 0);
  }
  int64_t labels_per_sample = 1;

 private:
  int64_t values_per_sample_;
};

void expect_waits_as_predicted(const std::string& model, int64_t batch, int micro_batches) {
  plans::Plan plan = testing_support::data_parallel_plan(model, 1, batch);
  plan.micro_batches = micro_batches;
  comm::MeshCommunicators communicators(plan.mesh);
  Backend backend = cpu::make_cpu_backend(communicators);
  auto link = std::make_unique<WaitCountingLink>();
  const WaitCountingLink& counting = *link;
  Device::Concerns concerns = HostDevice::concerns();
  concerns.clock = std::make_unique<WaitCountingClock>(counting);
  concerns.host_link = std::move(link);
  backend.device = std::make_unique<Device>(std::move(concerns));
  Trainer trainer(plan, std::move(backend), 1);

  const model::Layer& input = plan.model->layer(0);
  int64_t values_per_sample = 1;
  for (const int64_t d : input.output_shape) values_per_sample *= d;
  ZeroBatch data(values_per_sample);
  const model::Layer& loss = plan.model->layer(plan.model->size() - 1);
  if (plan.model->layer(loss.inputs.at(0)).output_shape.size() == 2) data.labels_per_sample = input.output_shape.at(0);

  std::vector<int> inputs;
  const plans::StepProgram& program = trainer.program();
  for (size_t i = 0; i < program.instructions.size(); ++i) {
    if (program.instructions[i].op == plans::StepOp::load_input) inputs.push_back(static_cast<int>(i));
  }
  ASSERT_EQ(static_cast<int>(inputs.size()), micro_batches);

  const sim::Prediction predicted = sim::simulate(plan, sim::cluster_preset("dgx-h100"));
  ASSERT_EQ(predicted.stages.size(), 1U);
  EXPECT_EQ(predicted.stages[0].host_wait_instructions, std::vector<int>{}) << model;
  for (int step = 0; step < 2; ++step) {
    const StepResult result = trainer.step(data);
    EXPECT_TRUE(std::isfinite(result.loss));
    ASSERT_TRUE(result.host_wait_instructions.has_value());
    EXPECT_EQ(*result.host_wait_instructions, predicted.stages[0].host_wait_instructions) << model << " step " << step;
    EXPECT_EQ(counting.queued_uploads(), static_cast<int64_t>(inputs.size()) * (step + 1)) << model << " step " << step;
    EXPECT_EQ(result.host_transfers.count_of(HostTransferPurpose::input), static_cast<int64_t>(inputs.size()));
    EXPECT_EQ(result.host_transfers.count(), static_cast<int64_t>(inputs.size())) << "a transfer besides the inputs";
  }
}

TEST(HostWaits, NoneBeforeTheStepsEndOnAConvolutionNet) { expect_waits_as_predicted("fashion-vgg", 8, 2); }

TEST(HostWaits, NoneBeforeTheStepsEndWithOneMicroBatch) { expect_waits_as_predicted("fashion-vgg", 4, 1); }

// A token model: the embedding checks its ids on the host from the data source (the loss its
// labels), so neither makes the host wait.
TEST(HostWaits, NoneBeforeTheStepsEndOnATinyGpt) {
  expect_waits_as_predicted("gpt:layers=1,hidden=16,heads=2,seq=8,vocab=32,positions=8", 4, 2);
}

// The CPU's own device queues nothing: the step reports no waits at all, not zero.
TEST(HostWaits, AHostDeviceReportsNone) {
  plans::Plan plan = testing_support::data_parallel_plan("fashion-vgg", 1, 4);
  comm::MeshCommunicators communicators(plan.mesh);
  Trainer trainer(plan, cpu::make_cpu_backend(communicators), 1);
  ZeroBatch data(28 * 28);
  EXPECT_FALSE(trainer.step(data).host_wait_instructions.has_value());
}

}  // namespace
}  // namespace splitbrain::exec

int main(int argc, char** argv) {
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
