// The runtime's own host time per instruction: the step interpreter walking a model's
// data-parallel step on one rank with a device and ops that do nothing, so what is timed is the
// interpreter, its buffer table, the memory tracker and the step clock alone. On a GPU, where the
// host queues the step ahead of the device, this time comes on top of the kernels' queuing and
// paces a small batch's step (sim::Device::instruction_host_seconds, which calibrate fits on the
// GPU, holds it and the ops' and driver's share beside the kernels). The time is per step; the
// counters give the step's instructions and layer passes (forward or backward) to divide by.

#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <span>
#include <vector>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/runtime/backend.h"
#include "exec/runtime/batch_source.h"
#include "exec/runtime/trainer.h"
#include "tests/support/test_plans.h"

namespace splitbrain::exec {
namespace {

class NullArray final : public DeviceArray {
 public:
  explicit NullArray(std::vector<int64_t> shape) : DeviceArray(std::move(shape)) {}
};

class Finished final : public comm::PendingCollective {
 public:
  bool test() override { return true; }
  void wait() override {}
};

// The null device's concerns: every call returns at once; arrays have shapes and no memory.
class NullMemory final : public DeviceMemory {
 public:
  std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool) override {
    return std::make_unique<NullArray>(std::move(shape));
  }
  void fill(DeviceArray&, int64_t, int64_t, float) override {}
  void copy(const DeviceArray&, int64_t, DeviceArray&, int64_t, int64_t) override {}
  void add(const DeviceArray&, DeviceArray&) override {}
  void copy_block(const DeviceArray&, std::span<const int64_t>, DeviceArray&) override {}
  void add_block(const DeviceArray&, DeviceArray&, std::span<const int64_t>) override {}
  void copy_rows(const DeviceArray&, int64_t, DeviceArray&, int64_t, const kernels::RowCopy&) override {}
};

class NullLink final : public HostLink {
 protected:
  void upload_values(std::span<const float>, DeviceArray&) override {}
  void download_values(const DeviceArray&, std::span<float>) override {}
};

class NullKernels final : public DeviceKernels {
 public:
  void forward(LayerOp&, int, int64_t, std::span<const DeviceArray* const>, std::span<const DeviceArray* const>,
               DeviceArray&) override {}
  void backward(LayerOp&, int, std::span<const DeviceArray* const>, const DeviceArray&, const DeviceArray&,
                std::span<const DeviceArray* const>, std::span<DeviceArray* const>,
                std::span<DeviceArray* const>) override {}
  void update(const plans::OptimizerConfig&, int64_t, DeviceArray&, const DeviceArray&, DeviceArray&,
              DeviceArray*) override {}
};

class NullCollectives final : public DeviceCollectives {
 public:
  void run_collectives(comm::Communicator&, std::span<const plans::Collective>, const DeviceArray&, DeviceArray&,
                       std::string_view) override {}
  void redistribute(comm::Communicator&, std::span<const plans::RedistributionStep>, std::span<const int64_t>,
                    DeviceArray&, DeviceArray&, std::string_view) override {}
  std::unique_ptr<comm::PendingCollective> start_all_reduce(comm::CollectiveEngine&, const std::vector<int>&,
                                                            DeviceArray&) override {
    return std::make_unique<Finished>();
  }
  std::unique_ptr<comm::PendingCollective> start_reduce_scatter(comm::CollectiveEngine&, const std::vector<int>&,
                                                                const DeviceArray&, DeviceArray&) override {
    return std::make_unique<Finished>();
  }
  void all_gather(comm::CollectiveEngine&, const std::vector<int>&, const DeviceArray&, DeviceArray&) override {}
  void all_to_all(comm::CollectiveEngine&, const std::vector<int>&, const DeviceArray&, DeviceArray&) override {}
  std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine&, const std::vector<int>&, int, int,
                                                      const DeviceArray&) override {
    return std::make_unique<Finished>();
  }
  void receive(comm::CollectiveEngine&, const std::vector<int>&, int, int, DeviceArray&) override {}
};

// The host's clock: what the benchmark times is the host's work.
std::unique_ptr<Device> null_device() {
  return std::make_unique<Device>(Device::Concerns{.shared_state = nullptr,
                                                   .memory = std::make_unique<NullMemory>(),
                                                   .host_link = std::make_unique<NullLink>(),
                                                   .kernels = std::make_unique<NullKernels>(),
                                                   .collectives = std::make_unique<NullCollectives>(),
                                                   .clock = std::make_unique<DeviceClock>()});
}

class NullOp final : public LayerOp {
 public:
  void forward(int, int64_t, std::span<const ConstTensorSpan>, std::span<const ConstTensorSpan>, TensorSpan) override {}
  void backward(int, std::span<const ConstTensorSpan>, ConstTensorSpan, ConstTensorSpan,
                std::span<const ConstTensorSpan>, std::span<const TensorSpan>, std::span<const TensorSpan>) override {}
};

// One batch of zeros, held: the upload it feeds does nothing anyway.
class ZeroBatches final : public BatchSource {
 public:
  explicit ZeroBatches(int64_t sample_elements) : sample_elements_(sample_elements) {}
  void images(int64_t, int64_t, int64_t count, float* out) override {
    std::fill(out, out + count * sample_elements_, 0.0f);
  }
  std::span<const float> images_held(int64_t, int64_t, int64_t count) override {
    held_.resize(static_cast<size_t>(count * sample_elements_));
    return held_;
  }
  std::vector<int32_t> labels(int64_t, int64_t, int64_t count) override {
    return std::vector<int32_t>(static_cast<size_t>(count), 0);
  }

 private:
  int64_t sample_elements_;
  std::vector<float> held_;
};

void InterpretAStep(benchmark::State& state, const char* model, int64_t batch) {
  const plans::Plan plan = testing_support::data_parallel_plan(model, 1, batch);
  comm::MeshCommunicators communicators(plan.mesh);
  Backend backend{"null", false, [](const OpContext&) { return std::make_unique<NullOp>(); },
                  std::make_unique<comm::MpiCollectives>(communicators), null_device()};
  Trainer trainer(plan, std::move(backend), 1);
  const model::Shape& sample = plan.model->layer(0).output_shape;
  int64_t sample_elements = 1;
  for (const int64_t extent : sample) sample_elements *= extent;
  ZeroBatches data(sample_elements);
  for (auto _ : state) trainer.step(data);
  int64_t passes = 0;
  for (const plans::StepInstruction& instruction : trainer.program().instructions)
    passes += instruction.op == plans::StepOp::forward || instruction.op == plans::StepOp::backward ? 1 : 0;
  // Time is per step; these say how many instructions and layer passes a step has.
  state.counters["instructions"] = static_cast<double>(trainer.program().instructions.size());
  state.counters["passes"] = static_cast<double>(passes);
}
BENCHMARK_CAPTURE(InterpretAStep, vgg11_b64, "vgg11-cifar10", 64)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(InterpretAStep, tiny_gpt_b8, "gpt:layers=2,hidden=128,heads=4,seq=64,vocab=512,positions=64", 8)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace splitbrain::exec

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
