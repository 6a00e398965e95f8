#pragma once
// CudaCollectives: CudaArrayDevice's communication (DeviceCollectives,
// exec/runtime/device_collectives.h). With the NCCL engine, the gradient buckets' reductions,
// ZeRO's gathers, the layout redistributions and the plan's other collectives run on the arrays
// themselves (exec/runtime/collectives_in_device_memory.h), NCCL on its own stream ordered against
// the compute stream by events, and so do the pipeline hand-overs of a plan whose hand-overs
// complete in NCCL groups (nccl_hand_overs.h; every schedule's do); what is left (halo rows,
// hand-overs that would not complete in groups, and everything under another engine) downloads
// its input into a host array, runs there (HostCollectives: MPI, or the NCCL engine on host
// arrays) and uploads the result, counted as host transfers by the device's link, so the report
// shows what is left to move onto the device.

#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "exec/cuda/cuda_context.h"
#include "exec/cuda/nccl_hand_overs.h"
#include "exec/runtime/device_collectives.h"
#include "exec/runtime/device_memory.h"
#include "exec/runtime/grouped_hand_overs.h"
#include "exec/runtime/host_collectives.h"
#include "exec/runtime/host_link.h"
#include "exec/runtime/host_memory.h"
#include "plans/collective_kind.h"

namespace splitbrain::exec::cuda {

class NcclCollectives;
struct OrderedStreams;

class CudaCollectives final : public DeviceCollectives {
 public:
  // The device's other concerns it works through, which must outlive it: `memory` for the copies
  // and row copies around a collective, `link` for the staged path's counted transfers.
  CudaCollectives(CudaContext& context, DeviceMemory& memory, HostLink& link);

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
  void hold_receive(comm::CollectiveEngine& engine, const std::vector<int>& axes, int source, int tag,
                    DeviceArray& into) override;
  void allow_grouped_hand_overs(bool allowed) override { grouped_hand_overs_ = allowed; }

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

  CudaContext& context_;
  DeviceMemory& memory_;
  HostLink& link_;
  HostMemory staging_memory_;  // the staged communication's host copies
  HostCollectives staging_;    // runs the staged communication
  // Pipeline hand-overs with NCCL on device memory, where the plan's complete in groups.
  bool grouped_hand_overs_ = false;
  NcclHandOvers hand_over_transport_;
  GroupedHandOvers hand_overs_{hand_over_transport_};
};

}  // namespace splitbrain::exec::cuda
