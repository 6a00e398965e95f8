#pragma once
// The communication side of `splitbrain calibrate`: every collective the runtime runs (all-reduce,
// all-gather, reduce-scatter, all-to-all, send/recv) as the backend runs it (the executor's MPI
// code, or NCCL on device buffers: collective_transport.h), from 8 B to 64 MiB, printed as
// nccl-tests prints them; a latency and bandwidth fitted per kind with the simulator's own formula
// for it; and how much of a gradient all-reduce over MPI hides behind compute on the CPU.

#include <mpi.h>

#include <map>

#include "plans/collective_kind.h"
#include "sim/cluster.h"
#include "tools/training/collective_transport.h"

namespace splitbrain::tools {

struct CollectiveCalibration {
  int repeats = 5;
  bool print = true;                         // rank 0 prints every measurement
  CollectiveTransport* transport = nullptr;  // null: the executor's MPI code
};

struct MeasuredCommunication {
  std::map<plans::CollectiveKind, sim::Link> links;  // fitted per kind
  // The all-reduce's own link, for the level's default (kinds the runtime never runs).
  sim::Link all_reduce_link;
};

// Collective over `comm` (at least two ranks). `cluster` gives the algorithm per kind, whose
// formula (sim/collective_cost) the fits use, so the simulator reproduces the measured times.
MeasuredCommunication calibrate_collectives(const CollectiveCalibration& options, MPI_Comm comm,
                                            const sim::Cluster& cluster);

// The share of a gradient all-reduce over `comm` that compute on its ranks hides, in [0, 1]
// (sim::Cluster::communication_overlap): a 16 MiB MPI_Iallreduce against about as long of
// convolutions, each alone and both at once. Collective over `comm`; ranks outside it may run
// their own at the same time, as a step's data-parallel groups do. `print`: this rank prints.
double measure_overlap(const CollectiveCalibration& options, MPI_Comm comm, bool print);

}  // namespace splitbrain::tools
