#include "plans/collective_kind.h"

#include <array>
#include <utility>

namespace splitbrain::plans {
namespace {
constexpr std::array<std::pair<CollectiveKind, std::string_view>, 6> kNames = {{
    {CollectiveKind::all_gather, "all_gather"},
    {CollectiveKind::reduce_scatter, "reduce_scatter"},
    {CollectiveKind::all_reduce, "all_reduce"},
    {CollectiveKind::all_to_all, "all_to_all"},
    {CollectiveKind::halo_exchange, "halo_exchange"},
    {CollectiveKind::send_recv, "send_recv"},
}};
}  // namespace

std::string_view collective_name(CollectiveKind kind) {
  for (const auto& [k, name] : kNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

}  // namespace splitbrain::plans
