#include "sim/plan_collective_cost.h"

#include "sim/collective_cost.h"

namespace splitbrain::sim {

double plan_collective_seconds(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective,
                               int rank) {
  const std::vector<int> group = mesh.group(rank, collective.axes);
  switch (collective.kind) {
    case plans::CollectiveKind::halo_exchange:
      return halo_exchange_seconds(cluster, group, collective.halo_rows * collective.row_bytes);
    case plans::CollectiveKind::send_recv:
      return send_seconds(cluster, group.at(static_cast<size_t>(collective.source_index)),
                          group.at(static_cast<size_t>(collective.destination_index)), collective.buffer_bytes);
    case plans::CollectiveKind::all_gather:
    case plans::CollectiveKind::reduce_scatter:
    case plans::CollectiveKind::all_reduce:
    case plans::CollectiveKind::all_to_all:
      return collective_seconds(cluster, collective.kind, group, collective.buffer_bytes);
  }
  return 0.0;
}

int plan_collective_level(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective, int rank) {
  const std::vector<int> group = mesh.group(rank, collective.axes);
  if (collective.kind == plans::CollectiveKind::send_recv) {
    const int pair[] = {group.at(static_cast<size_t>(collective.source_index)),
                        group.at(static_cast<size_t>(collective.destination_index))};
    return level_spanned(cluster, pair);
  }
  return level_spanned(cluster, group);
}

void add_bytes_per_level(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective, int rank,
                         int64_t count, std::vector<int64_t>& bytes_per_level) {
  const int index = mesh.index_in_group(rank, collective.axes);
  if (plans::bytes_sent(collective, index) == 0) return;
  const std::vector<int> group = mesh.group(rank, collective.axes);
  if (collective.kind == plans::CollectiveKind::halo_exchange) {
    // A chain in group order: each existing neighbour gets halo_rows * row_bytes over its own pair's link.
    for (const int neighbour : {index - 1, index + 1}) {
      if (neighbour < 0 || neighbour >= static_cast<int>(group.size())) continue;
      const int pair[] = {group[static_cast<size_t>(index)], group[static_cast<size_t>(neighbour)]};
      bytes_per_level.at(static_cast<size_t>(level_spanned(cluster, pair))) +=
          count * collective.halo_rows * collective.row_bytes;
    }
    return;
  }
  const int level = plan_collective_level(cluster, mesh, collective, rank);
  bytes_per_level.at(static_cast<size_t>(level)) += count * plans::bytes_sent(collective, index);
}

}  // namespace splitbrain::sim
