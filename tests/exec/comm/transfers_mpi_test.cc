// Halo exchange and pipeline send/recv against hand-computed expectations: the halo rows are the
// neighbouring blocks' global rows (zeros past the tensor's edge), the pipeline receiver gets the
// sender's array, everyone else keeps theirs, and the bytes counted are the plan's.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "plans/transfers.h"
#include "test_tensors.h"

namespace splitbrain::exec::comm {
namespace {

using testing::global_block;
using testing::shard;
using testing::world_rank;
using testing::world_size;

// Splits `dim` of `shape` over `axes` of `mesh`, exchanges `halo` rows and checks the result.
void check_halo(const plans::Mesh& mesh, const std::vector<int>& axes, const std::vector<int64_t>& shape, int dim,
                int64_t halo) {
  SCOPED_TRACE(mesh.to_string() + " dim " + std::to_string(dim));
  const int rank = world_rank();
  MeshCommunicators comms(mesh);
  MpiCollectives engine(comms);
  Communicator communicator(engine);
  // Pretend hosts of two ranks each, so the split within / across hosts is checked too.
  std::vector<std::string> hosts;
  for (int r = 0; r < mesh.rank_count(); ++r) hosts.push_back("host" + std::to_string(r / 2));
  communicator.set_rank_hosts(hosts);
  plans::TensorLayout layout = plans::replicated(static_cast<int>(shape.size()));
  layout.dim_axes[static_cast<std::size_t>(dim)] = axes;
  const plans::Collective c = plans::halo_exchange(layout, mesh, shape, 4, dim, halo);
  const LocalArray input = shard(shape, layout, mesh, rank);
  const LocalArray output = communicator.run(c, input, "halo");

  std::vector<int64_t> offset = plans::local_offset(layout, mesh, shape, rank);
  std::vector<int64_t> extent = input.shape;
  offset[static_cast<std::size_t>(dim)] -= halo;
  extent[static_cast<std::size_t>(dim)] += 2 * halo;
  EXPECT_EQ(output, global_block(shape, offset, extent));

  // Hand count: halo rows of (all the other extents) floats to each existing neighbour.
  int64_t row_bytes = 4;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int>(d) != dim) row_bytes *= shape[d];
  }
  const int me = mesh.index_in_group(rank, axes);
  const int n = mesh.group_size(axes);
  const int64_t neighbours = (me > 0 ? 1 : 0) + (me < n - 1 ? 1 : 0);
  EXPECT_EQ(communicator.counter().label_total("halo").bytes, neighbours * halo * row_bytes);
  EXPECT_EQ(communicator.counter().label_total("halo").bytes, plans::bytes_sent(c, me));
  HostLevelBytes split{};
  const std::vector<int> group = mesh.group(rank, axes);
  for (const int neighbour : {me - 1, me + 1}) {
    if (neighbour < 0 || neighbour >= n) continue;
    const bool same_host = group[static_cast<std::size_t>(neighbour)] / 2 == rank / 2;
    split[static_cast<std::size_t>(same_host ? HostLevel::within_host : HostLevel::across_hosts)] += halo * row_bytes;
  }
  EXPECT_EQ(communicator.counter().label_total("halo").bytes_by_host_level, split);
  EXPECT_TRUE(communicator.counter().split_by_host_level());
}

TEST(HaloExchangeMpi, OneAxisNchwSplitOnHeight) {
  const int w = world_size();
  const plans::Mesh mesh({{"h", w}});
  check_halo(mesh, {0}, {2, 3, 4 * w, 5}, 2, 2);  // a 5x5 "same" convolution's halo
  check_halo(mesh, {0}, {2, 3, 4 * w, 5}, 2, 4);  // the whole block
  check_halo(mesh, {0}, {4 * w, 3}, 0, 1);        // nothing before the dim
  check_halo(mesh, {0}, {3, 2 * w}, 1, 1);        // the last dim: rows of one element
}

TEST(HaloExchangeMpi, TwoAxesSplittingOneDimInBothOrders) {
  if (world_size() != 4) GTEST_SKIP() << "needs 4 ranks";
  const plans::Mesh mesh({{"a", 2}, {"b", 2}});
  check_halo(mesh, {0, 1}, {1, 2, 8, 3}, 2, 1);
  check_halo(mesh, {1, 0}, {1, 2, 8, 3}, 2, 2);
}

// Every member of the pipe group calls run(); the receiver's input only gives the shape.
void check_send_recv(const plans::Mesh& mesh, int source, int destination) {
  SCOPED_TRACE(mesh.to_string() + " " + std::to_string(source) + " -> " + std::to_string(destination));
  const int rank = world_rank();
  MeshCommunicators comms(mesh);
  MpiCollectives engine(comms);
  Communicator communicator(engine);
  const std::vector<int64_t> shape = {3, 5};
  const int stage = mesh.coordinate(rank, 0);
  // A rank-dependent array, so the receiver can tell which rank it came from.
  const auto array_of = [&](int r) {
    LocalArray a = global_block({64, 5}, {3 * r, 0}, shape);
    return a;
  };
  const plans::Collective c = plans::pipeline_send(mesh, 0, source, destination, plans::replicated(2), shape, 4);
  const LocalArray output = communicator.run(c, array_of(rank), "pipe");
  std::vector<int> coords = mesh.coordinates(rank);
  coords[0] = source;
  EXPECT_EQ(output, stage == destination ? array_of(mesh.rank_of(coords)) : array_of(rank));
  EXPECT_EQ(communicator.counter().label_total("pipe").bytes, stage == source ? 60 : 0);

  // The same hand-over of int32 token ids on the byte path.
  LocalBytes tokens{shape, 4, std::vector<std::byte>(15 * 4)};
  for (int i = 0; i < 15; ++i) {
    const int32_t id = 100000 * rank + i;
    std::memcpy(tokens.bytes.data() + 4 * i, &id, 4);
  }
  const LocalBytes received = communicator.run(c, tokens, "tokens");
  int32_t first = 0;
  std::memcpy(&first, received.bytes.data(), 4);
  EXPECT_EQ(first, 100000 * (stage == destination ? mesh.rank_of(coords) : rank));
}

TEST(SendRecvMpi, ForwardAndBackwardBetweenStages) {
  const int w = world_size();
  if (w < 2) GTEST_SKIP() << "needs 2 ranks";
  const plans::Mesh pipe({{"pipe", w}});
  check_send_recv(pipe, 0, w - 1);
  check_send_recv(pipe, w - 1, 0);
  if (w > 2) check_send_recv(pipe, 1, 2);
  if (w == 4) {
    // Two data-parallel replicas hand over at once, each within its own pipe group.
    const plans::Mesh grid({{"pipe", 2}, {"data", 2}});
    check_send_recv(grid, 0, 1);
    check_send_recv(grid, 1, 0);
  }
}

}  // namespace
}  // namespace splitbrain::exec::comm
