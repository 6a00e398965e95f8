#include "tests/exec/equivalence/synchronous_hand_overs.h"

#include <mpi.h>

#include <climits>
#include <stdexcept>
#include <utility>

#include "exec/comm/mpi_check.h"
#include "exec/comm/progress_pump.h"
#include "exec/runtime/host_array.h"

namespace splitbrain::equivalence {
namespace {

// The one tag of every hand-over: NCCL has none, so nothing may depend on one.
constexpr int kHandOverTag = 11;

int float_count(const exec::DeviceArray& array) {
  if (array.elements() > INT_MAX) throw std::length_error("hand-over: more elements than MPI's int count");
  return static_cast<int>(array.elements());
}

class PostedGroup final : public exec::comm::PendingCollective {
 public:
  explicit PostedGroup(std::vector<MPI_Request> requests) : requests_(std::move(requests)) {}
  ~PostedGroup() override {
    // Abandoned while an exception unwinds: the messages may still use the arrays.
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
  }
  bool test() override {
    int done = 0;
    SB_MPI_CHECK(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &done, MPI_STATUSES_IGNORE));
    if (done != 0) progress_ = {};
    return done != 0;
  }
  void wait() override {
    SB_MPI_CHECK(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE));
    progress_ = {};
  }

 private:
  std::vector<MPI_Request> requests_;
  exec::comm::ProgressHold progress_ = exec::comm::keep_mpi_progressing();  // until matched
};

}  // namespace

std::unique_ptr<exec::comm::PendingCollective> SynchronousMpiHandOvers::post(exec::comm::CollectiveEngine& engine,
                                                                             const std::vector<int>& axes,
                                                                             std::span<const exec::HandOver> group) {
  const MPI_Comm comm = engine.communicators().get(axes);
  std::vector<MPI_Request> requests(group.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < group.size(); ++i) {
    const exec::HandOver& message = group[i];
    if (message.send != nullptr) {
      const std::vector<float>& values = exec::HostArray::storage(*message.send).values;
      SB_MPI_CHECK(MPI_Issend(values.data(), float_count(*message.send), MPI_FLOAT, message.peer, kHandOverTag, comm,
                              &requests[i]));
    } else {
      std::vector<float>& values = exec::HostArray::storage(*message.receive).values;
      SB_MPI_CHECK(MPI_Irecv(values.data(), float_count(*message.receive), MPI_FLOAT, message.peer, kHandOverTag, comm,
                             &requests[i]));
    }
  }
  return std::make_unique<PostedGroup>(std::move(requests));
}

}  // namespace splitbrain::equivalence
