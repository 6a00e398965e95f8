#include "exec/comm/halo_reduce.h"

#include <stdexcept>

namespace splitbrain::exec::comm {
namespace {

LocalArray rows(const LocalArray& array, int dim, int64_t first, int64_t count) {
  std::vector<int64_t> offset(array.shape.size(), 0);
  std::vector<int64_t> extent = array.shape;
  offset[static_cast<size_t>(dim)] = first;
  extent[static_cast<size_t>(dim)] = count;
  return to_floats(sub_array(to_bytes(array), offset, extent));
}

// Adds `part` into `block` at rows [first, first + part's rows) along `dim`.
void add_rows(LocalArray& block, int dim, int64_t first, const LocalArray& part) {
  const RowView b = row_view(block.shape, 1, dim);
  const RowView p = row_view(part.shape, 1, dim);
  for (int64_t o = 0; o < b.outer; ++o) {
    for (int64_t r = 0; r < p.rows; ++r) {
      for (int64_t k = 0; k < p.row_bytes; ++k) {
        block.values[static_cast<size_t>((o * b.rows + first + r) * b.row_bytes + k)] +=
            part.values[static_cast<size_t>((o * p.rows + r) * p.row_bytes + k)];
      }
    }
  }
}

}  // namespace

LocalArray halo_reduce(Communicator& communicator, const plans::Collective& halo, const LocalArray& extended_gradient,
                       std::string_view label) {
  if (halo.kind != plans::CollectiveKind::halo_exchange) throw std::invalid_argument("halo_reduce: not a halo exchange");
  const int dim = halo.dim;
  const int64_t r = halo.halo_rows;
  const int64_t extended_rows = extended_gradient.shape.at(static_cast<size_t>(dim));
  const int64_t own_rows = extended_rows - 2 * r;
  LocalArray block = rows(extended_gradient, dim, r, own_rows);
  const int n = halo.group_size;
  if (n > 1 && r > 0) {
    const int me = communicator.index_in_group(halo);
    // The forward exchange run on the extended gradient moves exactly what is needed: its first
    // r rows (the upper neighbour's last rows) go up, its last r rows (the lower neighbour's
    // first rows) go down, and what arrives lands around it, the upper neighbour's first.
    const LocalArray exchanged =
        to_floats(communicator.engine().halo_exchange(halo.axes, to_bytes(extended_gradient), dim, r));
    const LocalArray from_upper = rows(exchanged, dim, 0, r);
    const LocalArray from_lower = rows(exchanged, dim, r + extended_rows, r);
    // Edges have no neighbour, so nothing is added there (not even the exchange's zeros).
    if (me < n - 1) add_rows(block, dim, own_rows - r, from_lower);
    if (me > 0) add_rows(block, dim, 0, from_upper);
    communicator.counter().add(label, halo.kind, plans::bytes_sent(halo, me));
  }
  return block;
}

}  // namespace splitbrain::exec::comm
