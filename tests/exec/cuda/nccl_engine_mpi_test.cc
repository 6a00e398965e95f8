// The NCCL engine against the MPI engine (the reference): every collective, blocking and started,
// on the same inputs on every group of the meshes that fit, must give the same arrays. The
// inputs are small integers, so every sum is exact whatever order either library adds in.
// Needs one GPU per rank (NCCL refuses two ranks on one device); skips otherwise.

#include <gtest/gtest.h>
#include <mpi.h>

#include <string>
#include <vector>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/cuda/cuda_device.h"
#include "tests/exec/cuda/gpu_per_rank.h"
#include "exec/cuda/nccl_collectives.h"

namespace splitbrain::exec::cuda {
namespace {

using comm::LocalArray;
using comm::LocalBytes;

using testing::every_rank_has_a_gpu;
using testing::world_size;

// Distinct small integers per rank and position.
LocalArray rank_array(std::vector<int64_t> shape, int salt) {
  LocalArray array{std::move(shape), {}};
  array.values.resize(static_cast<size_t>(comm::element_count(array.shape)));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (size_t i = 0; i < array.values.size(); ++i) {
    array.values[i] = static_cast<float>(rank * 1000 + salt * 100 + static_cast<int>(i % 97));
  }
  return array;
}

void expect_engines_agree(comm::CollectiveEngine& mpi, comm::CollectiveEngine& nccl, const std::vector<int>& axes) {
  const int n = mpi.group_size(axes);
  SCOPED_TRACE(mpi.mesh().to_string() + ", group of " + std::to_string(n));
  const int64_t m = 2 * n;

  const LocalBytes gather_input = comm::to_bytes(rank_array({3, m}, 1));
  EXPECT_EQ(nccl.all_gather(axes, gather_input, 0), mpi.all_gather(axes, gather_input, 0));
  EXPECT_EQ(nccl.all_gather(axes, gather_input, 1), mpi.all_gather(axes, gather_input, 1));

  const LocalArray reduce_input = rank_array({3, m}, 2);
  EXPECT_EQ(nccl.reduce_scatter(axes, reduce_input, 1), mpi.reduce_scatter(axes, reduce_input, 1));
  EXPECT_EQ(nccl.all_reduce(axes, reduce_input), mpi.all_reduce(axes, reduce_input));
  std::vector<double> mpi_statistics(reduce_input.values.begin(), reduce_input.values.end());
  std::vector<double> nccl_statistics = mpi_statistics;
  mpi.all_reduce_statistics(axes, mpi_statistics);
  nccl.all_reduce_statistics(axes, nccl_statistics);
  EXPECT_EQ(nccl_statistics, mpi_statistics);

  const LocalBytes to_all = comm::to_bytes(rank_array({2, m, 3}, 3));
  EXPECT_EQ(nccl.all_to_all(axes, to_all, 0, 1), mpi.all_to_all(axes, to_all, 0, 1));
  EXPECT_EQ(nccl.all_to_all(axes, to_all, 2, 1), mpi.all_to_all(axes, to_all, 2, 1));

  const LocalBytes block = comm::to_bytes(rank_array({2, 4, 3}, 4));
  EXPECT_EQ(nccl.halo_exchange(axes, block, 1, 1), mpi.halo_exchange(axes, block, 1, 1));
  EXPECT_EQ(nccl.halo_exchange(axes, block, 1, 4), mpi.halo_exchange(axes, block, 1, 4));
  EXPECT_EQ(nccl.send_recv(axes, block, 0, n - 1), mpi.send_recv(axes, block, 0, n - 1));

  // Started reductions: polled like the runtime does between layers, then waited for.
  const LocalArray bucket = rank_array({4 * m}, 5);
  std::vector<float> mpi_sum = bucket.values;
  std::vector<float> nccl_sum = bucket.values;
  std::vector<float> mpi_slice(bucket.values.size() / static_cast<size_t>(n));
  std::vector<float> nccl_slice(mpi_slice.size());
  auto mpi_reduce = mpi.start_all_reduce(axes, mpi_sum);
  auto nccl_reduce = nccl.start_all_reduce(axes, nccl_sum);
  auto mpi_scatter = mpi.start_reduce_scatter(axes, bucket.values, mpi_slice);
  auto nccl_scatter = nccl.start_reduce_scatter(axes, bucket.values, nccl_slice);
  nccl_reduce->test();
  mpi_reduce->test();
  for (auto* pending : {mpi_reduce.get(), nccl_reduce.get(), mpi_scatter.get(), nccl_scatter.get()}) pending->wait();
  EXPECT_TRUE(nccl_reduce->test());
  EXPECT_EQ(nccl_sum, mpi_sum);
  EXPECT_EQ(nccl_slice, mpi_slice);
}

TEST(NcclCollectives, AgreeWithMpiOnEveryGroup) {
  if (world_size() < 2) GTEST_SKIP() << "needs at least 2 ranks";
  if (!every_rank_has_a_gpu()) GTEST_SKIP() << "needs one GPU per rank (NCCL refuses two ranks on one device)";
  select_device_for_this_rank();
  std::vector<plans::Mesh> meshes = {plans::Mesh({{"data", world_size()}})};
  if (world_size() == 4) meshes.push_back(plans::Mesh({{"a", 2}, {"b", 2}}));
  for (const plans::Mesh& mesh : meshes) {
    comm::MeshCommunicators communicators(mesh);
    std::vector<std::vector<int>> axis_sets;
    for (int axis = 0; axis < mesh.axis_count(); ++axis) axis_sets.push_back({axis});
    if (mesh.axis_count() == 2) axis_sets.push_back({1, 0});
    comm::MpiCollectives mpi(communicators);
    NcclCollectives nccl(communicators);
    nccl.prepare(axis_sets);
    for (const auto& axes : axis_sets) expect_engines_agree(mpi, nccl, axes);
  }
}

}  // namespace
}  // namespace splitbrain::exec::cuda
