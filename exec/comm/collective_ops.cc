#include "exec/comm/collective_ops.h"

#include <fmt/format.h>

#include <climits>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <vector>

#include "exec/comm/collective_algorithms.h"
#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm::ops {
namespace {

// Message tags. Our communicators are private duplicates, so tags only need to tell apart the
// messages of one operation: the two directions of a halo exchange must not match each other
// when a member's left and right neighbour are the same rank (a group of 2).
constexpr int kHaloToLeft = 1;
constexpr int kHaloToRight = 2;
constexpr int kPipeline = 3;

// MPI 3.1 counts are int; a larger message is refused rather than silently truncated.
int mpi_count(int64_t count, const char* what) {
  if (count < 0 || count > INT_MAX) {
    throw std::length_error(fmt::format("{}: {} elements exceed MPI's int count", what, count));
  }
  return static_cast<int>(count);
}

void check_group(int n, const char* what) {
  if (n < 1) throw std::invalid_argument(fmt::format("{}: group of {} members", what, n));
}

// MPI lays the members' arrays one after another; that is the concatenation along dim only when
// nothing precedes dim, so the blocks are reordered into `out` (row-major).
void gather_and_concat(MPI_Comm comm, int n, std::span<const std::byte> input, std::span<const int64_t> shape,
                       int64_t element_bytes, int dim, std::span<std::byte> out) {
  const int count = mpi_count(static_cast<int64_t>(input.size()), "all_gather");
  std::vector<std::byte> gathered(input.size() * static_cast<std::size_t>(n));
  SB_MPI_CHECK(MPI_Allgather(input.data(), count, MPI_BYTE, gathered.data(), count, MPI_BYTE, comm));
  concat_blocks_into(gathered, shape, element_bytes, dim, n, out);
}

}  // namespace

LocalBytes all_gather(MPI_Comm comm, int n, const LocalBytes& input, int dim) {
  check_size(input, "all_gather");
  check_group(n, "all_gather");
  row_view(input.shape, input.element_bytes, dim);  // validates dim even when n == 1
  if (n == 1) return input;
  LocalBytes out{input.shape, input.element_bytes,
                 std::vector<std::byte>(input.bytes.size() * static_cast<std::size_t>(n))};
  out.shape[static_cast<std::size_t>(dim)] *= n;
  gather_and_concat(comm, n, input.bytes, input.shape, input.element_bytes, dim, out.bytes);
  return out;
}

LocalArray all_gather(MPI_Comm comm, int n, const LocalArray& input, int dim) {
  check_size(input, "all_gather");
  check_group(n, "all_gather");
  row_view(input.shape, sizeof(float), dim);  // validates dim even when n == 1
  if (n == 1) return input;
  LocalArray out{input.shape, std::vector<float>(input.values.size() * static_cast<std::size_t>(n))};
  out.shape[static_cast<std::size_t>(dim)] *= n;
  gather_and_concat(comm, n, std::as_bytes(std::span(input.values)), input.shape, sizeof(float), dim,
                    std::as_writable_bytes(std::span(out.values)));
  return out;
}

LocalArray reduce_scatter(MPI_Comm comm, int n, const LocalArray& input, int dim) {
  check_size(input, "reduce_scatter");
  check_group(n, "reduce_scatter");
  row_view(input.shape, sizeof(float), dim);  // validates dim
  const auto d = static_cast<std::size_t>(dim);
  if (input.shape[d] % n != 0) {
    throw std::invalid_argument(
        fmt::format("reduce_scatter: dim {} of extent {} is not {} blocks", dim, input.shape[d], n));
  }
  if (n == 1) return input;
  LocalArray out{input.shape, {}};
  out.shape[d] /= n;
  // MPI_Reduce_scatter_block hands member i the i-th contiguous piece, so lay the blocks along
  // dim out one after another first.
  const std::vector<std::byte> packed = pack_blocks(to_bytes(input), dim, n);
  out.values.resize(input.values.size() / static_cast<std::size_t>(n));
  SB_MPI_CHECK(MPI_Reduce_scatter_block(packed.data(), out.values.data(),
                                        mpi_count(static_cast<int64_t>(out.values.size()), "reduce_scatter"), MPI_FLOAT,
                                        MPI_SUM, comm));
  return out;
}

LocalArray all_reduce(MPI_Comm comm, int n, const LocalArray& input) {
  check_size(input, "all_reduce");
  check_group(n, "all_reduce");
  if (n == 1) return input;
  LocalArray out{input.shape, std::vector<float>(input.values.size())};
  // The gradient buckets' non-blocking call, waited for at once: every all-reduce of the executor
  // runs one algorithm per size (collective_algorithms.h), the one `calibrate` times.
  MPI_Request request = MPI_REQUEST_NULL;
  start_float_sum_all_reduce(input.values.data(), out.values.data(),
                             mpi_count(static_cast<int64_t>(input.values.size()), "all_reduce"), comm, &request);
  SB_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  return out;
}

