#pragma once
// The algorithm Open MPI's blocking reduce-scatter (MPI_Reduce_scatter_block: a redistribution
// that sums partial results) runs, set in the environment before MPI_Init.
//
// Why: Open MPI 4.1's fixed decision (coll tuned) runs the basic linear algorithm for large
// blocks: the whole buffer reduced to one root, then scattered from it, so 2 ranks move 1.5x the
// buffer where halving moves 0.5x. Recursive halving moves each byte once. Measured with the plain
// MPI calls (median of 10; `tools/emulate-nodes.sh`, 1 Gb/s, 0.1 ms; AMD EPYC host):
//
//   buffer       2 nodes x 1 rank                     2 nodes x 2 ranks
//                decision  halving   all-gather       decision  halving   all-gather
//   256 KiB      4.2 ms    1.8 ms    1.7 ms           3.4 ms    3.2 ms    2.9 ms
//   1 MiB        14.0 ms   5.7 ms    5.0 ms           11.3 ms   10.9 ms   10.4 ms
//   4 MiB        53.0 ms   21.4 ms   18.5 ms          93.6 ms   43.2 ms   36.2 ms
//
// It also let `calibrate` mislead the cost model: it fits the level between hosts with one rank per
// host, where the decision runs basic linear (3x slower than an all-gather of the same buffer), and
// a 4-rank group's reduce-scatter, which the decision runs by halving, was priced at that rate.
// With one algorithm at every size and group, a reduce-scatter costs about what its all-gather
// does, and the simulator prices both by the same rounds (sim/collective_cost.cc).

namespace splitbrain::exec::comm {

// Open MPI's number for recursive halving (`ompi_info --param coll tuned --level 9`).
inline constexpr const char* kRecursiveHalving = "3";

// Sets OMPI_MCA_coll_tuned_reduce_scatter_block_algorithm to recursive halving and
// OMPI_MCA_coll_tuned_use_dynamic_rules (which Open MPI needs to honour a forced algorithm; with
// no rules file the other collectives keep the fixed decision) to 1 in this process's environment.
// Leaves both alone where the user chose: an algorithm given, or dynamic rules turned off
// (`mpirun --mca` passes its values in the environment). Call before MPI_Init.
void choose_reduce_scatter_algorithm();

}  // namespace splitbrain::exec::comm
