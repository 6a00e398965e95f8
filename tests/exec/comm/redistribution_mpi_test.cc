// Every rank shards a global tensor in layout `from`, runs plan_redistribution's steps through
// the communication layer, and must end with exactly its shard in layout `to`; its byte counter
// must equal the plan's bytes_sent for it, summed over the collectives (the simulator's number).

#include <mpi.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/comm/redistribution_runner.h"
#include "plans/redistribution.h"
#include "test_tensors.h"

namespace splitbrain::exec::comm {
namespace {

using testing::all_layouts;
using testing::global_block;
using testing::meshes_with;
using testing::shard;
using testing::world_rank;
using testing::world_size;

constexpr int64_t kFloatBytes = 4;

// The value `result` represents: itself, or the sum over its partial group.
LocalArray represented(MeshCommunicators& comms, const plans::TensorLayout& layout, const LocalArray& result) {
  if (comms.mesh().group_size(layout.partial_axes) == 1) return result;
  LocalArray sum{result.shape, std::vector<float>(result.values.size())};
  MPI_Allreduce(result.values.data(), sum.values.data(), static_cast<int>(result.values.size()), MPI_FLOAT, MPI_SUM,
                comms.get(layout.partial_axes));
  return sum;
}

// Runs every pair (from, to) of layouts on every mesh that fits the world.
void check_layout_pairs(const std::vector<int64_t>& shape) {
  const int rank = world_rank();
  for (const plans::Mesh& mesh : meshes_with(world_size())) {
    MeshCommunicators comms(mesh);
    MpiCollectives engine(comms);
    Communicator communicator(engine);
    const std::vector<plans::TensorLayout> layouts = all_layouts(mesh, shape);
    ASSERT_GT(layouts.size(), 1u);
    int64_t expected_total = 0;
    for (const plans::TensorLayout& from : layouts) {
      for (const plans::TensorLayout& to : layouts) {
        const std::string label = plans::to_string(from, mesh) + " -> " + plans::to_string(to, mesh);
        SCOPED_TRACE(mesh.to_string() + " " + label);
        const auto steps = plans::plan_redistribution(from, to, mesh, shape, kFloatBytes);
        const LocalArray result = run_redistribution(communicator, steps, shape, shard(shape, from, mesh, rank), label);
        if (to.partial_axes.empty()) {
          EXPECT_EQ(result, shard(shape, to, mesh, rank));
        } else {
          EXPECT_EQ(represented(comms, to, result), global_block(shape, plans::local_offset(to, mesh, shape, rank),
                                                                 plans::local_shape(to, mesh, shape)));
        }
        int64_t expected = 0;
        const auto collectives = plans::redistribute(from, to, mesh, shape, kFloatBytes);
        for (const plans::Collective& c : collectives) {
          expected += plans::bytes_sent(c, mesh.index_in_group(rank, c.axes));
        }
        const ByteCount counted = communicator.counter().label_total(label);
        EXPECT_EQ(counted.bytes, expected);
        EXPECT_EQ(counted.calls, static_cast<int64_t>(collectives.size()));
        expected_total += expected;
      }
    }
    EXPECT_EQ(communicator.counter().total().bytes, expected_total);
    // Every layout-changing kind ran at least once wherever an axis has more than one rank.
    if (mesh.rank_count() > 1) {
      for (auto kind : {plans::CollectiveKind::all_gather, plans::CollectiveKind::reduce_scatter,
                        plans::CollectiveKind::all_reduce, plans::CollectiveKind::all_to_all}) {
        EXPECT_GT(communicator.counter().kind_total(kind).calls, 0)
            << mesh.to_string() << " " << plans::collective_name(kind);
      }
    }
  }
}

TEST(RedistributionMpi, EveryLayoutPairOfA2dTensor) { check_layout_pairs({8, 12}); }

TEST(RedistributionMpi, EveryLayoutPairOfA4dTensor) { check_layout_pairs({2, 8, 4, 12}); }

// int32 token ids move as raw bytes: every pair of layouts without partial sums (those need no
// reduction) on the byte path.
TEST(RedistributionMpi, Int32TokensOnTheBytePath) {
  const std::vector<int64_t> shape = {8, 4};
  const int rank = world_rank();
  const auto as_tokens = [](const LocalArray& floats) {
    LocalBytes tokens{floats.shape, 4, std::vector<std::byte>(floats.values.size() * 4)};
    for (std::size_t i = 0; i < floats.values.size(); ++i) {
      const auto id = static_cast<int32_t>(floats.values[i]) + 1000;
      std::memcpy(tokens.bytes.data() + 4 * i, &id, 4);
    }
    return tokens;
  };
  for (const plans::Mesh& mesh : meshes_with(world_size())) {
    MeshCommunicators comms(mesh);
    MpiCollectives engine(comms);
    Communicator communicator(engine);
    for (const plans::TensorLayout& from : all_layouts(mesh, shape)) {
      for (const plans::TensorLayout& to : all_layouts(mesh, shape)) {
        if (!from.partial_axes.empty() || !to.partial_axes.empty()) continue;
        SCOPED_TRACE(plans::to_string(from, mesh) + " -> " + plans::to_string(to, mesh));
        const auto steps = plans::plan_redistribution(from, to, mesh, shape, 4);
        const LocalBytes result =
            run_redistribution(communicator, steps, shape, as_tokens(shard(shape, from, mesh, rank)), "tokens");
        EXPECT_EQ(result, as_tokens(shard(shape, to, mesh, rank)));
      }
    }
  }
}

}  // namespace
}  // namespace splitbrain::exec::comm
