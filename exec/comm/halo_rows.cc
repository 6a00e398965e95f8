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

}  // namespace

NeighbourRows exchange_boundary_rows(CollectiveEngine& engine, const std::vector<int>& axes, const LocalArray& boundary,
                                     int dim, int64_t r) {
  const LocalArray exchanged = to_floats(engine.halo_exchange(axes, to_bytes(boundary), dim, r));
  return {rows(exchanged, dim, 0, r), rows(exchanged, dim, 3 * r, r)};
}

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
  // The boundary as the exchange takes it: each outer index's first rows, then its last rows.
  LocalArray boundary{block.shape, {}};
  boundary.shape[static_cast<size_t>(dim)] = 2 * halo_rows;
  boundary.values.reserve(static_cast<size_t>(v.outer * 2 * halo_rows * v.row_bytes));
  for (int64_t o = 0; o < v.outer; ++o) {
    const auto plane = block.values.begin() + o * v.rows * v.row_bytes;
    boundary.values.insert(boundary.values.end(), plane, plane + halo_rows * v.row_bytes);
    boundary.values.insert(boundary.values.end(), plane + (v.rows - halo_rows) * v.row_bytes,
                           plane + v.rows * v.row_bytes);
  }
  const NeighbourRows halo = exchange_boundary_rows(engine, axes, boundary, dim, halo_rows);
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

}  // namespace splitbrain::exec::comm
