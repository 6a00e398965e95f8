// CudaArrayDevice's communication, staged through host memory (cuda_array_device.h): a host
// copy of the input, the HostDevice's communication on it (the backend's collective engine, MPI
// for hand-overs), the result uploaded back. Each copy is a counted host transfer.

#include <functional>
#include <utility>
#include <vector>

#include "exec/cuda/cuda_array_device.h"

namespace splitbrain::exec::cuda {
namespace {

// A staged non-blocking operation: keeps its host copies alive until it completes, then uploads
// the host result (when there is one) into the device array it was started for.
class StagedPending final : public comm::PendingCollective {
 public:
  using Deliver = std::function<void()>;
  StagedPending(std::unique_ptr<comm::PendingCollective> inner, std::vector<std::unique_ptr<DeviceArray>> staged,
                Deliver deliver)
      : staged_(std::move(staged)), inner_(std::move(inner)), deliver_(std::move(deliver)) {}

  bool test() override {
    if (!done_ && inner_->test()) finish();
    return done_;
  }
  void wait() override {
    if (done_) return;
    inner_->wait();
    finish();
  }

 private:
  void finish() {
    done_ = true;
    if (deliver_) deliver_();
  }

  // Declared first so it goes last: an abandoned operation (its destructor waits for it) may
  // still use the host copies.
  std::vector<std::unique_ptr<DeviceArray>> staged_;
  std::unique_ptr<comm::PendingCollective> inner_;
  Deliver deliver_;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<DeviceArray> CudaArrayDevice::staged_copy(const DeviceArray& array) {
  std::unique_ptr<DeviceArray> host = host_.allocate(array.shape(), false);
  download(array, HostDevice::storage(*host).values);
  return host;
}

std::unique_ptr<DeviceArray> CudaArrayDevice::staged_result(const DeviceArray& like) {
  return host_.allocate(like.shape(), true);
}

void CudaArrayDevice::deliver(DeviceArray& staged, DeviceArray& into) {
  upload(HostDevice::storage(staged).values, into);
}

void CudaArrayDevice::run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                                      const DeviceArray& input, DeviceArray& output, std::string_view label) {
  const auto staged_input = staged_copy(input);
  const auto staged_output = staged_result(output);
  host_.run_collectives(communicator, collectives, *staged_input, *staged_output, label);
  deliver(*staged_output, output);
}

void CudaArrayDevice::redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, DeviceArray& input, bool /*input_dies*/,
                                   DeviceArray& output, std::string_view label) {
  // The host copy is this call's own, so the redistribution may consume it.
  const auto staged_input = staged_copy(input);
  const auto staged_output = staged_result(output);
  host_.redistribute(communicator, steps, global_shape, *staged_input, true, *staged_output, label);
  deliver(*staged_output, output);
}

std::unique_ptr<comm::PendingCollective> CudaArrayDevice::start_all_reduce(comm::CollectiveEngine& engine,
                                                                           const std::vector<int>& axes,
                                                                           DeviceArray& buffer) {
  auto staged = staged_copy(buffer);
  DeviceArray& host = *staged;
  auto pending = host_.start_all_reduce(engine, axes, host);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep),
                                         [this, &host, &buffer] { deliver(host, buffer); });
}

std::unique_ptr<comm::PendingCollective> CudaArrayDevice::start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                               const std::vector<int>& axes,
                                                                               const DeviceArray& input,
                                                                               DeviceArray& output) {
  auto staged_input = staged_copy(input);
  auto staged_output = staged_result(output);
  DeviceArray& host_output = *staged_output;
  auto pending = host_.start_reduce_scatter(engine, axes, *staged_input, host_output);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged_input));
  keep.push_back(std::move(staged_output));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep),
                                         [this, &host_output, &output] { deliver(host_output, output); });
}

void CudaArrayDevice::all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                                 DeviceArray& output) {
  const auto staged_input = staged_copy(input);
  const auto staged_output = staged_result(output);
  host_.all_gather(engine, axes, *staged_input, *staged_output);
  deliver(*staged_output, output);
}

std::unique_ptr<comm::PendingCollective> CudaArrayDevice::start_send(comm::CollectiveEngine& engine,
                                                                     const std::vector<int>& axes, int destination,
                                                                     int tag, const DeviceArray& array) {
  auto staged = staged_copy(array);
  auto pending = host_.start_send(engine, axes, destination, tag, *staged);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep), nullptr);
}

void CudaArrayDevice::receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                              DeviceArray& into) {
  const auto staged = staged_result(into);
  host_.receive(engine, axes, source, tag, *staged);
  deliver(*staged, into);
}

}  // namespace splitbrain::exec::cuda
