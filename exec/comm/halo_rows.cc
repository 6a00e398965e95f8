#include "exec/comm/halo_rows.h"

#include <algorithm>
#include <stdexcept>

namespace splitbrain::exec::comm {
namespace {

// Rows [first, first + count) of `array` along `dim`, as a new array.
LocalArray rows(const LocalArray& array, int dim, int64_t first, int64_t count) {
  const RowView v = row_view(array.shape, 1, dim);  // element counts, not bytes
  LocalArray out{array.shape, {}};
  out.shape[static_cast<size_t>(dim)] = count;
  out.values.resize(static_cast<size_t>(v.outer * count * v.row_bytes));
  for (int64_t o = 0; o < v.outer; ++o) {
    const auto from = array.values.begin() + (o * v.rows + first) * v.row_bytes;
    std::copy(from, from + count * v.row_bytes, out.values.begin() + o * count * v.row_bytes);
  }
  return out;
}

// Adds `part` into `block` at rows [first, first + part's rows) along `dim`.
void add_rows(LocalArray& block, int dim, int64_t first, const LocalArray& part) {
  const RowView b = row_view(block.shape, 1, dim);
  const RowView p = row_view(part.shape, 1, dim);
  for (int64_t o = 0; o < b.outer; ++o) {
    float* to = block.values.data() + (o * b.rows + first) * b.row_bytes;
    const float* from = part.values.data() + o * p.rows * p.row_bytes;
    for (int64_t k = 0; k < p.rows * p.row_bytes; ++k) to[k] += from[k];
  }
}

// What the neighbours along `dim` hold next to `array`: the upper neighbour's last `r` rows and
// the lower neighbour's first `r` rows (zeros where there is none). Only the boundary rows go
// through the engine: its exchange of [first r rows; last r rows] sends the first ones up and the
// last ones down, and what arrives around them is exactly the neighbours' rows asked for.
struct NeighbourRows {
  LocalArray upper;
  LocalArray lower;
};
NeighbourRows exchange_boundary_rows(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& array,
                                     int dim, int64_t r) {
  const int64_t n_rows = array.shape.at(static_cast<size_t>(dim));
  const LocalBytes first = to_bytes(rows(array, dim, 0, r));
  const LocalBytes last = to_bytes(rows(array, dim, n_rows - r, r));
  const LocalBytes boundary = concat({&first, &last}, dim);
  const LocalArray exchanged = to_floats(engine.halo_exchange(axes, boundary, dim, r));
  return {rows(exchanged, dim, 0, r), rows(exchanged, dim, 3 * r, r)};
}

}  // namespace

LocalArray halo_extend(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& block, int dim,
                       int64_t halo_rows) {
  check_size(block, "halo_extend");
  const RowView v = row_view(block.shape, 1, dim);
  if (halo_rows < 0 || halo_rows > v.rows) {
    throw std::invalid_argument("halo_extend: more halo rows than the block has");
  }
  if (halo_rows == 0) return block;
  LocalArray extended{block.shape, {}};
  extended.shape[static_cast<size_t>(dim)] = v.rows + 2 * halo_rows;
  extended.values.resize(static_cast<size_t>(element_count(extended.shape)));
  const NeighbourRows halo = exchange_boundary_rows(engine, axes, block, dim, halo_rows);
  const int64_t halo_run = halo_rows * v.row_bytes;
  const int64_t block_run = v.rows * v.row_bytes;
  auto to = extended.values.begin();
  for (int64_t o = 0; o < v.outer; ++o) {
    to = std::copy_n(halo.upper.values.begin() + o * halo_run, halo_run, to);
    to = std::copy_n(block.values.begin() + o * block_run, block_run, to);
    to = std::copy_n(halo.lower.values.begin() + o * halo_run, halo_run, to);
  }
  return extended;
}

LocalArray halo_reduce(Communicator& communicator, const plans::Collective& halo, const LocalArray& extended_gradient,
                       std::string_view label) {
  if (halo.kind != plans::CollectiveKind::halo_exchange)
    throw std::invalid_argument("halo_reduce: not a halo exchange");
  check_size(extended_gradient, "halo_reduce");
  const int dim = halo.dim;
  const int64_t r = halo.halo_rows;
  const int64_t own_rows = extended_gradient.shape.at(static_cast<size_t>(dim)) - 2 * r;
  if (r < 0 || own_rows < r) throw std::invalid_argument("halo_reduce: more halo rows than the block has");
  LocalArray block = rows(extended_gradient, dim, r, own_rows);
  const int n = halo.group_size;
  if (n > 1 && r > 0) {
    const int me = communicator.index_in_group(halo);
    // The extended gradient's first r rows belong to the upper neighbour's last rows, its last
    // r rows to the lower neighbour's first: sent there, while theirs for ours arrive.
    const NeighbourRows from = exchange_boundary_rows(communicator.engine(), halo.axes, extended_gradient, dim, r);
    // Edges have no neighbour, so nothing is added there (not even the exchange's zeros).
    if (me < n - 1) add_rows(block, dim, own_rows - r, from.lower);
    if (me > 0) add_rows(block, dim, 0, from.upper);
    communicator.count(label, halo);
  }
  return block;
}

}  // namespace splitbrain::exec::comm
