// The MPI engine's started reductions (the runtime's overlapped gradient buckets) give exactly
// what its blocking ones give, polled with test() until done or waited for; its fp64 statistics
// sum is the sum; its fp32 gather (straight into the result) is the byte gather, along every dim.

#include <gtest/gtest.h>

#include <vector>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "test_tensors.h"

namespace splitbrain::exec::comm {
namespace {

using testing::world_rank;
using testing::world_size;

TEST(MpiCollectives, StartedReductionsEqualTheBlockingOnes) {
  const int n = world_size();
  MeshCommunicators comms(plans::Mesh({{"data", n}}));
  MpiCollectives engine(comms);
  engine.prepare({{0}});
  LocalArray bucket{{4 * n}, {}};
  for (int i = 0; i < 4 * n; ++i) bucket.values.push_back(static_cast<float>(world_rank() * 100 + i));

  std::vector<float> sum = bucket.values;
  std::vector<float> slice(4);
  auto reduce = engine.start_all_reduce({0}, sum);
  auto scatter = engine.start_reduce_scatter({0}, bucket.values, slice);
  while (!reduce->test()) {
  }
  scatter->wait();
  EXPECT_TRUE(reduce->test());
  EXPECT_EQ(sum, engine.all_reduce({0}, bucket).values);
  EXPECT_EQ(slice, engine.reduce_scatter({0}, bucket, 0).values);

  std::vector<double> statistics = {0.5 * world_rank(), 1.0};
  engine.all_reduce_statistics({0}, statistics);
  EXPECT_EQ(statistics, (std::vector<double>{0.25 * n * (n - 1), 1.0 * n}));
}

TEST(MpiCollectives, TheFp32GatherIsTheByteGatherAlongEveryDim) {
  const int n = world_size();
  MeshCommunicators comms(plans::Mesh({{"model", n}}));
  MpiCollectives engine(comms);
  engine.prepare({{0}});
  LocalArray block{{2, 3, 4, 5}, {}};
  for (int i = 0; i < 120; ++i) block.values.push_back(static_cast<float>(world_rank() * 1000 + i));
  for (int dim = 0; dim < 4; ++dim) {
    const LocalArray floats = engine.all_gather_floats({0}, block, dim);
    const LocalArray through_bytes = to_floats(engine.all_gather({0}, to_bytes(block), dim));
    EXPECT_EQ(floats.shape, through_bytes.shape) << "dim " << dim;
    EXPECT_EQ(floats.values, through_bytes.values) << "dim " << dim;
    EXPECT_EQ(floats.values.size(), block.values.size() * static_cast<size_t>(n)) << "dim " << dim;
  }
}

}  // namespace
}  // namespace splitbrain::exec::comm
