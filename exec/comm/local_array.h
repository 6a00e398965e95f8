#pragma once
// The local arrays the communication layer moves: dense, row-major, one per rank. LocalArray is
// the fp32 data of training; LocalBytes carries any element type as raw bytes (int32 token ids,
// say) for the collectives that only move data. The block helpers cut and join arrays along one
// dim; every collective is built from them, so their meaning is the one plans/collective.h uses
// ("block j along dim d": the j-th of n equal contiguous pieces along d).

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace splitbrain::exec::comm {

struct LocalArray {
  std::vector<int64_t> shape;
  std::vector<float> values;  // row-major, element_count(shape) of them
  bool operator==(const LocalArray&) const = default;
};

struct LocalBytes {
  std::vector<int64_t> shape;
  int64_t element_bytes = 1;
  std::vector<std::byte> bytes;  // row-major, element_count(shape) * element_bytes of them
  bool operator==(const LocalBytes&) const = default;
};

// Product of the extents (1 for a 0-d shape). Throws std::invalid_argument on a negative extent.
int64_t element_count(std::span<const int64_t> shape);

// Throws std::invalid_argument unless the array holds exactly element_count(shape) elements.
void check_size(const LocalArray& array, const char* what);
void check_size(const LocalBytes& array, const char* what);

LocalBytes to_bytes(const LocalArray& array);
LocalArray to_floats(const LocalBytes& array);  // element_bytes must be 4

// The array seen as (outer, rows, inner) around `dim`: outer = product of the extents before dim,
// inner = bytes of one index along dim (a "row"). Throws std::out_of_range for a bad dim.
struct RowView {
  int64_t outer = 1;
  int64_t rows = 0;
  int64_t row_bytes = 0;
};
RowView row_view(std::span<const int64_t> shape, int64_t element_bytes, int dim);

// The sub-array of `extent` starting at `offset` (per dim), copied out. Throws
// std::out_of_range when it does not lie inside the array.
LocalBytes sub_array(const LocalBytes& array, std::span<const int64_t> offset, std::span<const int64_t> extent);
// The same of fp32 data, copied once from the array's own storage into the result's.
LocalArray sub_array(const LocalArray& array, std::span<const int64_t> offset, std::span<const int64_t> extent);

// Cuts `array` into n equal blocks along `dim` and lays them out one after another (block 0
// first), each block itself row-major: the send buffer of an all-to-all or reduce-scatter.
// Throws std::invalid_argument when n does not divide the dim.
std::vector<std::byte> pack_blocks(const LocalBytes& array, int dim, int n);

// The inverse: `packed` holds n arrays of `block_shape` one after another; returns their
// concatenation along `dim` (block 0 first): the receive side of an all-gather or all-to-all.
LocalBytes concat_blocks(std::span<const std::byte> packed, std::span<const int64_t> block_shape, int64_t element_bytes,
                         int dim, int n);
// The same into `out`, which holds exactly the concatenation's bytes (fp32 arrays' own storage).
void concat_blocks_into(std::span<const std::byte> packed, std::span<const int64_t> block_shape, int64_t element_bytes,
                        int dim, int n, std::span<std::byte> out);

// Concatenation along `dim` of arrays that agree on every other extent (rows may differ).
LocalBytes concat(const std::vector<const LocalBytes*>& parts, int dim);

}  // namespace splitbrain::exec::comm
