#include "exec/comm/mpi_collectives.h"

#include <fmt/format.h>

#include <climits>
#include <stdexcept>

#include "exec/comm/bf16_reductions.h"
#include "exec/comm/collective_algorithms.h"
#include "exec/comm/collective_ops.h"
#include "exec/comm/mpi_check.h"
#include "exec/comm/progress_pump.h"

namespace splitbrain::exec::comm {
namespace {

// One MPI request; the caller's buffers are the operation's.
class MpiPending final : public PendingCollective {
 public:
  // A request still open when its owner goes (an exception unwinding the step) is left alone:
  // MPI forbids freeing a non-blocking collective's request, and waiting could hang a rank whose
  // job the top level is about to end (comm::abort_job).
  MPI_Request* request() { return &request_; }

  bool test() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int done = 0;
    SB_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
    if (done != 0) progress_ = {};
    return done != 0;
  }
  void wait() override {
    SB_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
    progress_ = {};
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
  ProgressHold progress_ = keep_mpi_progressing();  // until complete
};

// MPI 3.1 counts are int; a larger array is refused rather than silently truncated.
int mpi_count(size_t count, const char* what) {
  if (count > static_cast<size_t>(INT_MAX)) {
    throw std::length_error(fmt::format("{}: {} elements exceed MPI's int count", what, count));
  }
  return static_cast<int>(count);
}

}  // namespace

MPI_Comm MpiCollectives::comm_for(const std::vector<int>& axes) {
  return group_size(axes) == 1 ? MPI_COMM_NULL : communicators().get(axes);
}

LocalBytes MpiCollectives::all_gather(const std::vector<int>& axes, const LocalBytes& input, int dim) {
  return ops::all_gather(comm_for(axes), group_size(axes), input, dim);
}

LocalArray MpiCollectives::all_gather_floats(const std::vector<int>& axes, const LocalArray& input, int dim) {
  return ops::all_gather(comm_for(axes), group_size(axes), input, dim);
}

LocalArray MpiCollectives::reduce_scatter(const std::vector<int>& axes, const LocalArray& input, int dim) {
  return ops::reduce_scatter(comm_for(axes), group_size(axes), input, dim);
}

LocalArray MpiCollectives::all_reduce(const std::vector<int>& axes, const LocalArray& input) {
  return ops::all_reduce(comm_for(axes), group_size(axes), input);
}

LocalBytes MpiCollectives::all_reduce_bf16(const std::vector<int>& axes, const LocalBytes& input) {
  return ops::all_reduce_bf16(comm_for(axes), group_size(axes), input);
}

LocalBytes MpiCollectives::reduce_scatter_bf16(const std::vector<int>& axes, const LocalBytes& input, int dim) {
  return ops::reduce_scatter_bf16(comm_for(axes), group_size(axes), input, dim);
}

void MpiCollectives::all_reduce_statistics(const std::vector<int>& axes, std::span<double> values) {
  if (group_size(axes) == 1) return;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values.data(), mpi_count(values.size(), "all_reduce_statistics"), MPI_DOUBLE,
                             MPI_SUM, communicators().get(axes)));
}

LocalBytes MpiCollectives::all_to_all(const std::vector<int>& axes, const LocalBytes& input, int dim, int other_dim) {
  return ops::all_to_all(comm_for(axes), group_size(axes), input, dim, other_dim);
}

LocalBytes MpiCollectives::halo_exchange(const std::vector<int>& axes, const LocalBytes& input, int dim,
                                         int64_t halo_rows) {
  return ops::halo_exchange(comm_for(axes), group_size(axes), member(axes), input, dim, halo_rows);
}

LocalBytes MpiCollectives::send_recv(const std::vector<int>& axes, const LocalBytes& input, int source,
                                     int destination) {
  return ops::send_recv(comm_for(axes), member(axes), input, source, destination);
}

std::unique_ptr<PendingCollective> MpiCollectives::start_all_reduce(const std::vector<int>& axes,
                                                                    std::span<float> buffer) {
  auto pending = std::make_unique<MpiPending>();
  start_float_sum_all_reduce(MPI_IN_PLACE, buffer.data(), mpi_count(buffer.size(), "start_all_reduce"),
                             communicators().get(axes), pending->request());
  return pending;
}

std::unique_ptr<PendingCollective> MpiCollectives::start_reduce_scatter(const std::vector<int>& axes,
                                                                        std::span<const float> input,
                                                                        std::span<float> output) {
  auto pending = std::make_unique<MpiPending>();
  // Member i of the group's communicator receives the i-th contiguous piece, as in the blocking
  // reduce-scatter of a flat buffer.
  SB_MPI_CHECK(MPI_Ireduce_scatter_block(input.data(), output.data(), mpi_count(output.size(), "start_reduce_scatter"),
                                         MPI_FLOAT, MPI_SUM, communicators().get(axes), pending->request()));
  return pending;
}

}  // namespace splitbrain::exec::comm
