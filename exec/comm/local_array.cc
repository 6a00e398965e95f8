#include "exec/comm/local_array.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

namespace splitbrain::exec::comm {
namespace {

std::size_t to_size(int64_t n) { return static_cast<std::size_t>(n); }

void copy(std::byte* to, const std::byte* from, int64_t bytes) {
  if (bytes > 0) std::memcpy(to, from, to_size(bytes));
}

// Throws std::out_of_range unless `extent` at `offset` lies inside an array of `shape`.
void check_inside(std::span<const int64_t> shape, std::span<const int64_t> offset, std::span<const int64_t> extent) {
  const std::size_t rank = shape.size();
  if (offset.size() != rank || extent.size() != rank) {
    throw std::out_of_range(fmt::format("sub_array: {}-d offset/extent for a {}-d array", offset.size(), rank));
  }
  for (std::size_t d = 0; d < rank; ++d) {
    if (offset[d] < 0 || extent[d] < 0 || offset[d] + extent[d] > shape[d]) {
      throw std::out_of_range(fmt::format("sub_array: dim {} range [{}, {}) outside extent {}", d, offset[d],
                                          offset[d] + extent[d], shape[d]));
    }
  }
}

// The sub-array of `extent` at `offset` (check_inside) of the row-major `source` of `shape`, into
// `out` (exactly its bytes): the last dim copied as one contiguous run per index of the others,
// walked by an odometer over the outer dims.
void sub_array_into(std::span<const std::byte> source, std::span<const int64_t> shape, int64_t element_bytes,
                    std::span<const int64_t> offset, std::span<const int64_t> extent, std::span<std::byte> out) {
  const std::size_t rank = shape.size();
  if (out.empty()) return;
  if (rank == 0) {  // a 0-d array is its one element
    copy(out.data(), source.data(), element_bytes);
    return;
  }
  std::vector<int64_t> stride(rank);  // bytes
  stride[rank - 1] = element_bytes;
  for (std::size_t d = rank - 1; d > 0; --d) stride[d - 1] = stride[d] * shape[d];
  const int64_t run = extent[rank - 1] * element_bytes;
  std::vector<int64_t> index(rank, 0);
  std::byte* to = out.data();
  while (true) {
    int64_t from = 0;
    for (std::size_t d = 0; d < rank; ++d) from += (offset[d] + index[d]) * stride[d];
    copy(to, source.data() + from, run);
    to += run;
    bool done = true;
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < extent[d]) {
        done = false;
        break;
      }
      index[d] = 0;
    }
    if (done) break;
  }
}

}  // namespace

int64_t element_count(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t extent : shape) {
    if (extent < 0) throw std::invalid_argument(fmt::format("negative extent {}", extent));
    n *= extent;
  }
  return n;
}

void check_size(const LocalArray& array, const char* what) {
  const int64_t expected = element_count(array.shape);
  if (static_cast<int64_t>(array.values.size()) != expected) {
    throw std::invalid_argument(
        fmt::format("{}: the shape holds {} elements but the array has {}", what, expected, array.values.size()));
  }
}

void check_size(const LocalBytes& array, const char* what) {
  if (array.element_bytes < 1) {
    throw std::invalid_argument(fmt::format("{}: element_bytes {} < 1", what, array.element_bytes));
  }
  const int64_t expected = element_count(array.shape) * array.element_bytes;
  if (static_cast<int64_t>(array.bytes.size()) != expected) {
    throw std::invalid_argument(
        fmt::format("{}: the shape holds {} bytes but the array has {}", what, expected, array.bytes.size()));
  }
}

LocalBytes to_bytes(const LocalArray& array) {
  check_size(array, "to_bytes");
  LocalBytes out{array.shape, static_cast<int64_t>(sizeof(float)), {}};
  const auto bytes = std::as_bytes(std::span(array.values));
  out.bytes.assign(bytes.begin(), bytes.end());
  return out;
}

LocalArray to_floats(const LocalBytes& array) {
  check_size(array, "to_floats");
  if (array.element_bytes != static_cast<int64_t>(sizeof(float))) {
    throw std::invalid_argument(fmt::format("to_floats: element_bytes is {}, not 4", array.element_bytes));
  }
  LocalArray out{array.shape, std::vector<float>(array.bytes.size() / sizeof(float))};
  copy(reinterpret_cast<std::byte*>(out.values.data()), array.bytes.data(), static_cast<int64_t>(array.bytes.size()));
  return out;
}

