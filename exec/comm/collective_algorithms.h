#pragma once
// The collective algorithms Open MPI runs for the executor, chosen before MPI_Init.
//
// Why: Open MPI 4.1's non-blocking all-reduce (libnbc, what the gradient buckets run) picks a
// binomial tree for every group of fewer than 4 ranks and for every in-place call: the whole
// buffer goes to a root and the sum comes back, one direction at a time. Over a 1 Gb/s link
// between 2 emulated nodes a 16 MiB MPI_Iallreduce took 265 ms where the blocking MPI_Allreduce
// (ring) took 146 ms, so gradient sync ran at half the rate that `calibrate` measured and the
// simulator priced. Rabenseifner's (reduce-scatter by recursive halving, then all-gather) moves
// each byte once in each direction and took 141 ms there, and 157 ms against the binomial tree's
// 386 ms on 2 nodes x 2 ranks. It needs a commutative operation (a sum) and falls back to a ring
// for buffers shorter than the group.
//
// A value the user gave (OMPI_MCA_* in the environment, which `mpirun --mca` also sets) is kept.

#include <string>
#include <vector>

namespace splitbrain::exec::comm {

// One Open MPI parameter the executor sets when the user did not.
struct MpiParameterDefault {
  std::string name;   // the MCA parameter, e.g. "coll_libnbc_iallreduce_algorithm"
  std::string value;  // as Open MPI reads it from OMPI_MCA_<name>
};

// The parameters, in the order they are set.
const std::vector<MpiParameterDefault>& mpi_parameter_defaults();

// Sets OMPI_MCA_<name> for each default whose variable is unset. Call before MPI_Init: Open MPI
// reads the environment there. Returns the names it set (the others were the user's).
std::vector<std::string> choose_collective_algorithms();

}  // namespace splitbrain::exec::comm
