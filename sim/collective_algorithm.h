#pragma once
// Which algorithm a cluster's communication library uses for each collective kind. The cost
// formulas live in sim/collective_cost.cc; this file only names the algorithms and says which
// collective kinds each one implements.

#include <optional>
#include <string_view>

#include "plans/collective_kind.h"

namespace splitbrain::sim {

enum class Algorithm {
  ring,                // n-1 (or 2(n-1)) neighbour steps; bandwidth-optimal, latency linear in n
  tree,                // binomial tree: reduce/gather to a root, then broadcast/scatter
  recursive_doubling,  // log2 n pairwise exchange rounds (recursive halving for reduce-scatter)
  bruck,               // Bruck et al.: ceil(log2 n) rounds at optimal volume; all-reduce = RS + AG
  hierarchical,        // reduce-scatter inside each level, all-reduce across the top, all-gather back
  pairwise,            // all-to-all only: n-1 rounds, in round k rank i sends to rank i+k
  rabenseifner,        // all-reduce only: recursive halving reduce-scatter (distance 1 first), all-gather back
  by_size,             // all-reduce only: recursive doubling or Rabenseifner's by the buffer's size, as the
                       // MPI executor requests them (plans/all_reduce_algorithm.h)
};

std::string_view algorithm_name(Algorithm algorithm);  // "ring", "tree", ...
std::optional<Algorithm> algorithm_from_name(std::string_view name);

// Whether `algorithm` implements `kind`. all_gather, reduce_scatter and all_reduce take ring,
// tree, recursive_doubling, bruck or hierarchical, all_reduce also rabenseifner and by_size;
// all_to_all takes pairwise or bruck;
// halo_exchange and send_recv are point-to-point and take no algorithm (always false).
bool algorithm_supports(Algorithm algorithm, plans::CollectiveKind kind);

// The collective kinds that a cluster assigns an algorithm to, in file order.
inline constexpr plans::CollectiveKind kAlgorithmKinds[] = {
    plans::CollectiveKind::all_gather,
    plans::CollectiveKind::reduce_scatter,
    plans::CollectiveKind::all_reduce,
    plans::CollectiveKind::all_to_all,
};

// One algorithm per collective kind that has a choice.
struct CollectiveAlgorithms {
  Algorithm all_gather = Algorithm::ring;
  Algorithm reduce_scatter = Algorithm::ring;
  Algorithm all_reduce = Algorithm::ring;
  Algorithm all_to_all = Algorithm::pairwise;

  // The algorithm for `kind`; throws std::invalid_argument for halo_exchange and send_recv.
  Algorithm for_kind(plans::CollectiveKind kind) const;
  Algorithm& for_kind(plans::CollectiveKind kind);

  bool operator==(const CollectiveAlgorithms&) const = default;
};

}  // namespace splitbrain::sim
