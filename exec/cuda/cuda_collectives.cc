// CudaCollectives: CudaArrayDevice's communication. With the NCCL engine, the gradient buckets' reductions and
// gathers, the layout redistributions, and every collective plans::runs_on_device_memory accepts,
// run on the arrays' device memory: the pieces cut out and laid in place by row copies on the
// compute stream (exec/runtime/collectives_in_device_memory.h), NCCL ordered against the compute
// stream by events (stream_ordered_collectives.h): no host copy, no host wait. So do the pipeline
// hand-overs where the plan's complete in NCCL groups (nccl_hand_overs.h). Hand-overs that would
// not, and everything under another engine (the MPI engine, in tests), are staged through
// host memory: a host copy of the input, HostCollectives on it, the result uploaded
// back; each copy a counted host transfer.

#include "exec/cuda/cuda_collectives.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "exec/cuda/cuda_array.h"
#include "exec/cuda/nccl_collectives.h"
#include "exec/cuda/stream_ordered_collectives.h"
#include "exec/runtime/collectives_in_device_memory.h"
#include "plans/collective_kind.h"
#include "plans/collective_residence.h"

namespace splitbrain::exec::cuda {
namespace {

// The backend's NCCL engine; null for any other engine, whose collectives then get host copies.
NcclCollectives* nccl_of(comm::CollectiveEngine& engine) { return dynamic_cast<NcclCollectives*>(&engine); }

float* memory(DeviceArray& array) { return CudaArray::data_of(array); }
const float* memory(const DeviceArray& array) { return CudaArray::data_of(array); }

// A collective over a group of one: its result was written before it returned.
class AlreadyComplete final : public comm::PendingCollective {
 public:
  bool test() override { return true; }
  void wait() override {}
};

void check_result_size(const DeviceArray& into, int64_t elements, std::string_view what) {
  if (into.elements() != elements) {
    throw std::logic_error(
        fmt::format("step program: {} delivers {} elements into a buffer of {}", what, elements, into.elements()));
  }
}

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

CudaCollectives::CudaCollectives(CudaContext& context, DeviceMemory& memory, HostLink& link)
    : context_(context), memory_(memory), link_(link), hand_over_transport_(context.stream()) {}

std::unique_ptr<DeviceArray> CudaCollectives::staged_copy(const DeviceArray& array) {
  std::unique_ptr<DeviceArray> host = staging_memory_.allocate(array.shape(), false);
  link_.download(array, HostArray::storage(*host).values);
  return host;
}

std::unique_ptr<DeviceArray> CudaCollectives::staged_result(const DeviceArray& like) {
  return staging_memory_.allocate(like.shape(), true);
}

void CudaCollectives::deliver(DeviceArray& staged, DeviceArray& into) {
  link_.upload(HostArray::storage(staged).values, into);
}

void CudaCollectives::staged(const DeviceArray& input, DeviceArray& output,
                             const std::function<void(DeviceArray& host_input, DeviceArray& host_output)>& on_host) {
  const auto staged_input = staged_copy(input);
  const auto staged_output = staged_result(output);
  on_host(*staged_input, *staged_output);
  deliver(*staged_output, output);
}

OrderedStreams CudaCollectives::streams_with(const NcclCollectives& nccl) const {
  return {context_.stream(), nccl.stream()};
}

std::unique_ptr<comm::PendingCollective> CudaCollectives::start_on_device(NcclCollectives& nccl,
                                                                          plans::CollectiveKind kind,
                                                                          const std::vector<int>& axes,
                                                                          const DeviceArray& input, DeviceArray& into) {
  const int n = nccl.group_size(axes);
  int64_t result_elements = input.elements();
  if (kind == plans::CollectiveKind::all_gather) result_elements *= n;
  if (kind == plans::CollectiveKind::reduce_scatter || kind == plans::CollectiveKind::all_to_all) {
    if (input.elements() % n != 0) {
      throw std::logic_error(fmt::format("step program: a {} the group does not divide", plans::collective_name(kind)));
    }
    if (kind == plans::CollectiveKind::reduce_scatter) result_elements /= n;
  }
  check_result_size(into, result_elements, plans::collective_name(kind));
  const bool in_place = &input == &into;
  if (n == 1) {  // the group's sum, gather or piece is the input itself
    if (!in_place) memory_.copy(input, 0, into, 0, into.elements());
    return std::make_unique<AlreadyComplete>();
  }
  const ncclComm_t group = nccl.communicator_for(axes);
  const OrderedStreams streams = streams_with(nccl);
  switch (kind) {
    case plans::CollectiveKind::all_reduce:
      if (!in_place) memory_.copy(input, 0, into, 0, into.elements());
      return cuda::start_all_reduce(streams, group, memory(into), static_cast<size_t>(into.elements()));
    case plans::CollectiveKind::all_gather:
      return cuda::start_all_gather(streams, group, memory(input), memory(into), static_cast<size_t>(input.elements()));
    case plans::CollectiveKind::reduce_scatter:
      return cuda::start_reduce_scatter(streams, group, memory(input), memory(into),
                                        static_cast<size_t>(into.elements()));
    case plans::CollectiveKind::all_to_all:
      return cuda::start_all_to_all(streams, group, memory(input), memory(into),
                                    static_cast<size_t>(input.elements() / n));
    default:
      throw std::logic_error("CudaArrayDevice: a collective that does not run on device memory");
  }
}

void CudaCollectives::run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                                      const DeviceArray& input, DeviceArray& output, std::string_view label) {
  if (nccl_of(communicator.engine()) != nullptr && plans::runs_on_device_memory(collectives)) {
    run_collectives_in_device_memory({memory_, *this}, communicator, collectives, input, output, label);
    return;
  }
  staged(input, output, [&](DeviceArray& in, DeviceArray& out) {
    staging_.run_collectives(communicator, collectives, in, out, label);
  });
}

void CudaCollectives::redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                                   std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                                   std::string_view label) {
  const bool in_device_memory = nccl_of(communicator.engine()) != nullptr &&
                                std::ranges::all_of(steps, [](const plans::RedistributionStep& step) {
                                  return !step.collective || plans::runs_on_device_memory(*step.collective);
                                });
  if (in_device_memory) {
    redistribute_in_device_memory({memory_, *this}, communicator, steps, global_shape, input, output, label);
    return;
  }
  staged(input, output, [&](DeviceArray& in, DeviceArray& out) {
    staging_.redistribute(communicator, steps, global_shape, in, out, label);
  });
}

