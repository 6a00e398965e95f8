#pragma once
// One collective communication step, described precisely enough that the simulator can cost it
// and the executor can run it on local arrays without knowing any layouts.
//
// Group: the ranks of Mesh::group(rank, axes); member k is the rank whose
// Mesh::index_in_group(rank, axes) is k. Every member holds a local array of the same shape.
// In a redistribution, all_gather removes `axes` from the innermost end of `dim`'s split list and
// reduce_scatter appends them there (see plans/tensor_layout.h for the block numbering).
// "Block j along dim d" means the j-th of group_size equal, contiguous pieces of the local array
// along d.
//
// What each kind does (input -> output on member i of a group of n):
//   all_gather     output = concatenation along `dim` of the n members' inputs, member 0 first.
//                  buffer_bytes = the gathered OUTPUT (n times the input).
//   reduce_scatter output = block i along `dim` of the element-wise sum of the n inputs.
//                  buffer_bytes = the INPUT each rank holds.
//   all_reduce     output = element-wise sum of the n inputs.  buffer_bytes = the array.
//   all_to_all     each member cuts its input into n blocks along `other_dim` and sends block j to
//                  member j; the output is the concatenation along `dim` of the blocks received,
//                  in sender order. So a split of `dim` over `axes` becomes a split of
//                  `other_dim` over `axes` (axes appended innermost).  buffer_bytes = the local
//                  array (the same before and after).
//   halo_exchange  `dim` is a spatially split dim and `axes` are ALL the axes splitting it, so
//                  members are neighbouring blocks. Member i sends its first `halo_rows` rows
//                  along `dim` to member i-1 and its last `halo_rows` rows to member i+1 (edge
//                  members have one neighbour; a group of 1 has none). The output is the input
//                  extended by halo_rows on both sides: the neighbour's rows, or zeros at the
//                  edges of the tensor (the zero padding a "same" convolution wants), so every
//                  rank's output has the same shape. buffer_bytes = the local input;
//                  row_bytes = the bytes of one row (one index along `dim`).
//   send_recv      pipeline hand-over along one `pipe` axis (axes = {pipe}): the member at
//                  index source_index (a stage coordinate) sends its whole local array to the
//                  member at destination_index, whose output is that array; every other member
//                  is untouched. Forward activations go from s to s+1, gradients from s+1 to s.
//                  buffer_bytes = the shard sent.

#include <cstdint>
#include <string>
#include <vector>

#include "plans/collective_kind.h"
#include "plans/mesh.h"

namespace splitbrain::plans {

struct Collective {
  CollectiveKind kind = CollectiveKind::all_reduce;
  std::vector<int> axes;       // mesh axes of the group, outermost first (sets member order)
  int group_size = 1;          // product of the sizes of `axes`
  int dim = -1;                // all_gather, reduce_scatter, all_to_all, halo_exchange
  int other_dim = -1;          // all_to_all: the dim that becomes split
  int64_t halo_rows = 0;       // halo_exchange: rows sent to each neighbour
  int64_t row_bytes = 0;       // halo_exchange: bytes of one row of the local array
  int source_index = -1;       // send_recv: stage coordinate that sends
  int destination_index = -1;  // send_recv: stage coordinate that receives
  int64_t buffer_bytes = 0;    // nccl-tests "size", per kind as documented above
  int64_t element_bytes = 1;   // bytes per element (all_reduce cuts its ring chunks on elements)

  bool operator==(const Collective&) const = default;
};

// The exact bytes the member at `index_in_group` sends, by the bandwidth-optimal (ring / direct)
// algorithms; S = buffer_bytes, n = group_size:
//   all_gather      (n-1)/n * S  (ring: forwards n-1 input pieces of S/n)
//   reduce_scatter  (n-1)/n * S  (ring: sends n-1 partial blocks of S/n)
//   all_to_all      (n-1)/n * S  (sends every block but its own)
//   all_reduce      2(n-1)/n * S when n divides the element count. In general: a ring
//                   reduce-scatter then ring all-gather over n element chunks, chunk k holding
//                   E/n elements plus one more when k < E % n (E = S / element_bytes); member i
//                   ends the first phase owning chunk i and sends S - C_i, then sends
//                   S - C_{(i+1) mod n} in the second: 2S - C_i - C_{(i+1) mod n}.
//   halo_exchange   halo_rows * row_bytes per existing neighbour (0, 1 or 2 of them)
//   send_recv       S for the source, 0 for everyone else (the receiver included)
// Exact integer arithmetic: the divisions are exact for every collective redistribute() returns.
// Throws std::out_of_range when index_in_group is not in [0, group_size).
int64_t bytes_sent(const Collective& collective, int index_in_group);

// Sum of bytes_sent over the members of ONE group.
int64_t group_bytes_sent(const Collective& collective);

// e.g. "all_gather(dim 0, over [model], n=2, 4096 B)"
std::string to_string(const Collective& collective, const Mesh& mesh);

}  // namespace splitbrain::plans
