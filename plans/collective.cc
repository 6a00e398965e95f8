#include "plans/collective.h"

#include <fmt/format.h>

#include <stdexcept>

namespace splitbrain::plans {
namespace {

// Bytes in ring chunk k when an array of `elements` elements is cut into n element chunks, the
// first (elements % n) of them one element longer.
int64_t chunk_bytes(int64_t elements, int64_t element_bytes, int64_t n, int64_t k) {
  const int64_t count = elements / n + (k < elements % n ? 1 : 0);
  return count * element_bytes;
}

}  // namespace

int64_t bytes_sent(const Collective& c, int index_in_group) {
  if (index_in_group < 0 || index_in_group >= c.group_size) {
    throw std::out_of_range(fmt::format("bytes_sent: index {} outside a group of {}", index_in_group, c.group_size));
  }
  const int64_t n = c.group_size;
  const int64_t s = c.buffer_bytes;
  const int64_t i = index_in_group;
  switch (c.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_to_all:
      // n-1 of the n equal pieces; S is a whole number of pieces by construction.
      return s / n * (n - 1);
    case CollectiveKind::all_reduce: {
      const int64_t element_bytes = c.element_bytes > 0 ? c.element_bytes : 1;
      const int64_t elements = s / element_bytes;
      return 2 * s - chunk_bytes(elements, element_bytes, n, i) - chunk_bytes(elements, element_bytes, n, (i + 1) % n);
    }
    case CollectiveKind::halo_exchange: {
      const int64_t neighbours = (i > 0 ? 1 : 0) + (i < n - 1 ? 1 : 0);
      return neighbours * c.halo_rows * c.row_bytes;
    }
    case CollectiveKind::send_recv:
      return i == c.source_index ? s : 0;
  }
  return 0;
}

int64_t group_bytes_sent(const Collective& c) {
  int64_t total = 0;
  for (int i = 0; i < c.group_size; ++i) total += bytes_sent(c, i);
  return total;
}

std::string to_string(const Collective& c, const Mesh& mesh) {
  std::string axes;
  for (int a : c.axes) {
    if (!axes.empty()) axes += ", ";
    axes += a >= 0 && a < mesh.axis_count() ? mesh.axis(a).name : fmt::format("?{}", a);
  }
  std::string where;
  switch (c.kind) {
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      where = fmt::format("dim {}, ", c.dim);
      break;
    case CollectiveKind::all_to_all:
      where = fmt::format("dim {} -> dim {}, ", c.dim, c.other_dim);
      break;
    case CollectiveKind::halo_exchange:
      where = fmt::format("dim {}, {} rows, ", c.dim, c.halo_rows);
      break;
    case CollectiveKind::send_recv:
      where = fmt::format("stage {} -> {}, ", c.source_index, c.destination_index);
      break;
    case CollectiveKind::all_reduce:
      break;
  }
  return fmt::format("{}({}over [{}], n={}, {} B)", collective_name(c.kind), where, axes, c.group_size, c.buffer_bytes);
}

}  // namespace splitbrain::plans
