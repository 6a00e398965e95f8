// The MPI transport of calibrate's collectives (collective_transport.h): the runtime's own calls.

#include <memory>
#include <vector>

#include "exec/comm/collective_ops.h"
#include "exec/comm/local_array.h"
#include "exec/comm/mpi_check.h"
#include "tools/training/collective_transport.h"

namespace splitbrain::tools {
namespace {

using plans::CollectiveKind;
namespace ops = exec::comm::ops;

// The input of one call of `kind` on a buffer of `bytes` (collective_transport.h says which).
struct CollectiveInput {
  exec::comm::LocalArray floats;  // reductions
  exec::comm::LocalBytes bytes;   // data movement

  CollectiveInput(CollectiveKind kind, int n, int64_t buffer_bytes) {
    switch (kind) {
      case CollectiveKind::all_reduce:
      case CollectiveKind::reduce_scatter:
        floats = {{buffer_bytes / 4}, std::vector<float>(static_cast<size_t>(buffer_bytes / 4), 1.0f)};
        break;
      case CollectiveKind::all_gather:
        bytes = {{buffer_bytes / n}, 1, std::vector<std::byte>(static_cast<size_t>(buffer_bytes / n))};
        break;
      case CollectiveKind::all_to_all:
        bytes = {{1, buffer_bytes}, 1, std::vector<std::byte>(static_cast<size_t>(buffer_bytes))};
        break;
      default:
        bytes = {{buffer_bytes}, 1, std::vector<std::byte>(static_cast<size_t>(buffer_bytes))};
        break;
    }
  }
};

void run_once(CollectiveKind kind, MPI_Comm comm, int n, int me, const CollectiveInput& input) {
  switch (kind) {
    case CollectiveKind::all_reduce:
      ops::all_reduce(comm, n, input.floats);
      return;
    case CollectiveKind::reduce_scatter:
      ops::reduce_scatter(comm, n, input.floats, 0);
      return;
    case CollectiveKind::all_gather:
      ops::all_gather(comm, n, input.bytes, 0);
      return;
    case CollectiveKind::all_to_all:
      ops::all_to_all(comm, n, input.bytes, 0, 1);
      return;
    case CollectiveKind::send_recv:
      ops::send_recv(comm, me, input.bytes, 0, 1);
      return;
    case CollectiveKind::halo_exchange:
      break;
  }
}

class MpiCollectiveTransport final : public CollectiveTransport {
 public:
  std::string name() const override { return "the executor's MPI code"; }

  TimedCalls prepare_in(CollectiveKind kind, const Group& group, int64_t bytes, bool round_trip) override {
    const MPI_Comm comm = group.comm;
    const int me = group.rank;
    const int n = group.size;
    auto input = std::make_shared<const CollectiveInput>(kind, n, bytes);
    return [=](int calls) {
      for (int call = 0; call < calls; ++call) {
        run_once(kind, comm, n, me, *input);
        if (round_trip && kind == CollectiveKind::send_recv) ops::send_recv(comm, me, input->bytes, 1, 0);
      }
    };
  }
};

}  // namespace

CollectiveTransport& mpi_collective_transport() {
  static MpiCollectiveTransport transport;
  return transport;
}

}  // namespace splitbrain::tools
