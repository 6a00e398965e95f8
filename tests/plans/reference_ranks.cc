#include "tests/plans/reference_ranks.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace splitbrain::plans::testing {
namespace {

using std::size_t;

size_t at(int i) { return static_cast<size_t>(i); }

// Product of shape[begin, end).
int64_t product(std::span<const int64_t> shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end; ++k) p *= shape[k];
  return p;
}

// The part of `rank_part`'s block of elements: parts for indices 0..m-2 are small integers that
// depend on (element, index); the last index takes the remainder so the parts sum to `value`.
double partial_part(double value, int64_t element, int index, int group) {
  auto part = [&](int q) { return static_cast<double>((element * 7 + q * 13 + 5) % 9 - 4); };
  if (index < group - 1) return part(index);
  double rest = value;
  for (int q = 0; q < group - 1; ++q) rest -= part(q);
  return rest;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("reference: " + what);
}

// Adds b into a element-wise.
void add_into(std::vector<double>& a, const std::vector<double>& b, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) a[k] += b[k];
}

// Ring reduce-scatter over `blocks[i][k]` (member i's partial of block k): at step t member i
// sends its block (i - t - 1) mod n to member i + 1, which adds it to its own. Member i ends
// owning the full sum of block i.
void ring_reduce_scatter(std::vector<std::vector<Array>>& blocks, std::vector<int64_t>& sent, int64_t element_bytes) {
  const int n = static_cast<int>(blocks.size());
  for (int t = 0; t + 1 < n; ++t) {
    std::vector<Array> messages(at(n));
    for (int i = 0; i < n; ++i) {
      const int k = ((i - t - 1) % n + n) % n;
      messages[at(i)] = blocks[at(i)][at(k)];
      sent[at(i)] += static_cast<int64_t>(messages[at(i)].values.size()) * element_bytes;
    }
    for (int i = 0; i < n; ++i) {
      const int from = (i - 1 + n) % n;
      const int k = ((from - t - 1) % n + n) % n;
      Array& mine = blocks[at(i)][at(k)];
      add_into(mine.values, messages[at(from)].values, 0, mine.values.size());
    }
  }
}

}  // namespace

int64_t element_count(std::span<const int64_t> shape) { return product(shape, 0, shape.size()); }

Array make_global(std::vector<int64_t> shape) {
  Array a;
  a.values.resize(static_cast<size_t>(element_count(shape)));
  for (size_t i = 0; i < a.values.size(); ++i) {
    a.values[i] = static_cast<double>(static_cast<int64_t>((i * 2654435761u) % 1000003u % 2001u) - 1000);
  }
  a.shape = std::move(shape);
  return a;
}

