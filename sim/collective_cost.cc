#include "sim/collective_cost.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "plans/all_reduce_algorithm.h"

namespace splitbrain::sim {
namespace {
using plans::CollectiveKind;

// Notation in the formulas below: n ranks, S = buffer_bytes in nccl-tests' convention,
// alpha = link latency (s), beta = 1 / link bandwidth (s/byte), L = ceil(log2 n) rounds.
// Sources:
//   [TRG05] Thakur, Rabenseifner, Gropp, "Optimization of Collective Communication Operations
//           in MPICH", IJHPCA 19(1), 2005 - ring, recursive doubling/halving, binomial tree,
//           pairwise and Bruck all-to-all, Rabenseifner's reduce-scatter + all-gather.
//   [BHK97] Bruck, Ho, Kipnis, Upfal, Weathersby, "Efficient algorithms for all-to-all
//           communications in multiport message-passing systems", IEEE TPDS 8(11), 1997.
//   [PY09]  Patarasuk, Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
//           workstations", JPDC 69(2), 2009 - ring all-reduce 2(n-1)/n * S.
//   [GAJKB18] Gholami et al., SPAA 2018 - all-gather alpha*ceil(log P) + beta*(P-1)/P*n,
//           all-reduce counted as twice that.
// The reduction arithmetic (gamma terms) is left out: it overlaps with communication on GPUs
// and is small next to beta on every cluster we ship.

int ceil_log2(int n) {
  int rounds = 0;
  for (int64_t reach = 1; reach < n; reach *= 2) ++rounds;
  return rounds;
}

// all-gather and reduce-scatter have the same cost under every algorithm here: reduce-scatter
// is all-gather run backwards (the same messages in reverse, with a reduction) [TRG05].
double gather_like_seconds(Algorithm algorithm, double n, double rounds, double s, double alpha, double beta) {
  const double spread = (n - 1.0) / n * s * beta;  // every rank receives (or sends) all but its own S/n
  switch (algorithm) {
    case Algorithm::ring:
      // (n-1) alpha + (n-1)/n S beta  [TRG05 ring all-gather; nccl-tests busbw factor (n-1)/n]
      return (n - 1.0) * alpha + spread;
    case Algorithm::recursive_doubling:
    case Algorithm::bruck:
      // L alpha + (n-1)/n S beta  [TRG05 recursive doubling / halving for powers of two;
      // BHK97 for any n; GAJKB18's all-gather]. For n not a power of two MPICH's recursive
      // doubling needs extra steps; we charge Bruck's L rounds, a lower bound.
      return rounds * alpha + spread;
    case Algorithm::tree:
      // Binomial gather to a root then binomial broadcast of S [TRG05]:
      // (L alpha + (n-1)/n S beta) + L (alpha + S beta). Reduce-scatter: reduce then scatter.
      return rounds * alpha + spread + rounds * (alpha + s * beta);
    case Algorithm::hierarchical:
    case Algorithm::pairwise:
    case Algorithm::rabenseifner:
    case Algorithm::by_size:
      break;
  }
  throw std::logic_error("gather_like_seconds: not a flat all-gather algorithm");
}

double all_reduce_seconds(Algorithm algorithm, double n, double rounds, double s, double alpha, double beta) {
  switch (algorithm) {
    case Algorithm::ring:
      // Ring reduce-scatter then ring all-gather: 2(n-1) alpha + 2(n-1)/n S beta  [PY09; TRG05]
      return 2.0 * (n - 1.0) * alpha + 2.0 * (n - 1.0) / n * s * beta;
    case Algorithm::recursive_doubling:
      // Every round exchanges the whole vector: L (alpha + S beta)  [TRG05, short messages]
      return rounds * (alpha + s * beta);
    case Algorithm::bruck:
    case Algorithm::rabenseifner:
      // Rabenseifner: reduce-scatter + all-gather, each L alpha + (n-1)/n S beta, so twice the
      // all-gather [TRG05; GAJKB18 counts all-reduce as twice all-gather].
      return 2.0 * (rounds * alpha + (n - 1.0) / n * s * beta);
    case Algorithm::tree:
      // Binomial reduce then binomial broadcast of the whole vector: 2 L (alpha + S beta) [TRG05]
      return 2.0 * rounds * (alpha + s * beta);
    case Algorithm::hierarchical:
    case Algorithm::pairwise:
    case Algorithm::by_size:  // resolved by the caller
      break;
  }
  throw std::logic_error("all_reduce_seconds: not a flat all-reduce algorithm");
}

double all_to_all_seconds(Algorithm algorithm, double n, double rounds, double s, double alpha, double beta) {
  switch (algorithm) {
    case Algorithm::pairwise:
      // n-1 rounds, each sends one block of S/n: (n-1) alpha + (n-1)/n S beta  [TRG05]
      return (n - 1.0) * alpha + (n - 1.0) / n * s * beta;
    case Algorithm::bruck:
      // L rounds, each forwards about half the local buffer: L alpha + L S/2 beta  [BHK97; TRG05]
      return rounds * alpha + rounds * s / 2.0 * beta;
    default:
      break;
  }
  throw std::logic_error("all_to_all_seconds: not an all-to-all algorithm");
}

// Hierarchical all-gather (reduce-scatter is its mirror): going up from the innermost level,
// level i runs a ring all-gather among fan_in[i] members over its own link, on a buffer that
// shrinks by the fan-in of every level below: S_0 = S, S_{i+1} = S_i / fan_in[i]:
//   sum_i (k_i - 1) alpha_i + (k_i - 1)/k_i S_i beta_i,  k_i = fan_in[i].
// Two levels (k0 per node, k1 nodes): the inter-node step moves only S/k0, which is the point
// of the scheme (as in Jia et al. 2018, arXiv 1807.11205, and Horovod's hierarchical
// all-reduce). Ordering: the all-gather runs outer levels first on small pieces and inner
// levels last; the sum is the same.
double hierarchical_gather_seconds(const Cluster& cluster, const GroupShape& shape, double s, CollectiveKind kind,
                                   std::span<const int> groups_crossing) {
  const std::vector<Link> links = crossed_links(cluster, shape, kind, groups_crossing);
  auto next_link = links.begin();
  double seconds = 0.0;
  double level_bytes = s;
  for (int level = 0; level <= shape.spanned_level; ++level) {
    const double k = shape.fan_in[static_cast<size_t>(level)];
    if (k > 1.0) {
      const Link& link = *next_link++;
      seconds += (k - 1.0) * link.latency_seconds + (k - 1.0) / k * level_bytes / link.bandwidth_at(level_bytes);
    }
    level_bytes /= k;
  }
  return seconds;
}

// The logarithmic algorithms run as rounds of pairwise swaps: in the round at distance d every
// member j swaps with member j xor d, all pairs at once. What a member sends in that round:
//   all-gather by recursive doubling (reduce-scatter by recursive halving: the same rounds in
//   reverse): S d / n, the pieces it has gathered so far;
//   all-reduce by recursive doubling: the whole S, in every round;
//   all-reduce by Rabenseifner's algorithm: S / 2d, once in its reduce-scatter and once in its
//   all-gather. Open MPI (libnbc and coll/base alike) halves the vector at distance 1 first, so
//   with ranks numbered node-major the half that stays inside a node is the larger one.
// n a power of two.
double round_send_bytes(CollectiveKind kind, Algorithm algorithm, double n, double distance, double s) {
  if (kind != CollectiveKind::all_reduce) return s * distance / n;
  return algorithm == Algorithm::recursive_doubling ? s : s / (2.0 * distance);
}

// The rounds priced one by one over the hierarchy: each round over the link of the outermost
// level a pair crosses. Where that level's uplink is shared, the members that leave one unit in
// the round (times the other groups crossing with them) split its port: with nodes of k ranks
// numbered node-major, the rounds below k stay inside a node and each later one sends k streams
// through every node's port. So an all-gather of 4 ranks on 2 hosts moves S through a host's port
// where 2 ranks, one per host, move S / 2 (measured with Open MPI over 1 Gb/s: a 1 MiB all-gather
// and reduce-scatter take about twice as long; exec/comm/reduce_scatter_algorithm.h), while
// Rabenseifner's all-reduce moves S / 2 through it either way (4 MiB: within 10%;
// exec/comm/collective_algorithms.h), which the flat formula over the slowest link (3/2 S) misses.
double exchange_rounds_seconds(const Cluster& cluster, CollectiveKind kind, Algorithm algorithm,
                               std::span<const int> ranks, double s, std::span<const int> groups_crossing) {
  const size_t n = ranks.size();
  const double phases = algorithm == Algorithm::rabenseifner ? 2.0 : 1.0;
  double seconds = 0.0;
  for (size_t distance = 1; distance < n; distance *= 2) {
    std::vector<int> level_of_member(n);
    for (size_t j = 0; j < n; ++j) {
      const int pair[] = {ranks[j], ranks[j ^ distance]};
      level_of_member[j] = level_spanned(cluster, pair);
    }
    const int level = *std::max_element(level_of_member.begin(), level_of_member.end());
    const Level& crossed = cluster.levels[static_cast<size_t>(level)];
    double streams = 1.0;
    if (crossed.uplink_shared) {
      std::map<int64_t, int> leaving_unit;
      for (size_t j = 0; j < n; ++j) {
        if (level_of_member[j] == level)
          ++leaving_unit[unit_of_device(cluster, device_of_rank(cluster, ranks[j]), level - 1)];
      }
      for (const auto& [unit, members] : leaving_unit) streams = std::max(streams, static_cast<double>(members));
      if (!groups_crossing.empty()) streams *= std::max(1, groups_crossing[static_cast<size_t>(level)]);
    }
    const Link& link = crossed.link_for(kind);
    const double bytes = round_send_bytes(kind, algorithm, static_cast<double>(n), static_cast<double>(distance), s);
    seconds += phases * (link.latency_seconds + streams * bytes / link.bandwidth_at(s));
  }
  return seconds;
}

// Whether `algorithm` runs `kind` as exchange rounds (exchange_rounds_seconds).
bool runs_exchange_rounds(CollectiveKind kind, Algorithm algorithm) {
  if (kind == CollectiveKind::all_reduce)
    return algorithm == Algorithm::recursive_doubling || algorithm == Algorithm::rabenseifner;
  return algorithm == Algorithm::recursive_doubling &&
         (kind == CollectiveKind::all_gather || kind == CollectiveKind::reduce_scatter);
}

// `by_size` is the algorithm the executor requests for this many bytes; any other stays itself.
Algorithm resolved_algorithm(Algorithm algorithm, double buffer_bytes) {
  if (algorithm != Algorithm::by_size) return algorithm;
  return plans::all_reduce_algorithm(static_cast<int64_t>(buffer_bytes)) == plans::AllReduceAlgorithm::rabenseifner
             ? Algorithm::rabenseifner
             : Algorithm::recursive_doubling;
}

void check_bytes(int64_t bytes) {
  if (bytes < 0) throw std::invalid_argument(fmt::format("negative message size {} bytes", bytes));
}

}  // namespace

double flat_collective_seconds(CollectiveKind kind, Algorithm algorithm, int n, double buffer_bytes, const Link& link) {
  if (n <= 1 || buffer_bytes <= 0.0) return 0.0;
  const double ranks = n;
  const double rounds = ceil_log2(n);
  const double alpha = link.latency_seconds;
  const double beta = 1.0 / link.bandwidth_at(buffer_bytes);
  switch (kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return gather_like_seconds(algorithm, ranks, rounds, buffer_bytes, alpha, beta);
    case CollectiveKind::all_reduce:
      return all_reduce_seconds(resolved_algorithm(algorithm, buffer_bytes), ranks, rounds, buffer_bytes, alpha, beta);
    case CollectiveKind::all_to_all:
      return all_to_all_seconds(algorithm, ranks, rounds, buffer_bytes, alpha, beta);
    case CollectiveKind::halo_exchange:
    case CollectiveKind::send_recv:
      break;
  }
  throw std::invalid_argument("flat_collective_seconds: point-to-point kinds have no group formula");
}

double send_seconds(const Cluster& cluster, int from_rank, int to_rank, int64_t bytes) {
  check_bytes(bytes);
  const int pair[] = {from_rank, to_rank};
  if (from_rank == to_rank) {
    device_of_rank(cluster, from_rank);  // still reject a rank the cluster lacks
    return 0.0;
  }
  if (bytes == 0) {
    level_spanned(cluster, pair);
    return 0.0;
  }
  const Link& link =
      cluster.levels[static_cast<size_t>(level_spanned(cluster, pair))].link_for(CollectiveKind::send_recv);
  return link.latency_seconds + static_cast<double>(bytes) / link.bandwidth_at(static_cast<double>(bytes));
}

double halo_exchange_seconds(const Cluster& cluster, std::span<const int> ranks, int64_t bytes_per_neighbour) {
  check_bytes(bytes_per_neighbour);
  group_shape(cluster, ranks);  // validates ranks (range, no repeats)
  double slowest = 0.0;
  for (size_t i = 0; i + 1 < ranks.size(); ++i) {
    slowest = std::max(slowest, send_seconds(cluster, ranks[i], ranks[i + 1], bytes_per_neighbour));
  }
  return slowest;
}

double collective_seconds(const Cluster& cluster, CollectiveKind kind, Algorithm algorithm, std::span<const int> ranks,
                          int64_t buffer_bytes, std::span<const int> groups_crossing) {
  check_bytes(buffer_bytes);
  if (kind == CollectiveKind::halo_exchange) return halo_exchange_seconds(cluster, ranks, buffer_bytes);
  if (kind == CollectiveKind::send_recv) {
    // Two ranks: one message. More: a shift along the list (pipeline stage i to i+1), all
    // messages in flight at once, so the slowest pair sets the time.
    group_shape(cluster, ranks);
    double slowest = 0.0;
    for (size_t i = 0; i + 1 < ranks.size(); ++i) {
      slowest = std::max(slowest, send_seconds(cluster, ranks[i], ranks[i + 1], buffer_bytes));
    }
    return slowest;
  }
  if (!algorithm_supports(algorithm, kind)) {
    throw std::invalid_argument(
        fmt::format("algorithm '{}' does not implement {}", algorithm_name(algorithm), plans::collective_name(kind)));
  }
  const GroupShape shape = group_shape(cluster, ranks);
  if (shape.spanned_level < 0 || buffer_bytes == 0) return 0.0;
  const double s = static_cast<double>(buffer_bytes);
  algorithm = resolved_algorithm(algorithm, s);
  if (algorithm == Algorithm::hierarchical) {
    // all_reduce = hierarchical reduce-scatter + hierarchical all-gather: intra-level
    // reduce-scatter, the top level's ring all-reduce on S / (product of inner fan-ins),
    // intra-level all-gather. The top level's all-reduce is exactly its two ring halves.
    const double one_way = hierarchical_gather_seconds(cluster, shape, s, kind, groups_crossing);
    return kind == CollectiveKind::all_reduce ? 2.0 * one_way : one_way;
  }
  if (runs_exchange_rounds(kind, algorithm) && std::has_single_bit(ranks.size())) {
    return exchange_rounds_seconds(cluster, kind, algorithm, ranks, s, groups_crossing);
  }
  // A flat algorithm's step waits for its slowest hop, and a step's hops cross different levels,
  // each at its own latency and bandwidth: the step takes the longest of the levels' own
  // alpha + m beta. (Not the highest latency with the lowest bandwidth: no hop has both where an
  // inner level is slow to start and an outer one slow to stream, e.g. ranks sharing a core on
  // nodes joined by Ethernet.) Exact for the ring, whose every step crosses every level; for the
  // logarithmic algorithms, whose rounds cross one level each, a lower bound.
  double seconds = 0.0;
  for (const Link& link : crossed_links(cluster, shape, kind, groups_crossing)) {
    seconds = std::max(seconds, flat_collective_seconds(kind, algorithm, static_cast<int>(ranks.size()), s, link));
  }
  return seconds;
}

double collective_seconds(const Cluster& cluster, CollectiveKind kind, std::span<const int> ranks, int64_t buffer_bytes,
                          std::span<const int> groups_crossing) {
  if (kind == CollectiveKind::halo_exchange || kind == CollectiveKind::send_recv) {
    // Point to point: no algorithm to look up; pass any, it is not used.
    return collective_seconds(cluster, kind, Algorithm::ring, ranks, buffer_bytes);
  }
  return collective_seconds(cluster, kind, cluster.algorithms.for_kind(kind), ranks, buffer_bytes, groups_crossing);
}

}  // namespace splitbrain::sim
