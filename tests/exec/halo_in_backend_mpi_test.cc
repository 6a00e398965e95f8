// HaloInBackend (exec/ops/halo_in_backend.h) against a global reference, on 3 ranks (a top, an
// interior and a bottom block) or 1: extend() gives each block its neighbours' rows (zeros past
// the tensor's edge), reduce() gives each block its own rows of the extended gradient plus what
// the neighbours' extended gradients hold for its boundary rows, and each counts the plan's bytes.
// Blocks of fewer rows than twice the halo are included (both sides add into the same rows).

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "exec/comm/communicator.h"
#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_collectives.h"
#include "exec/comm/mpi_process.h"
#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/ops/halo_in_backend.h"
#include "plans/transfers.h"
#include "tests/exec/comm/test_tensors.h"
#include "tests/exec/mpi_gtest.h"

namespace splitbrain::exec::ops {
namespace {

using comm::testing::world_rank;
using comm::testing::world_size;

// A value for global row `row` of plane `plane`, element `e`, seen from extended block `owner`
// (0 for the input itself): distinct everywhere, so a row from the wrong place shows.
float value(int64_t plane, int64_t row, int64_t e, int owner) {
  return static_cast<float>(1000 * owner + 100 * plane + 10 * row + e) * 0.5f;
}

// NCHW blocks of `rows` rows each, split by height over every rank, `halo` rows exchanged.
void check(int64_t rows, int64_t halo_rows) {
  SCOPED_TRACE("rows " + std::to_string(rows) + " halo rows " + std::to_string(halo_rows));
  const int n = world_size();
  const int me = world_rank();
  const int64_t batch = 2, channels = 3, width = 4, planes = batch * channels;
  const std::vector<int64_t> global{batch, channels, rows * n, width};
  plans::Mesh mesh({{"space", n}});
  plans::TensorLayout layout = plans::replicated(4);
  layout.dim_axes[2] = {0};
  const plans::Collective halo_exchange = plans::halo_exchange(layout, mesh, global, 4, 2, halo_rows);

  comm::MeshCommunicators communicators(mesh);
  comm::MpiCollectives engine(communicators);
  comm::Communicator communicator(engine);
  cpu::CpuKernelFactory factory(1);
  HaloInBackend halo(factory, communicator, halo_exchange, {batch, channels, rows, width});
  const int64_t h = halo_rows;
  const int64_t extended_rows = rows + 2 * h;
  ASSERT_EQ(halo.extended_elements(), planes * extended_rows * width);

  // Forward: the extended block is the global rows [me * rows - halo, (me + 1) * rows + halo).
  std::vector<float> block(static_cast<size_t>(planes * rows * width));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t e = 0; e < width; ++e)
        block[static_cast<size_t>((p * rows + r) * width + e)] = value(p, me * rows + r, e, 0);
  std::vector<float> extended(static_cast<size_t>(halo.extended_elements()), -1.0f);
  halo.extend(block.data(), extended.data(), "conv/forward");
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t r = 0; r < extended_rows; ++r) {
      const int64_t g = me * rows - h + r;
      for (int64_t e = 0; e < width; ++e) {
        const float expected = g < 0 || g >= rows * n ? 0.0f : value(p, g, e, 0);
        ASSERT_EQ(extended[static_cast<size_t>((p * extended_rows + r) * width + e)], expected)
            << "plane " << p << " extended row " << r;
      }
    }
  }

  // Backward: rank k's extended gradient row r is value(p, global row, e, k + 1); a block's
  // gradient sums, for each of its rows, every rank's extended row at that global row.
  std::vector<float> extended_grad(static_cast<size_t>(halo.extended_elements()));
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t r = 0; r < extended_rows; ++r)
      for (int64_t e = 0; e < width; ++e)
        extended_grad[static_cast<size_t>((p * extended_rows + r) * width + e)] =
            value(p, me * rows - h + r, e, me + 1);
  std::vector<float> grad(block.size(), -1.0f);
  halo.reduce(extended_grad.data(), grad.data(), "conv/backward");
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t g = me * rows + r;
      for (int64_t e = 0; e < width; ++e) {
        float expected = 0.0f;
        for (int k = 0; k < n; ++k) {
          if (g >= k * rows - h && g < (k + 1) * rows + h) expected += value(p, g, e, k + 1);
        }
        ASSERT_EQ(grad[static_cast<size_t>((p * rows + r) * width + e)], expected) << "plane " << p << " row " << r;
      }
    }
  }

  const int64_t sent = plans::bytes_sent(halo_exchange, me);
  EXPECT_EQ(communicator.counter().label_total("conv/forward").bytes, sent);
  EXPECT_EQ(communicator.counter().label_total("conv/backward").bytes, n > 1 ? sent : 0);
}

TEST(HaloInBackend, MatchesTheGlobalRowsOneHaloRow) { check(4, 1); }

TEST(HaloInBackend, MatchesTheGlobalRowsTwoHaloRows) { check(5, 2); }

TEST(HaloInBackend, BlocksOfFewerRowsThanBothHalos) { check(1, 1); }

TEST(HaloInBackend, BlocksOfExactlyBothHalos) { check(2, 1); }

}  // namespace
}  // namespace splitbrain::exec::ops

int main(int argc, char** argv) {
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  return splitbrain::testing_support::run_tests_on_all_ranks();
}
