#pragma once
// How `splitbrain calibrate` runs the collectives it times: through the executor's MPI code on
// host arrays (the cpu backend's), or with NCCL on device buffers (the cuda backend's,
// nccl_collective_transport.h). collective_calibration.cc times and fits; a transport only runs.

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>

#include "exec/comm/mpi_check.h"
#include "plans/collective_kind.h"

namespace splitbrain::tools {

// Runs `calls` collectives back to back and returns once they have all finished.
using TimedCalls = std::function<void(int calls)>;

class CollectiveTransport {
 public:
  virtual ~CollectiveTransport() = default;

  // "the executor's MPI code", "NCCL on the ranks' GPUs": for the progress lines and the cluster
  // file's sources.
  virtual std::string name() const = 0;

  // The calls of one timed run of `kind` over `comm` on a buffer of `bytes`, as the simulator
  // counts a collective's buffer: the whole reduced or gathered tensor, a rank's whole local
  // buffer for all-to-all, the message for send/recv (member 0 to member 1; with `round_trip` each
  // call also sends it back). Buffers are made here, once, so the timed calls run the collective
  // and nothing else. Collective over `comm`; `bytes` a multiple of 4 * size of `comm`.
  TimedCalls prepare(plans::CollectiveKind kind, MPI_Comm comm, int64_t bytes, bool round_trip) {
    Group group{comm, 0, 1};
    SB_MPI_CHECK(MPI_Comm_rank(comm, &group.rank));
    SB_MPI_CHECK(MPI_Comm_size(comm, &group.size));
    return prepare_in(kind, group, bytes, round_trip);
  }

 protected:
  // The communicator a run is timed over, and this rank's place in it.
  struct Group {
    MPI_Comm comm;
    int rank;
    int size;
  };
  // prepare's work, once the group is known.
  virtual TimedCalls prepare_in(plans::CollectiveKind kind, const Group& group, int64_t bytes, bool round_trip) = 0;
};

// The executor's MPI code (exec/comm/collective_ops.h) on host arrays. Stateless; one for all.
CollectiveTransport& mpi_collective_transport();

}  // namespace splitbrain::tools
