#pragma once
// CudaArrayDevice: the CUDA backend's Device (exec/runtime/device.h). Every array the runtime
// holds is GPU memory from the rank's caching allocator (CudaContext::memory()), and every layer
// pass, copy, fill, sum and parameter update is queued on the rank's compute stream, the stream
// of the layer kernels, so they run in the order the step program gives without the host
// waiting. The host sees values only through upload and download (counted in the run report).
//
// Communication (cuda_array_device_communication.cc): with the NCCL engine, the gradient buckets'
// reductions, ZeRO's gathers, the layout redistributions and the plan's other collectives run on
// the arrays themselves (exec/runtime/collectives_in_device_memory.h), NCCL on its own stream
// ordered against the compute stream by events, and so do the pipeline hand-overs of a plan whose
// hand-overs complete in NCCL groups (nccl_hand_overs.h; every schedule's do); what is left (halo
// rows, hand-overs that would not complete in groups, and everything under another engine) downloads its input into a
// HostDevice array, runs there (MPI, or the NCCL engine on host arrays) and uploads the result, counted as host
// transfers, so the report shows what is left to move onto the device.

#include <functional>
#include <memory>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/nccl_hand_overs.h"
#include "exec/cuda/page_locked_slots.h"
#include "exec/cuda/pinned_host_memory.h"
#include "exec/cuda/pooled_block.h"
#include "exec/runtime/device.h"
#include "exec/runtime/host_device.h"
#include "plans/collective_kind.h"
#include "plans/optimizer_launches.h"

namespace splitbrain::exec::cuda {

class NcclCollectives;
struct OrderedStreams;

class CudaArray final : public DeviceArray {
 public:
  CudaArray(std::vector<int64_t> shape, const std::shared_ptr<DeviceMemoryPool>& pool);
  float* data() const { return static_cast<float*>(block_.data()); }

 private:
  PooledBlock block_;
};

class CudaArrayDevice final : public Device {
 public:
  // On `context`'s device and stream; the context is shared with the rank's kernels.
  explicit CudaArrayDevice(std::shared_ptr<CudaContext> context);

  // The array's device memory; std::logic_error for an array of another device or a released
  // tensor.
  static float* memory(DeviceArray& array);
  static const float* memory(const DeviceArray& array);

  std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;
  void fill(DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first, int64_t count) override;
  void add(const DeviceArray& from, DeviceArray& into) override;
  void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) override;
  void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                 const kernels::RowCopy& rows) override;

  void forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
               std::span<const DeviceArray* const> params, DeviceArray& output) override;
  void backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter, const DeviceArray& gradient,
              DeviceArray& first_moment, DeviceArray* second_moment) override;
  // One kernel each (optimizer_kernels.h's many-tensor kernels), bit for bit update()'s.
  void update_all(const plans::OptimizerConfig& config, int64_t step, std::span<DeviceArray* const> parameters,
                  std::span<const DeviceArray* const> gradients, std::span<DeviceArray* const> first_moments,
                  std::span<DeviceArray* const> second_moments) override;
  void zero_all(std::span<DeviceArray* const> arrays) override;
  int arrays_per_update_pass() const override { return plans::kTensorsPerOptimizerLaunch; }

  void run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                       const DeviceArray& input, DeviceArray& output, std::string_view label) override;
  void redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                    std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                    std::string_view label) override;
  std::unique_ptr<comm::PendingCollective> start_all_reduce(comm::CollectiveEngine& engine,
                                                            const std::vector<int>& axes, DeviceArray& buffer) override;
  std::unique_ptr<comm::PendingCollective> start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                const std::vector<int>& axes, const DeviceArray& input,
                                                                DeviceArray& output) override;
  void all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                  DeviceArray& output) override;
  void all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                  DeviceArray& output) override;
  std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine& engine, const std::vector<int>& axes,
                                                      int destination, int tag, const DeviceArray& array) override;
  void allow_grouped_hand_overs(bool allowed) override { grouped_hand_overs_ = allowed; }
  void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
               DeviceArray& into) override;
  void hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                    DeviceArray& into) override;

  // Page-locked (pinned_host_memory.h): an upload from it is the copy engine's alone.
  std::shared_ptr<std::pmr::memory_resource> upload_memory() const override { return pinned_; }
  // Events on the compute stream (cuda_event_clock.h): timing a step adds no waits.
  std::unique_ptr<StepClock> make_step_clock() const override;
  // The arrays' uploads and downloads, and the kernels' own transfers (CudaContext counts them).
  HostTransfers host_transfers() const override {
    HostTransfers all = HostLink::host_transfers();
    all += context_->host_transfers();
    return all;
  }

  const DeviceMemoryPool& memory_pool() const { return *context_->memory(); }
  // The pool's figures and cudaMemGetInfo's used bytes beyond those at construction.
  std::optional<DeviceMemoryUse> memory_use() const override;
  std::optional<RecordedCalls> recorded_calls() const override;
  std::optional<int64_t> host_waits() const override { return context_->host_waits(); }

 protected:
  void upload_values(std::span<const float> host, DeviceArray& into) override;
  void download_values(const DeviceArray& from, std::span<float> host) override;
  // From page-locked memory (the data reader's blocks, upload_memory()) the copy is queued as it
  // is; from pageable memory, through a page-locked slot, since the driver would first wait for
  // the stream. Neither waits.
  void upload_values_queued(std::span<const float> host, DeviceArray& into) override;

 private:
  // The compute stream and `nccl`'s stream, for collectives on device memory.
  OrderedStreams streams_with(const NcclCollectives& nccl) const;
  // A flat sum, gather, reduce-scatter or all-to-all over `axes` on device memory (the members'
  // pieces one after another), from `input` into `into` (the same array for an in-place sum): it
  // follows what the compute stream has queued, and its wait() makes what the compute stream
  // queues next follow it. A group of one copies at once.
  std::unique_ptr<comm::PendingCollective> start_on_device(NcclCollectives& nccl, plans::CollectiveKind kind,
                                                           const std::vector<int>& axes, const DeviceArray& input,
                                                           DeviceArray& into);
  // A host copy of `array` (a counted download), for the staged communication.
  std::unique_ptr<DeviceArray> staged_copy(const DeviceArray& array);
  // A host array of `like`'s shape, to receive a staged result.
  std::unique_ptr<DeviceArray> staged_result(const DeviceArray& like);
  // Uploads a staged result (counted) into `into`.
  void deliver(DeviceArray& staged, DeviceArray& into);
  // A blocking call staged through host memory: `input` copied out, `on_host` run on the host
  // copies, its result uploaded into `output`.
  void staged(const DeviceArray& input, DeviceArray& output,
              const std::function<void(DeviceArray& host_input, DeviceArray& host_output)>& on_host);

  std::shared_ptr<CudaContext> context_;
  int64_t driver_used_at_start_bytes_;
  HostDevice host_;  // runs the staged communication
  std::shared_ptr<PinnedHostMemory> pinned_ = std::make_shared<PinnedHostMemory>(context_->device());
  PageLockedSlots slots_{context_->device()};  // queued uploads from pageable memory
  // Pipeline hand-overs with NCCL on device memory, where the plan's complete in groups.
  bool grouped_hand_overs_ = false;
  NcclHandOvers hand_over_transport_{context_->stream()};
  GroupedHandOvers hand_overs_{hand_over_transport_};
};

}  // namespace splitbrain::exec::cuda
