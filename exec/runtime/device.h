#pragma once
// Device: what the runtime asks of a backend's memory, the one place where array values are
// read or written. The runtime (the step interpreter, the optimizer, ZeRO's slices, tied
// weights, checkpoints) holds DeviceArrays and calls these; a backend keeps its arrays where it
// computes (HostDevice: host memory, host_device.h). Every call is on arrays already of the
// right sizes (the runtime checks them, with the step program's buffer numbers in its messages).
// Host transfers are counted, so a step's report can say how many it made (the input batch; the
// evaluation's logits; a checkpoint's arrays): those through upload/download here, and those a
// backend's kernels make themselves (a GPU's labels and loss), which the backend adds.

#include <cstdint>
#include <memory>
#include <memory_resource>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "exec/comm/collective_engine.h"
#include "exec/comm/communicator.h"
#include "exec/kernels/row_copy.h"
#include "exec/runtime/device_array.h"
#include "exec/runtime/host_transfers.h"
#include "exec/runtime/layer_op.h"
#include "exec/runtime/step_clock.h"
#include "plans/plan.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {

// What a device's own allocator and its driver say of its memory, to cross-check the tracked
// figures (MemoryTracker): the allocator's peak in use (the tracked arrays and kept buffers,
// rounded to its granule), what it holds from the driver (in use and cached), and the memory the
// driver counts as used on the device since the device was made (the allocator's, the
// libraries' workspaces and code, the kernels' own buffers).
struct DeviceMemoryUse {
  int64_t allocator_peak_in_use_bytes = 0;
  int64_t allocator_reserved_bytes = 0;
  int64_t driver_used_bytes = 0;
};

