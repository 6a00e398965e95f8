#pragma once
// A pipeline message's host overheads over one level (sim::Level::send_overhead and
// receive_overhead: LogGP's o on the sender and on the receiver), measured through the
// executor's send and receive (exec/comm/pipeline_message.h) by two ranks exchanging messages as
// two pipeline stages do. Each computes a stretch of work in pieces (testing its pending send
// after each, as the executor after each layer), starts sending a message to the other, receives
// the one the other started a stretch earlier (arrived by then), and completes its own previous
// send. The overheads are the calls' times: the send's, and the receive's of an arrived message
// (its copy out of the transport). What the messages take from the work in between (the kernel's
// handling of TCP segments, the progress pump's turns on the core) is not counted.

#include <mpi.h>

#include "sim/cluster.h"

namespace splitbrain::tools {

struct MessageOverheads {
  sim::MessageOverhead send;
  sim::MessageOverhead receive;
};

// Collective over `pair` (exactly two ranks); both return the same overheads, fitted as seconds
// plus seconds per byte over messages of 2, 8 and 32 KiB (under TCP's 64 KiB eager limit: a
// larger receive holds the wire's time too). `link` is the level's, measured
// before: a stretch of work is long enough for a message to arrive within it. `repeats`: timed
// runs per size, the median kept. `print`: this rank prints each size's measurement.
MessageOverheads measure_message_overheads(MPI_Comm pair, const sim::Link& link, int repeats, bool print);

}  // namespace splitbrain::tools