std::unique_ptr<comm::PendingCollective> CudaCollectives::start_all_reduce(comm::CollectiveEngine& engine,
                                                                           const std::vector<int>& axes,
                                                                           DeviceArray& buffer) {
  if (NcclCollectives* nccl = nccl_of(engine)) {
    return start_on_device(*nccl, plans::CollectiveKind::all_reduce, axes, buffer, buffer);
  }
  auto staged = staged_copy(buffer);
  DeviceArray& host = *staged;
  auto pending = staging_.start_all_reduce(engine, axes, host);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep),
                                         [this, &host, &buffer] { deliver(host, buffer); });
}

std::unique_ptr<comm::PendingCollective> CudaCollectives::start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                               const std::vector<int>& axes,
                                                                               const DeviceArray& input,
                                                                               DeviceArray& output) {
  if (NcclCollectives* nccl = nccl_of(engine)) {
    return start_on_device(*nccl, plans::CollectiveKind::reduce_scatter, axes, input, output);
  }
  auto staged_input = staged_copy(input);
  auto staged_output = staged_result(output);
  DeviceArray& host_output = *staged_output;
  auto pending = staging_.start_reduce_scatter(engine, axes, *staged_input, host_output);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged_input));
  keep.push_back(std::move(staged_output));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep),
                                         [this, &host_output, &output] { deliver(host_output, output); });
}

void CudaCollectives::all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                                 DeviceArray& output) {
  if (NcclCollectives* nccl = nccl_of(engine)) {
    start_on_device(*nccl, plans::CollectiveKind::all_gather, axes, input, output)->wait();
    return;
  }
  staged(input, output, [&](DeviceArray& in, DeviceArray& out) { staging_.all_gather(engine, axes, in, out); });
}

void CudaCollectives::all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                                 DeviceArray& output) {
  if (NcclCollectives* nccl = nccl_of(engine)) {
    start_on_device(*nccl, plans::CollectiveKind::all_to_all, axes, input, output)->wait();
    return;
  }
  staged(input, output, [&](DeviceArray& in, DeviceArray& out) { staging_.all_to_all(engine, axes, in, out); });
}

std::unique_ptr<comm::PendingCollective> CudaCollectives::start_send(comm::CollectiveEngine& engine,
                                                                     const std::vector<int>& axes, int destination,
                                                                     int tag, const DeviceArray& array) {
  if (grouped_hand_overs_ && nccl_of(engine) != nullptr) {
    return hand_overs_.start_send(engine, axes, destination, array);
  }
  auto staged = staged_copy(array);
  auto pending = staging_.start_send(engine, axes, destination, tag, *staged);
  std::vector<std::unique_ptr<DeviceArray>> keep;
  keep.push_back(std::move(staged));
  return std::make_unique<StagedPending>(std::move(pending), std::move(keep), nullptr);
}

void CudaCollectives::receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                              DeviceArray& into) {
  if (grouped_hand_overs_ && nccl_of(engine) != nullptr) {
    hand_overs_.receive(engine, axes, source, into);
    return;
  }
  const auto staged = staged_result(into);
  staging_.receive(engine, axes, source, tag, *staged);
  deliver(*staged, into);
}

void CudaCollectives::hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                                   DeviceArray& into) {
  if (grouped_hand_overs_ && nccl_of(engine) != nullptr) {
    hand_overs_.hold_receive(engine, axes, source, into);
    return;
  }
  receive(engine, axes, source, tag, into);
}

}  // namespace splitbrain::exec::cuda