RowView row_view(std::span<const int64_t> shape, int64_t element_bytes, int dim) {
  if (dim < 0 || dim >= static_cast<int>(shape.size())) {
    throw std::out_of_range(fmt::format("dim {} of a {}-d array", dim, shape.size()));
  }
  const auto d = to_size(dim);
  RowView v;
  v.outer = element_count(shape.first(d));
  v.rows = shape[d];
  v.row_bytes = element_count(shape.subspan(d + 1)) * element_bytes;
  return v;
}

LocalBytes sub_array(const LocalBytes& array, std::span<const int64_t> offset, std::span<const int64_t> extent) {
  check_size(array, "sub_array");
  check_inside(array.shape, offset, extent);
  LocalBytes out{{extent.begin(), extent.end()}, array.element_bytes, {}};
  out.bytes.resize(to_size(element_count(extent) * array.element_bytes));
  sub_array_into(array.bytes, array.shape, array.element_bytes, offset, extent, out.bytes);
  return out;
}

LocalArray sub_array(const LocalArray& array, std::span<const int64_t> offset, std::span<const int64_t> extent) {
  check_size(array, "sub_array");
  check_inside(array.shape, offset, extent);
  LocalArray out{{extent.begin(), extent.end()}, {}};
  out.values.resize(to_size(element_count(extent)));
  sub_array_into(std::as_bytes(std::span(array.values)), array.shape, sizeof(float), offset, extent,
                 std::as_writable_bytes(std::span(out.values)));
  return out;
}

std::vector<std::byte> pack_blocks(const LocalBytes& array, int dim, int n) {
  check_size(array, "pack_blocks");
  const RowView v = row_view(array.shape, array.element_bytes, dim);
  if (n < 1 || v.rows % n != 0) {
    throw std::invalid_argument(fmt::format("pack_blocks: dim {} of extent {} is not {} equal blocks", dim, v.rows, n));
  }
  const int64_t block = v.rows / n * v.row_bytes;  // bytes of one block within one outer index
  std::vector<std::byte> packed(array.bytes.size());
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t o = 0; o < v.outer; ++o) {
      copy(packed.data() + (j * v.outer + o) * block, array.bytes.data() + o * v.rows * v.row_bytes + j * block, block);
    }
  }
  return packed;
}

LocalBytes concat_blocks(std::span<const std::byte> packed, std::span<const int64_t> block_shape, int64_t element_bytes,
                         int dim, int n) {
  LocalBytes out{{block_shape.begin(), block_shape.end()}, element_bytes, {}};
  row_view(block_shape, element_bytes, dim);  // validates dim before it indexes the shape
  out.shape[to_size(dim)] *= n;
  out.bytes.resize(packed.size());
  concat_blocks_into(packed, block_shape, element_bytes, dim, n, out.bytes);
  return out;
}

void concat_blocks_into(std::span<const std::byte> packed, std::span<const int64_t> block_shape, int64_t element_bytes,
                        int dim, int n, std::span<std::byte> out) {
  const RowView v = row_view(block_shape, element_bytes, dim);
  const int64_t block = v.rows * v.row_bytes;
  if (static_cast<int64_t>(packed.size()) != n * v.outer * block || out.size() != packed.size()) {
    throw std::invalid_argument(fmt::format("concat_blocks: {} bytes into {} are not {} blocks of {}", packed.size(),
                                            out.size(), n, v.outer * block));
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t o = 0; o < v.outer; ++o) {
      copy(out.data() + (o * n + j) * block, packed.data() + (j * v.outer + o) * block, block);
    }
  }
}

LocalBytes concat(const std::vector<const LocalBytes*>& parts, int dim) {
  if (parts.empty()) throw std::invalid_argument("concat: no parts");
  LocalBytes out{parts.front()->shape, parts.front()->element_bytes, {}};
  const RowView first = row_view(out.shape, out.element_bytes, dim);
  out.shape[to_size(dim)] = 0;
  for (const LocalBytes* p : parts) {
    check_size(*p, "concat");
    const RowView v = row_view(p->shape, p->element_bytes, dim);
    if (v.outer != first.outer || v.row_bytes != first.row_bytes) {
      throw std::invalid_argument(fmt::format("concat: parts differ off dim {}", dim));
    }
    out.shape[to_size(dim)] += v.rows;
  }
  out.bytes.resize(to_size(element_count(out.shape) * out.element_bytes));
  std::byte* to = out.bytes.data();
  for (int64_t o = 0; o < first.outer; ++o) {
    for (const LocalBytes* p : parts) {
      const int64_t run = p->shape[to_size(dim)] * first.row_bytes;
      copy(to, p->bytes.data() + o * run, run);
      to += run;
    }
  }
  return out;
}

}  // namespace splitbrain::exec::comm
