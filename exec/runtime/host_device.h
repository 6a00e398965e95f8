#pragma once
// HostDevice: a Device (device.h) whose arrays live in host memory as comm::LocalArrays: the CPU
// backend's, and the CUDA backend's until its arrays move to the GPU. Layers run their LayerOp on
// the arrays, communication goes through comm::Communicator and the backend's collective engine,
// and pipeline hand-overs are MPI messages on the group's communicator.

#include <memory>

#include "exec/comm/local_array.h"
#include "exec/runtime/device.h"

namespace splitbrain::exec {

class HostArray : public DeviceArray {
 public:
  // `zeroed` false: no storage yet; whatever writes the array whole moves its own in.
  HostArray(std::vector<int64_t> shape, bool zeroed);
  comm::LocalArray array;
};

class HostDevice : public Device {
 public:
  // The array's host storage, given its values. An array allocated without zeroing gets storage
  // of NaNs at its first use: on a GPU its memory holds whatever was there before, so a pass that
  // reads what nothing wrote must fail the CPU's equivalence tests rather than read zeros (and
  // reading such an array whole before any write throws std::logic_error, as does an array of
  // another device or a released tensor).
  static comm::LocalArray& storage(DeviceArray& array);
  static const comm::LocalArray& storage(const DeviceArray& array);

  std::unique_ptr<DeviceArray> allocate(std::vector<int64_t> shape, bool zeroed) override;
  void fill(DeviceArray& array, int64_t first, int64_t count, float value) override;
  void copy(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first, int64_t count) override;
  void add(const DeviceArray& from, DeviceArray& into) override;
  void copy_block(const DeviceArray& from, std::span<const int64_t> offset, DeviceArray& block) override;
  void add_block(const DeviceArray& block, DeviceArray& into, std::span<const int64_t> offset) override;
  void copy_rows(const DeviceArray& from, int64_t from_first, DeviceArray& into, int64_t into_first,
                 const kernels::RowCopy& rows) override;
  void pack(std::span<const DeviceArray* const> parts, DeviceArray& flat) override;

  void forward(LayerOp& op, int micro, int64_t step, std::span<const DeviceArray* const> inputs,
               std::span<const DeviceArray* const> params, DeviceArray& output) override;
  void backward(LayerOp& op, int micro, std::span<const DeviceArray* const> inputs, const DeviceArray& output,
                const DeviceArray& output_grad, std::span<const DeviceArray* const> params,
                std::span<DeviceArray* const> input_grads, std::span<DeviceArray* const> param_grads) override;
  void update(const plans::OptimizerConfig& config, int64_t step, DeviceArray& parameter, const DeviceArray& gradient,
              DeviceArray& first_moment, DeviceArray* second_moment) override;

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
  void receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
               DeviceArray& into) override;

 protected:
  void upload_values(std::span<const float> host, DeviceArray& into) override;
  void download_values(const DeviceArray& from, std::span<float> host) override;
};

}  // namespace splitbrain::exec
