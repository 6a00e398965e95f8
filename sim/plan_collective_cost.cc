#include "sim/plan_collective_cost.h"

#include "plans/sent_spans.h"
#include "sim/collective_cost.h"
#include "sim/link_sharing.h"

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
      return collective_seconds(cluster, collective.kind, group, collective.buffer_bytes,
                                groups_crossing_levels(cluster, mesh, collective.axes, rank));
  }
  return 0.0;
}

int plan_collective_level(const Cluster& cluster, const plans::Mesh& mesh, const plans::Collective& collective,
                          int rank) {
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
  // Which ranks each message travels between is plans::sent_spans' rule, shared with the executor.
  for (const plans::SentSpan& span : plans::sent_spans(mesh, collective, rank)) {
    bytes_per_level.at(static_cast<size_t>(level_spanned(cluster, span.ranks))) += count * span.bytes;
  }
}

}  // namespace splitbrain::sim
