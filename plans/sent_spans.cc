#include "plans/sent_spans.h"

#include <utility>

namespace splitbrain::plans {

std::vector<SentSpan> sent_spans(const Mesh& mesh, const Collective& collective, int rank) {
  const int index = mesh.index_in_group(rank, collective.axes);
  const int64_t sent = bytes_sent(collective, index);
  if (sent == 0) return {};
  std::vector<int> group = mesh.group(rank, collective.axes);
  switch (collective.kind) {
    case CollectiveKind::send_recv:
      return {SentSpan{{group.at(static_cast<size_t>(collective.source_index)),
                        group.at(static_cast<size_t>(collective.destination_index))},
                       sent}};
    case CollectiveKind::halo_exchange: {
      std::vector<SentSpan> spans;
      for (const int neighbour : {index - 1, index + 1}) {
        if (neighbour < 0 || neighbour >= static_cast<int>(group.size())) continue;
        spans.push_back({{rank, group[static_cast<size_t>(neighbour)]}, collective.halo_rows * collective.row_bytes});
      }
      return spans;
    }
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_reduce:
    case CollectiveKind::all_to_all:
      break;
  }
  return {SentSpan{std::move(group), sent}};
}

}  // namespace splitbrain::plans
