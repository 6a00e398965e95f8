#include "exec/comm/pipeline_message.h"

#include "exec/comm/mpi_check.h"
#include "exec/comm/progress_pump.h"

namespace splitbrain::exec::comm {
namespace {

class PendingMessage final : public PendingCollective {
 public:
  // A message the transport took whole (under its eager limit) is complete at once and needs no
  // pump; only one still in flight starts it.
  explicit PendingMessage(MPI_Request request) : request_(request) {
    if (!test()) progress_ = keep_mpi_progressing();
  }
  ~PendingMessage() override {
    // Abandoned while an exception unwinds: the message may still read the buffer, so it must
    // complete before the caller frees it (MPI_Cancel of a send is deprecated).
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  bool test() override {
    int done = 0;
    if (request_ != MPI_REQUEST_NULL) SB_MPI_CHECK(MPI_Test(&request_, &done, MPI_STATUS_IGNORE));
    if (request_ == MPI_REQUEST_NULL) progress_ = {};
    return request_ == MPI_REQUEST_NULL;
  }
  void wait() override {
    if (request_ != MPI_REQUEST_NULL) SB_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
    progress_ = {};
  }

 private:
  MPI_Request request_;
  ProgressHold progress_;  // while in flight
};

}  // namespace

std::unique_ptr<PendingCollective> start_message(std::span<const float> values, int destination, int tag,
                                                 MPI_Comm comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Isend(values.data(), static_cast<int>(values.size()), MPI_FLOAT, destination, tag, comm, &request));
  return std::make_unique<PendingMessage>(request);
}

void receive_message(std::span<float> into, int source, int tag, MPI_Comm comm) {
  SB_MPI_CHECK(MPI_Recv(into.data(), static_cast<int>(into.size()), MPI_FLOAT, source, tag, comm, MPI_STATUS_IGNORE));
}

}  // namespace splitbrain::exec::comm
