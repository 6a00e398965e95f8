#include "sim/collective_algorithm.h"

#include <array>
#include <stdexcept>
#include <string>
#include <utility>

namespace splitbrain::sim {
namespace {
using plans::CollectiveKind;

constexpr std::array<std::pair<Algorithm, std::string_view>, 8> kAlgorithmNames = {{
    {Algorithm::ring, "ring"},
    {Algorithm::tree, "tree"},
    {Algorithm::recursive_doubling, "recursive_doubling"},
    {Algorithm::bruck, "bruck"},
    {Algorithm::hierarchical, "hierarchical"},
    {Algorithm::pairwise, "pairwise"},
    {Algorithm::rabenseifner, "rabenseifner"},
    {Algorithm::by_size, "by_size"},
}};

[[noreturn]] void no_algorithm(CollectiveKind kind) {
  throw std::invalid_argument("collective kind '" + std::string(plans::collective_name(kind)) +
                              "' is point-to-point and has no algorithm choice");
}
}  // namespace

std::string_view algorithm_name(Algorithm algorithm) {
  for (const auto& [a, name] : kAlgorithmNames) {
    if (a == algorithm) return name;
  }
  return "unknown";
}

std::optional<Algorithm> algorithm_from_name(std::string_view name) {
  for (const auto& [a, n] : kAlgorithmNames) {
    if (n == name) return a;
  }
  return std::nullopt;
}

bool algorithm_supports(Algorithm algorithm, CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      return algorithm != Algorithm::pairwise && algorithm != Algorithm::rabenseifner &&
             algorithm != Algorithm::by_size;
    case CollectiveKind::all_reduce:
      return algorithm != Algorithm::pairwise;
    case CollectiveKind::all_to_all:
      return algorithm == Algorithm::pairwise || algorithm == Algorithm::bruck;
    case CollectiveKind::halo_exchange:
    case CollectiveKind::send_recv:
      return false;
  }
  return false;
}

namespace {
// One mapping from kind to member for both the const and the mutable accessor.
template <class Algorithms>
auto& algorithm_for(Algorithms& algorithms, CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_gather:
      return algorithms.all_gather;
    case CollectiveKind::reduce_scatter:
      return algorithms.reduce_scatter;
    case CollectiveKind::all_reduce:
      return algorithms.all_reduce;
    case CollectiveKind::all_to_all:
      return algorithms.all_to_all;
    case CollectiveKind::halo_exchange:
    case CollectiveKind::send_recv:
      break;
  }
  no_algorithm(kind);
}
}  // namespace

Algorithm CollectiveAlgorithms::for_kind(CollectiveKind kind) const { return algorithm_for(*this, kind); }
Algorithm& CollectiveAlgorithms::for_kind(CollectiveKind kind) { return algorithm_for(*this, kind); }

}  // namespace splitbrain::sim