LocalBytes all_to_all(MPI_Comm comm, int n, const LocalBytes& input, int dim, int other_dim) {
  check_size(input, "all_to_all");
  check_group(n, "all_to_all");
  row_view(input.shape, input.element_bytes, dim);
  if (dim == other_dim) throw std::invalid_argument("all_to_all: dim equals other_dim");
  // Cut along other_dim into n blocks, block j destined for member j.
  const std::vector<std::byte> packed = pack_blocks(input, other_dim, n);
  if (n == 1) return input;
  std::vector<int64_t> block_shape = input.shape;
  block_shape[static_cast<std::size_t>(other_dim)] /= n;
  std::vector<std::byte> received(packed.size());
  const int count = mpi_count(static_cast<int64_t>(packed.size()) / n, "all_to_all");
  SB_MPI_CHECK(MPI_Alltoall(packed.data(), count, MPI_BYTE, received.data(), count, MPI_BYTE, comm));
  return concat_blocks(received, block_shape, input.element_bytes, dim, n);
}

LocalBytes halo_exchange(MPI_Comm comm, int n, int me, const LocalBytes& input, int dim, int64_t halo_rows) {
  check_size(input, "halo_exchange");
  check_group(n, "halo_exchange");
  const RowView v = row_view(input.shape, input.element_bytes, dim);
  if (halo_rows < 0 || (n > 1 && halo_rows > v.rows)) {
    throw std::invalid_argument(
        fmt::format("halo_exchange: {} halo rows from a block of {} rows along dim {}", halo_rows, v.rows, dim));
  }
  const auto d = static_cast<std::size_t>(dim);
  // Zero-filled halos: what stays where there is no neighbour.
  LocalBytes before{input.shape, input.element_bytes, {}};
  before.shape[d] = halo_rows;
  before.bytes.assign(static_cast<std::size_t>(element_count(before.shape) * input.element_bytes), std::byte{0});
  LocalBytes after = before;
  if (n > 1 && halo_rows > 0) {
    std::vector<int64_t> offset(input.shape.size(), 0);
    const LocalBytes first = sub_array(input, offset, before.shape);
    offset[d] = v.rows - halo_rows;
    const LocalBytes last = sub_array(input, offset, before.shape);
    const int left = me > 0 ? me - 1 : MPI_PROC_NULL;  // PROC_NULL: the call skips that side
    const int right = me < n - 1 ? me + 1 : MPI_PROC_NULL;
    const int count = mpi_count(static_cast<int64_t>(first.bytes.size()), "halo_exchange");
    // First rows go left while the right neighbour's first rows arrive as our trailing halo;
    // then the mirror image. Sendrecv pairs each send with its receive, so no ordering deadlock.
    SB_MPI_CHECK(MPI_Sendrecv(first.bytes.data(), count, MPI_BYTE, left, kHaloToLeft, after.bytes.data(), count,
                              MPI_BYTE, right, kHaloToLeft, comm, MPI_STATUS_IGNORE));
    SB_MPI_CHECK(MPI_Sendrecv(last.bytes.data(), count, MPI_BYTE, right, kHaloToRight, before.bytes.data(), count,
                              MPI_BYTE, left, kHaloToRight, comm, MPI_STATUS_IGNORE));
  }
  return concat({&before, &input, &after}, dim);
}

LocalBytes send_recv(MPI_Comm comm, int me, const LocalBytes& input, int source, int destination) {
  check_size(input, "send_recv");
  if (source == destination) throw std::invalid_argument("send_recv: source is the destination");
  const int count = mpi_count(static_cast<int64_t>(input.bytes.size()), "send_recv");
  if (me == source) {
    SB_MPI_CHECK(MPI_Send(input.bytes.data(), count, MPI_BYTE, destination, kPipeline, comm));
  } else if (me == destination) {
    LocalBytes out{input.shape, input.element_bytes, std::vector<std::byte>(input.bytes.size())};
    MPI_Status status;
    SB_MPI_CHECK(MPI_Recv(out.bytes.data(), count, MPI_BYTE, source, kPipeline, comm, &status));
    // A longer message fails the receive (MPI_ERR_TRUNCATE); a shorter one must be caught here.
    int received = 0;
    SB_MPI_CHECK(MPI_Get_count(&status, MPI_BYTE, &received));
    if (received != count) {
      throw std::runtime_error(
          fmt::format("send_recv: expected {} bytes from member {}, got {}", count, source, received));
    }
    return out;
  }
  return input;
}

}  // namespace splitbrain::exec::comm::ops
