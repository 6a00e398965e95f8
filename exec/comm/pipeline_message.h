#pragma once
// A pipeline stage's hand-over on host memory: the sender starts an MPI_Isend and goes on
// computing, the receiver takes the message with a blocking MPI_Recv. The cpu backend's
// pipeline runs these, and `calibrate` times them (the overhead of a message on each host).

#include <mpi.h>

#include <memory>
#include <span>

#include "exec/comm/collective_engine.h"

namespace splitbrain::exec::comm {

// Starts sending `values` to `destination` with `tag` over `comm`. The progress pump runs until
// the returned operation completes (over TCP a message moves only inside MPI calls), and
// `values` must stay alive until then.
std::unique_ptr<PendingCollective> start_message(std::span<const float> values, int destination, int tag,
                                                 MPI_Comm comm);

// Receives exactly `into.size()` floats from `source` with `tag` over `comm`.
void receive_message(std::span<float> into, int source, int tag, MPI_Comm comm);

}  // namespace splitbrain::exec::comm
