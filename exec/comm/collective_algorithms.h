#pragma once
// The algorithm Open MPI's non-blocking all-reduce (libnbc, which every all-reduce of the executor
// runs: gradient buckets and in-step sums alike) uses for one call, chosen by the buffer's size.
//
// Why: left to itself, Open MPI 4.1's libnbc runs a binomial tree for every group under 4 ranks and
// every in-place call: the whole buffer to a root and the sum back, one direction at a time (over a
// 1 Gb/s link between 2 emulated nodes, 16 MiB took 1.8x the blocking ring's time).
// No one algorithm suits every size either. Rabenseifner's (reduce-scatter by recursive halving,
// then all-gather) moves each byte once each way, but takes two rounds per doubling of the group;
// recursive doubling takes one, sending the whole buffer in each. Measured with the plain MPI calls
// (`tools/emulate-nodes.sh`, 1 Gb/s links, and one node over shared memory): up to 32 KiB recursive
// doubling is as fast or up to 2.6x faster; at 4 MiB Rabenseifner's is as fast with one rank per
// node and 1.8-2.6x faster with two ranks per node or over shared memory.
//
// So small buffers (latency-bound: the gradient buckets of a small model, tensor-parallel sums)
// run recursive doubling and larger ones Rabenseifner's (plans/all_reduce_algorithm.h, which the
// simulator's `by_size` algorithm prices round by round). The choice is written, per call, into
// libnbc's control variable through the MPI tool interface (MPI_T); libnbc reads it when the call
// builds its schedule, and it holds its former value again once the call has started: Open MPI
// runs all-reduces of its own (a new communicator's id is agreed on by one), and ranks whose last
// bucket sizes differed would run different algorithms there and wait for each other forever. A
// value the user gave (OMPI_MCA_coll_libnbc_iallreduce_algorithm in the environment, which
// `mpirun --mca` also sets) is kept for every call.

#include <mpi.h>

#include <cstdint>

#include "plans/all_reduce_algorithm.h"

namespace splitbrain::exec::comm {

using plans::AllReduceAlgorithm;

// libnbc's number for `algorithm` (`ompi_info --param coll libnbc --level 9`).
int libnbc_algorithm_number(AllReduceAlgorithm algorithm);

// Writes libnbc's all-reduce algorithm before each call. Call after MPI_Init, from the thread that
// starts collectives.
class AllReduceAlgorithmSwitch {
 public:
  // `keep_users_choice`: leave libnbc's variable as the user set it. Otherwise opens a handle on
  // the variable; where this MPI has none (not Open MPI, no libnbc), says so once on stderr and
  // leaves the MPI's own choice.
  explicit AllReduceAlgorithmSwitch(bool keep_users_choice);
  ~AllReduceAlgorithmSwitch();
  AllReduceAlgorithmSwitch(const AllReduceAlgorithmSwitch&) = delete;
  AllReduceAlgorithmSwitch& operator=(const AllReduceAlgorithmSwitch&) = delete;

  // Sets the algorithm MPI_Iallreduce calls run to the one for `bytes`, until restore().
  void select_for(int64_t bytes);
  // Sets the variable back to its value when the switch was made.
  void restore();
  // Whether select_for changes anything.
  bool active() const { return handle_ != nullptr; }

 private:
  MPI_T_cvar_handle handle_ = nullptr;
  int original_ = 0;  // the variable's value when the switch was made
};

// The process's switch, keeping the user's choice where the environment holds one.
AllReduceAlgorithmSwitch& process_all_reduce_switch();

// MPI_Iallreduce of `count` floats summed over `comm` (`send` may be MPI_IN_PLACE), with the
// algorithm for its size.
void start_float_sum_all_reduce(const void* send, float* receive, int count, MPI_Comm comm, MPI_Request* request);

}  // namespace splitbrain::exec::comm
