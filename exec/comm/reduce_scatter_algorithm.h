#pragma once
// The algorithm Open MPI's blocking reduce-scatter (MPI_Reduce_scatter_block: a redistribution
// that sums partial results) runs, set in the environment before MPI_Init.
//
// Why: Open MPI 4.1's fixed decision (coll tuned) runs the basic linear algorithm for large
// blocks: the whole buffer reduced to one root, then scattered from it, so 2 ranks move 1.5x the
// buffer where halving moves 0.5x. Recursive halving moves each byte once. Measured with the plain
// MPI calls (`tools/emulate-nodes.sh`, 1 Gb/s links): from 256 KiB to 4 MiB halving took 2.3-2.5x
// less time than the decision's choice on 2 nodes x 1 rank and up to 2.2x less on 2 x 2, within
// 20% of an all-gather of the same buffer throughout.
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
