#pragma once
// The MPI collective engine: every operation of collective_engine.h on the group's communicator
// from MeshCommunicators, on host memory. The blocking kinds are collective_ops.h; the bucket
// reductions are MPI_Iallreduce and MPI_Ireduce_scatter_block, progressed by MPI_Test and by the
// process's progress pump (progress_pump.h) while in flight.

#include "exec/comm/collective_engine.h"

namespace splitbrain::exec::comm {

class MpiCollectives final : public CollectiveEngine {
 public:
  explicit MpiCollectives(MeshCommunicators& communicators) : CollectiveEngine(communicators) {}

  LocalBytes all_gather(const std::vector<int>& axes, const LocalBytes& input, int dim) override;
  LocalArray all_gather_floats(const std::vector<int>& axes, const LocalArray& input, int dim) override;
  LocalArray reduce_scatter(const std::vector<int>& axes, const LocalArray& input, int dim) override;
  LocalArray all_reduce(const std::vector<int>& axes, const LocalArray& input) override;
  LocalBytes all_reduce_bf16(const std::vector<int>& axes, const LocalBytes& input) override;
  LocalBytes reduce_scatter_bf16(const std::vector<int>& axes, const LocalBytes& input, int dim) override;
  void all_reduce_statistics(const std::vector<int>& axes, std::span<double> values) override;
  LocalBytes all_to_all(const std::vector<int>& axes, const LocalBytes& input, int dim, int other_dim) override;
  LocalBytes halo_exchange(const std::vector<int>& axes, const LocalBytes& input, int dim, int64_t halo_rows) override;
  LocalBytes send_recv(const std::vector<int>& axes, const LocalBytes& input, int source, int destination) override;

  std::unique_ptr<PendingCollective> start_all_reduce(const std::vector<int>& axes, std::span<float> buffer) override;
  std::unique_ptr<PendingCollective> start_reduce_scatter(const std::vector<int>& axes, std::span<const float> input,
                                                          std::span<float> output) override;

 private:
  // The group's communicator, or MPI_COMM_NULL for a group of one (nothing to talk to).
  MPI_Comm comm_for(const std::vector<int>& axes);
};

}  // namespace splitbrain::exec::comm
