// Pure: no MPI call, though it runs inside the MPI test program (on every rank alike).
#include "exec/comm/host_level.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "exec/comm/byte_counter.h"

namespace splitbrain::exec::comm {
namespace {

// Two hosts of two ranks, as tools/emulate-nodes.sh --nodes 2 --ranks-per-node 2 places them.
const std::vector<std::string> kHosts = {"node0", "node0", "node1", "node1"};
// {data: 2, model: 2}: the model pairs (0, 1) and (2, 3) share a host, the data pairs do not.
const plans::Mesh kGrid({{"data", 2}, {"model", 2}});

plans::Collective make(plans::CollectiveKind kind, std::vector<int> axes, int group_size) {
  plans::Collective c;
  c.kind = kind;
  c.axes = std::move(axes);
  c.group_size = group_size;
  c.dim = 0;
  c.buffer_bytes = 4096;
  c.element_bytes = 4;
  return c;
}

TEST(HostLevel, SameHostIsWithinAnyOtherIsAcross) {
  EXPECT_EQ(host_level(std::vector<int>{0, 1}, kHosts), HostLevel::within_host);
  EXPECT_EQ(host_level(std::vector<int>{3, 2}, kHosts), HostLevel::within_host);
  EXPECT_EQ(host_level(std::vector<int>{0, 2}, kHosts), HostLevel::across_hosts);
  EXPECT_EQ(host_level(std::vector<int>{0, 1, 2, 3}, kHosts), HostLevel::across_hosts);
  EXPECT_THROW((void)host_level(std::vector<int>{0, 4}, kHosts), std::out_of_range);
  EXPECT_STREQ(host_level_name(HostLevel::within_host), "within_host");
  EXPECT_STREQ(host_level_name(HostLevel::across_hosts), "across_hosts");
}

TEST(HostLevel, GroupCollectivesCountAtTheGroupsLevel) {
  const plans::Collective over_model = make(plans::CollectiveKind::all_reduce, {1}, 2);
  const plans::Collective over_data = make(plans::CollectiveKind::all_reduce, {0}, 2);
  const plans::Collective over_both = make(plans::CollectiveKind::all_gather, {0, 1}, 4);
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_EQ(bytes_by_host_level(kGrid, over_model, rank, kHosts), (HostLevelBytes{4096, 0}));
    EXPECT_EQ(bytes_by_host_level(kGrid, over_data, rank, kHosts), (HostLevelBytes{0, 4096}));
    // The whole group crosses hosts, so every byte counts across, even those a ring sends to a
    // neighbour on the same host (the simulator's flat-ring rule).
    EXPECT_EQ(bytes_by_host_level(kGrid, over_both, rank, kHosts), (HostLevelBytes{0, 3072}));
  }
}

TEST(HostLevel, HaloSplitsByNeighbourAndSendRecvByPair) {
  plans::Collective halo = make(plans::CollectiveKind::halo_exchange, {0, 1}, 4);
  halo.halo_rows = 2;
  halo.row_bytes = 100;
  // Chain 0-1-2-3: rank 1's upper neighbour 0 shares its host, its lower neighbour 2 does not.
  EXPECT_EQ(bytes_by_host_level(kGrid, halo, 0, kHosts), (HostLevelBytes{200, 0}));
  EXPECT_EQ(bytes_by_host_level(kGrid, halo, 1, kHosts), (HostLevelBytes{200, 200}));
  EXPECT_EQ(bytes_by_host_level(kGrid, halo, 2, kHosts), (HostLevelBytes{200, 200}));
  plans::Collective hand_over = make(plans::CollectiveKind::send_recv, {0}, 2);
  hand_over.source_index = 1;
  hand_over.destination_index = 0;
  EXPECT_EQ(bytes_by_host_level(kGrid, hand_over, 2, kHosts), (HostLevelBytes{0, 4096}));
  EXPECT_EQ(bytes_by_host_level(kGrid, hand_over, 0, kHosts), (HostLevelBytes{0, 0}));
}

TEST(HostLevel, CounterKeepsTheSplitAndSaysWhenOneIsMissing) {
  ByteCounter counter;
  counter.add("a", plans::CollectiveKind::all_reduce, 300, HostLevelBytes{100, 200});
  counter.add("b", plans::CollectiveKind::all_gather, 50, HostLevelBytes{50, 0});
  EXPECT_EQ(counter.total().bytes_by_host_level, (HostLevelBytes{150, 200}));
  EXPECT_TRUE(counter.split_by_host_level());
  EXPECT_THROW(counter.add("c", plans::CollectiveKind::all_reduce, 10, HostLevelBytes{1, 2}), std::invalid_argument);
  counter.add("d", plans::CollectiveKind::all_reduce, 0);  // sends nothing: nothing to split
  EXPECT_TRUE(counter.split_by_host_level());
  counter.add("e", plans::CollectiveKind::all_reduce, 10);
  EXPECT_FALSE(counter.split_by_host_level());
}

}  // namespace
}  // namespace splitbrain::exec::comm