Array sub_array(const Array& a, std::span<const int64_t> offset, std::span<const int64_t> extent) {
  const size_t dims = a.shape.size();
  require(offset.size() == dims && extent.size() == dims, "sub_array rank mismatch");
  for (size_t d = 0; d < dims; ++d) {
    require(offset[d] >= 0 && extent[d] >= 0 && offset[d] + extent[d] <= a.shape[d],
            fmt::format("sub_array out of bounds on dim {}", d));
  }
  Array out;
  out.shape.assign(extent.begin(), extent.end());
  out.values.resize(static_cast<size_t>(element_count(extent)));
  if (out.values.empty()) return out;
  if (dims == 0) {
    out.values = a.values;
    return out;
  }
  // Trailing dims taken whole are contiguous with the last cut dim: copy them as one run.
  size_t cut = dims - 1;  // the innermost dim that is not taken whole
  while (cut > 0 && offset[cut] == 0 && extent[cut] == a.shape[cut]) --cut;
  const int64_t inner = product(a.shape, cut + 1, dims);
  const int64_t run = extent[cut] * inner;
  std::vector<int64_t> stride(dims, 1);
  for (size_t d = dims - 1; d > 0; --d) stride[d - 1] = stride[d] * a.shape[d];
  // Walk the runs with a counter over the dims before `cut`.
  std::vector<int64_t> index(cut, 0);
  for (int64_t r = 0, runs = product(extent, 0, cut); r < runs; ++r) {
    int64_t src = offset[cut] * stride[cut];
    for (size_t d = 0; d < cut; ++d) src += (offset[d] + index[d]) * stride[d];
    std::copy_n(a.values.begin() + src, run, out.values.begin() + r * run);
    for (size_t d = cut; d-- > 0;) {
      if (++index[d] < extent[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

Array concat(const std::vector<Array>& parts, int dim) {
  require(!parts.empty(), "concat of nothing");
  const size_t d = at(dim);
  Array out;
  out.shape = parts[0].shape;
  out.shape[d] = 0;
  for (const Array& p : parts) {
    for (size_t k = 0; k < out.shape.size(); ++k) {
      require(k == d || p.shape[k] == parts[0].shape[k], "concat extents differ");
    }
    out.shape[d] += p.shape[d];
  }
  const int64_t outer = product(out.shape, 0, d);
  const int64_t inner = product(out.shape, d + 1, out.shape.size());
  out.values.reserve(static_cast<size_t>(element_count(out.shape)));
  for (int64_t o = 0; o < outer; ++o) {
    for (const Array& p : parts) {
      const int64_t run = p.shape[d] * inner;
      out.values.insert(out.values.end(), p.values.begin() + o * run, p.values.begin() + (o + 1) * run);
    }
  }
  return out;
}

std::vector<Array> split(const Array& a, int dim, int n) {
  const size_t d = at(dim);
  require(n >= 1 && a.shape[d] % n == 0, fmt::format("dim {} of extent {} does not split {} ways", dim, a.shape[d], n));
  std::vector<Array> blocks(at(n));
  const int64_t outer = product(a.shape, 0, d);
  const int64_t inner = product(a.shape, d + 1, a.shape.size());
  const int64_t run = a.shape[d] / n * inner;
  for (int b = 0; b < n; ++b) {
    Array& out = blocks[at(b)];
    out.shape = a.shape;
    out.shape[d] /= n;
    out.values.reserve(static_cast<size_t>(outer * run));
    for (int64_t o = 0; o < outer; ++o) {
      const auto begin = a.values.begin() + o * a.shape[d] * inner + b * run;
      out.values.insert(out.values.end(), begin, begin + run);
    }
  }
  return blocks;
}

Array shard(const Array& global, const TensorLayout& layout, const Mesh& mesh, int rank) {
  Array out =
      sub_array(global, local_offset(layout, mesh, global.shape, rank), local_shape(layout, mesh, global.shape));
  if (layout.partial_axes.empty()) return out;
  const int group = mesh.group_size(layout.partial_axes);
  const int index = mesh.index_in_group(rank, layout.partial_axes);
  for (size_t e = 0; e < out.values.size(); ++e) {
    out.values[e] = partial_part(out.values[e], static_cast<int64_t>(e), index, group);
  }
  return out;
}

std::vector<Array> shard_all(const Array& global, const TensorLayout& layout, const Mesh& mesh) {
  std::vector<Array> arrays;
  for (int r = 0; r < mesh.rank_count(); ++r) arrays.push_back(shard(global, layout, mesh, r));
  return arrays;
}

Array represented_value(const std::vector<Array>& arrays, const TensorLayout& layout, const Mesh& mesh, int rank) {
  Array sum = arrays[at(rank)];
  for (int member : mesh.group(rank, layout.partial_axes)) {
    if (member == rank) continue;
    require(arrays[at(member)].shape == sum.shape, "partial group shapes differ");
    add_into(sum.values, arrays[at(member)].values, 0, sum.values.size());
  }
  return sum;
}

void apply(const Collective& c, const Mesh& mesh, std::vector<Array>& arrays, std::vector<int64_t>& bytes_sent) {
  require(c.group_size == mesh.group_size(c.axes), "group_size disagrees with the axes");
  const int n = c.group_size;
  const int64_t eb = c.element_bytes;
  std::vector<Array> result(arrays.size());
  for (int leader = 0; leader < mesh.rank_count(); ++leader) {
    if (mesh.index_in_group(leader, c.axes) != 0) continue;
    const std::vector<int> members = mesh.group(leader, c.axes);
    std::vector<Array> in;
    for (int m : members) {
      in.push_back(std::move(arrays[at(m)]));  // every rank is in exactly one group
      require(in.back().shape == in.front().shape, "shapes differ within a group");
    }
    const auto local_bytes = static_cast<int64_t>(in[0].values.size()) * eb;
    std::vector<int64_t> sent(at(n), 0);
    std::vector<Array> out(at(n));
    switch (c.kind) {
      case CollectiveKind::all_gather: {
        // Ring: at step t member i forwards piece (i - t) mod n to member i + 1.
        for (int t = 0; t + 1 < n; ++t) {
          for (int i = 0; i < n; ++i) {
            sent[at(i)] += static_cast<int64_t>(in[at(((i - t) % n + n) % n)].values.size()) * eb;
          }
        }
        const Array gathered = concat(in, c.dim);
        require(c.buffer_bytes == static_cast<int64_t>(gathered.values.size()) * eb,
                "all_gather buffer_bytes is not the gathered output");
        std::fill(out.begin(), out.end(), gathered);
        break;
      }
      case CollectiveKind::reduce_scatter: {
        require(c.buffer_bytes == local_bytes, "reduce_scatter buffer_bytes is not the input");
        std::vector<std::vector<Array>> blocks;
        for (const Array& a : in) blocks.push_back(split(a, c.dim, n));
        ring_reduce_scatter(blocks, sent, eb);
        for (int i = 0; i < n; ++i) out[at(i)] = blocks[at(i)][at(i)];
        break;
      }
      case CollectiveKind::all_reduce: {
        require(c.buffer_bytes == local_bytes, "all_reduce buffer_bytes is not the array");
        // Ring reduce-scatter then ring all-gather over n flat chunks, the first E % n of them
        // one element longer.
        const int64_t elements = static_cast<int64_t>(in[0].values.size());
        auto chunked = [&](const Array& a) {
          std::vector<Array> chunks(at(n));
          int64_t begin = 0;
          for (int k = 0; k < n; ++k) {
            const int64_t len = elements / n + (k < elements % n ? 1 : 0);
            chunks[at(k)].shape = {len};
            chunks[at(k)].values.assign(a.values.begin() + begin, a.values.begin() + begin + len);
            begin += len;
          }
          return chunks;
        };
        std::vector<std::vector<Array>> blocks;
        for (const Array& a : in) blocks.push_back(chunked(a));
        ring_reduce_scatter(blocks, sent, eb);
        for (int t = 0; t + 1 < n; ++t) {
          std::vector<Array> messages(at(n));
          for (int i = 0; i < n; ++i) {
            messages[at(i)] = blocks[at(i)][at(((i - t) % n + n) % n)];
            sent[at(i)] += static_cast<int64_t>(messages[at(i)].values.size()) * eb;
          }
          for (int i = 0; i < n; ++i) {
            const int from = (i - 1 + n) % n;
            blocks[at(i)][at(((from - t) % n + n) % n)] = messages[at(from)];
          }
        }
        for (int i = 0; i < n; ++i) {
          Array flat;
          flat.shape = in[0].shape;
          for (const Array& chunk : blocks[at(i)]) {
            flat.values.insert(flat.values.end(), chunk.values.begin(), chunk.values.end());
          }
          out[at(i)] = std::move(flat);
        }
        break;
      }
      case CollectiveKind::all_to_all: {
        require(c.buffer_bytes == local_bytes, "all_to_all buffer_bytes is not the local array");
        std::vector<std::vector<Array>> pieces;
        for (const Array& a : in) pieces.push_back(split(a, c.other_dim, n));
        for (int j = 0; j < n; ++j) {
          std::vector<Array> received;
          for (int i = 0; i < n; ++i) {
            received.push_back(pieces[at(i)][at(j)]);
            if (i != j) {
              sent[at(i)] += static_cast<int64_t>(received.back().values.size()) * eb;
            }
          }
          out[at(j)] = concat(received, c.dim);
        }
        break;
      }
      case CollectiveKind::halo_exchange: {
        require(c.buffer_bytes == local_bytes, "halo buffer_bytes is not the local array");
        const size_t d = at(c.dim);
        const int64_t rows = in[0].shape[d];
        auto rows_of = [&](const Array& a, int64_t first) {
          std::vector<int64_t> offset(a.shape.size(), 0);
          std::vector<int64_t> extent = a.shape;
          offset[d] = first;
          extent[d] = c.halo_rows;
          return sub_array(a, offset, extent);
        };
        for (int i = 0; i < n; ++i) {
          Array zeros = rows_of(in[at(i)], 0);
          std::fill(zeros.values.begin(), zeros.values.end(), 0.0);
          // Received from i - 1: its last rows; from i + 1: its first rows.
          Array before = i > 0 ? rows_of(in[at(i - 1)], rows - c.halo_rows) : zeros;
          Array after = i + 1 < n ? rows_of(in[at(i + 1)], 0) : zeros;
          if (i > 0) sent[at(i - 1)] += static_cast<int64_t>(before.values.size()) * eb;
          if (i + 1 < n) sent[at(i + 1)] += static_cast<int64_t>(after.values.size()) * eb;
          out[at(i)] = concat({before, in[at(i)], after}, c.dim);
        }
        break;
      }
      case CollectiveKind::send_recv: {
        require(c.buffer_bytes == local_bytes, "send_recv buffer_bytes is not the shard");
        out = in;
        out[at(c.destination_index)] = in[at(c.source_index)];
        sent[at(c.source_index)] += local_bytes;
        break;
      }
    }
    for (int i = 0; i < n; ++i) {
      result[at(members[at(i)])] = std::move(out[at(i)]);
      bytes_sent[at(members[at(i)])] += sent[at(i)];
    }
  }
  arrays = std::move(result);
}

void apply_local(const RedistributionStep& step, const Mesh& mesh, std::span<const int64_t> global_shape,
                 std::vector<Array>& arrays) {
  require(!step.collective, "apply_local given a collective");
  for (int r = 0; r < mesh.rank_count(); ++r) {
    const LocalReslice cut = local_reslice(step.before, step.after, mesh, global_shape, r);
    Array next = sub_array(arrays[at(r)], cut.offset, cut.shape);
    if (cut.zero) std::fill(next.values.begin(), next.values.end(), 0.0);
    arrays[at(r)] = std::move(next);
  }
}

}  // namespace splitbrain::plans::testing
