#pragma once
// A copy of rows between arrays in a backend's memory, both seen as planes of rows: the block a
// split along one dimension cuts out of an array (the planes are the dimensions before it, a row
// the dimensions after it). The ops' kernels copy halo rows with it (ArrayKernel::copy_rows) and
// the runtime's device cuts and places the members' pieces of a collective (DeviceMemory::copy_rows).

#include <cstdint>

namespace splitbrain::exec::kernels {

// Rows of arrays seen as planes of rows (an NCHW array split by height: N x C planes of H rows of W
// elements): `rows` rows of every plane, from row `from_first_row` of `from`'s planes of
// `from_plane_rows` rows into row `into_first_row` of `into`'s planes of `into_plane_rows` rows.
struct RowCopy {
  int64_t planes = 0;
  int64_t row_elements = 0;
  int64_t rows = 0;
  int64_t from_plane_rows = 0;
  int64_t from_first_row = 0;
  int64_t into_plane_rows = 0;
  int64_t into_first_row = 0;
};

// Elements a copy spans in its source and in its destination, from the first plane's first row
// on: what must lie inside each array.
inline int64_t row_copy_from_elements(const RowCopy& c) { return c.planes * c.from_plane_rows * c.row_elements; }
inline int64_t row_copy_into_elements(const RowCopy& c) { return c.planes * c.into_plane_rows * c.row_elements; }

}  // namespace splitbrain::exec::kernels
