#pragma once
// DeviceKernels: the compute a device runs on its arrays (device.h): a layer's passes and the
// optimizer's update.

#include <cstdint>
#include <optional>
#include <span>

#include "exec/runtime/device_array.h"
#include "exec/runtime/layer_op.h"
#include "plans/plan.h"

namespace splitbrain::exec {

// Where a device queues its kernels' library calls from recordings made once per argument set
// (a GPU's CUDA graphs, exec/cuda/call_graphs.h): the calls recorded (and run), replayed, and
// queued directly (the first call with its arguments, or a kernel whose calls cannot be recorded).
struct RecordedCalls {
  int64_t recorded = 0;
  int64_t replayed = 0;
  int64_t direct = 0;
};

class DeviceKernels {
 public:
  virtual ~DeviceKernels() = default;

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
  // takes them (`second_moments` empty for SGD). By default one call per parameter; a device that
  // queues its work does them in one pass, so the host queues one kernel, not one per parameter.
  virtual void update_all(const plans::OptimizerConfig& config, int64_t step, std::span<DeviceArray* const> parameters,
                          std::span<const DeviceArray* const> gradients, std::span<DeviceArray* const> first_moments,
                          std::span<DeviceArray* const> second_moments);
  // How many arrays update_all and DeviceMemory::zero_all take in one pass (the cost model's
  // sim::Device::optimizer_tensors_per_kernel, which calibrate reads here): 1 by default.
  virtual int arrays_per_update_pass() const { return 1; }
  // Every recorded call so far; none where the device records nothing (HostDevice, or a GPU's
  // with its kernel graphs off).
  virtual std::optional<RecordedCalls> recorded_calls() const { return std::nullopt; }
};

// std::logic_error naming update_all when its lists differ in length (`second_moments`: empty,
// or as long as the others) or the i-th arrays of the lists differ in elements.
void check_update_lists(std::span<DeviceArray* const> parameters, std::span<const DeviceArray* const> gradients,
                        std::span<DeviceArray* const> first_moments, std::span<DeviceArray* const> second_moments);

}  // namespace splitbrain::exec
