#include "exec/comm/halo_reduce.h"

#include <mpi.h>

#include <stdexcept>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {
namespace {
constexpr int kToUpper = 7101;  // tags: gradients of a neighbour's last rows / first rows
constexpr int kToLower = 7102;

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
    const MPI_Comm comm = communicator.communicators().get(halo.axes);
    const LocalArray top = rows(extended_gradient, dim, 0, r);  // the upper neighbour's last rows
    const LocalArray bottom = rows(extended_gradient, dim, r + own_rows, r);  // the lower neighbour's first rows
    LocalArray from_lower = top;  // same shape; receives the lower neighbour's `top`
    LocalArray from_upper = top;
    const int upper = me > 0 ? me - 1 : MPI_PROC_NULL;
    const int lower = me < n - 1 ? me + 1 : MPI_PROC_NULL;
    const int count = static_cast<int>(top.values.size());
    SB_MPI_CHECK(MPI_Sendrecv(top.values.data(), count, MPI_FLOAT, upper, kToUpper, from_lower.values.data(), count,
                              MPI_FLOAT, lower, kToUpper, comm, MPI_STATUS_IGNORE));
    SB_MPI_CHECK(MPI_Sendrecv(bottom.values.data(), count, MPI_FLOAT, lower, kToLower, from_upper.values.data(), count,
                              MPI_FLOAT, upper, kToLower, comm, MPI_STATUS_IGNORE));
    if (lower != MPI_PROC_NULL) add_rows(block, dim, own_rows - r, from_lower);
    if (upper != MPI_PROC_NULL) add_rows(block, dim, 0, from_upper);
    communicator.counter().add(label, halo.kind, plans::bytes_sent(halo, me));
  }
  return block;
}

}  // namespace splitbrain::exec::comm