// Where a device queues its kernels' library calls from recordings made once per argument set
// (a GPU's CUDA graphs, exec/cuda/call_graphs.h): the calls recorded (and run), replayed, and
// queued directly (the first call with its arguments, or a kernel whose calls cannot be recorded).
struct RecordedCalls {
  int64_t recorded = 0;
  int64_t replayed = 0;
  int64_t direct = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  // A new array of `shape`: all zeros, or (zeroed false) contents undefined until written.
  virtual std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) = 0;

  // Host transfers, counted (as `other`: a value read back, a staged collective, a checkpoint):
  // `host` holds exactly the array's elements.
  void upload(std::span<const float> host, DeviceArray& into);
  void download(const DeviceArray& from, std::span<float> host);
  // The step's input batch, queued behind the device's work: the host does not wait for it, so
  // `host` must stay as it is until the device's queued work is done (the step's end, where its
  // clock waits for the device). Counted as the step's input.
  void upload_queued(std::span<const float> host, DeviceArray& into);
  // Host memory to upload from, for what fills the arrays a step uploads (the input batches):
  // where an upload is fastest (a GPU's page-locked memory, which its copy engine reads
  // directly); plain host memory by default. Shared, so what was allocated from it may outlive
  // the device.
  virtual std::shared_ptr<std::pmr::memory_resource> upload_memory() const;
  // Every host transfer so far: upload's and download's, and the backend's own.
  virtual HostTransfers host_transfers() const { return transfers_; }
  // None where the device has no allocator of its own to ask (HostDevice: host memory).
  virtual std::optional<DeviceMemoryUse> memory_use() const { return std::nullopt; }
  // Every recorded call so far; none where the device records nothing (HostDevice, or a GPU's
  // with its kernel graphs off).
  virtual std::optional<RecordedCalls> recorded_calls() const { return std::nullopt; }
  // How many times so far the host waited for the device's queued work to be done (an upload
  // whose host memory may go when it returns, a value read on the host, a collective staged
  // through host memory); none where the device queues nothing (HostDevice: the host computes).
  // The simulator says in which instructions of a step the host waits (sim::StageTiming).
  virtual std::optional<int64_t> host_waits() const { return std::nullopt; }

  // Element ranges of the arrays seen flat (row-major).
  virtual void fill(DeviceArray& array, int64_t first, int64_t count, float value) = 0;
  virtual void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                    int64_t count) = 0;
  // into += from, element by element (the same element count).
  virtual void add(const DeviceArray& from, DeviceArray& into) = 0;
  // 2-d blocks: `block` (its shape is the extent) = `from` at `offset`, or `into` at `offset` +=
  // `block`.
  virtual void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) = 0;
  virtual void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) = 0;
  // Rows of arrays seen as planes of rows (kernels::RowCopy), `from` from its element `from_first`
  // on and `into` from `into_first` on: a collective's pieces cut out of an array along one
  // dimension and laid into another (collectives_in_device_memory.h).
  virtual void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                         const kernels::RowCopy& rows) = 0;
  // `parts` one after another into `flat`, the rest of it zeros (a gradient bucket), and back;
  // by default as copies and a fill.
  virtual void pack(std::span<const DeviceArray* const> parts, DeviceArray& flat);
  virtual void unpack(const DeviceArray& flat, std::span<DeviceArray* const> parts);

  // A layer's passes (LayerOp's contracts). Released tensors come as ReleasedArray.
  virtual void forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
                       std::span<const DeviceArray* const> params, DeviceArray& output) = 0;
  virtual void backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                        const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                        std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) = 0;
  // One parameter's update, step `step` (1 for the first), with torch.optim's rules
  // (optimizer.h); `second_moment` is Adam's (null for SGD).
  virtual void update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter,
                      const DeviceArray& gradient, DeviceArray& first_moment, DeviceArray* second_moment) = 0;
  // Every parameter's update of one optimizer step, the i-th of each list together as update()
  // takes them (`second_moments` empty for SGD); and every array set to zeros (the kept gradients
  // after the update). By default one call per array; a device that queues its work does each in
  // one pass, so the host queues one kernel, not one per parameter.
  virtual void update_all(const plans::OptimizerConfig& config, int64_t step, std::span<DeviceArray* const> parameters,
                          std::span<const DeviceArray* const> gradients, std::span<DeviceArray* const> first_moments,
                          std::span<DeviceArray* const> second_moments);
  virtual void zero_all(std::span<DeviceArray* const> arrays);
  // How many arrays update_all and zero_all take in one pass (the cost model's
  // sim::Device::optimizer_tensors_per_kernel, which calibrate reads here): 1 by default.
  virtual int arrays_per_update_pass() const { return 1; }

  // The plan's collectives in turn (each one's output the next one's input), counted by the
  // communicator under `label`; `output` receives the last result.
  virtual void run_collectives(comm::Communicator& communicator, std::span<const plans::Collective> collectives,
                               const DeviceArray& input, DeviceArray& output, std::string_view label) = 0;
  // plans::plan_redistribution's steps (comm/redistribution_runner.h); `input` is left as it was.
  virtual void redistribute(comm::Communicator& communicator, std::span<const plans::RedistributionStep> steps,
                            std::span<const int64_t> global_shape, DeviceArray& input, DeviceArray& output,
                            std::string_view label) = 0;
  // Non-blocking reductions of gradient buckets (CollectiveEngine's contracts): the arrays stay
  // untouched until the returned operation completes.
  virtual std::unique_ptr<comm::PendingCollective> start_all_reduce(comm::CollectiveEngine& engine,
                                                                    const std::vector<int>& axes,
                                                                    DeviceArray& buffer) = 0;
  virtual std::unique_ptr<comm::PendingCollective> start_reduce_scatter(comm::CollectiveEngine& engine,
                                                                        const std::vector<int>& axes,
                                                                        const DeviceArray& input,
                                                                        DeviceArray& output) = 0;
  // The members' arrays concatenated, member 0 first, outside the plan (not counted): a
  // checkpoint's gather of ZeRO 3's slices.
  virtual void all_gather(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                          DeviceArray& output) = 0;
  // Member j's piece (the j-th of n equal, contiguous pieces of `input`) to member j; `output`
  // holds the pieces received, member 0's first (a flat all-to-all, outside the plan: not counted).
  virtual void all_to_all(comm::CollectiveEngine& engine, const std::vector<int>& axes, const DeviceArray& input,
                          DeviceArray& output) = 0;
  // Point to point within the group over `axes` (a pipeline hand-over): a non-blocking send to
  // member `destination`, and the matching blocking receive from member `source`.
  virtual std::unique_ptr<comm::PendingCollective> start_send(comm::CollectiveEngine& engine,
                                                              const std::vector<int>& axes, int destination, int tag,
                                                              const DeviceArray& array) = 0;
  virtual void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                       DeviceArray& into) = 0;
  // A receive the step program posts in one group with its next receive
  // (plans::StepInstruction::posted_with_next): a device that moves grouped hand-overs holds it
  // back and writes `into` by the time that receive returns; by default it is received now.
  virtual void hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                            DeviceArray& into) {
    receive(engine, axes, source, tag, into);
  }
  // Whether the plan's hand-overs complete as groups of rendezvous messages matched in order
  // (plans::hand_overs_complete_in_groups; the Trainer says so once): a device whose transport
  // works that way (NCCL's point-to-point calls, grouped_hand_overs.h) may then move them in its
  // own memory, and must keep tagged messages otherwise. Ignored by default.
  virtual void allow_grouped_hand_overs(bool /*allowed*/) {}

  // The clock the step is timed by (step_clock.h): by default the host's, read at each mark,
  // right for a device that completes each call before returning (HostDevice); a device that
  // queues its work reads the time of its own queue.
  virtual std::unique_ptr<StepClock> make_step_clock() const;

 protected:
  virtual void upload_values(std::span<const float> host, DeviceArray& into) = 0;
  virtual void download_values(const DeviceArray& from, std::span<float> host) = 0;
  // By default the upload itself, done when it returns (a device that queues nothing).
  virtual void upload_values_queued(std::span<const float> host, DeviceArray& into) { upload_values(host, into); }

 private:
  HostTransfers transfers_;
};

// The array's values in a new host vector (Device::download, counted).
std::vector<float> host_copy(Device& device, const DeviceArray& array);

// The checks every Device makes of its arguments: std::logic_error naming the call (`what`) when
// elements [first, first + count) are not inside `array`, or when the 2-d `block` at `offset` is
// not inside the 2-d `whole`.
void check_element_range(const DeviceArray& array, int64_t first, int64_t count, const char* what);
// std::logic_error naming update_all when its lists differ in length (`second_moments`: empty,
// or as long as the others) or the i-th arrays of the lists differ in elements.
void check_update_lists(std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                        std::span<DeviceArray* const> first_moments, std::span<DeviceArray* const> second_moments);
void check_block_inside(const DeviceArray& block, const DeviceArray& whole, std::span<const int64_t> offset,
                        const char* what);
// std::logic_error when a copy_rows call's rows are not inside its planes, or its planes not inside
// the arrays.
void check_rows_inside(const DeviceArray& from, int64_t from_first, const DeviceArray& into, int64_t into_first,
                       const kernels::RowCopy& rows);

}  // namespace splitbrain::exec
