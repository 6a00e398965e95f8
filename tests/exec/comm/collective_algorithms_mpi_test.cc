// The executor's all-reduce algorithms: recursive doubling for small buffers and Rabenseifner's
// for large, written into libnbc's control variable before each call, the sums exact either way,
// and a value the user gave left alone.

#include "exec/comm/collective_algorithms.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <optional>
#include <vector>

#include "tests/exec/comm/mpi_tool_variable.h"

namespace splitbrain::exec::comm {
namespace {

using plans::all_reduce_algorithm;
using plans::kRecursiveDoublingMaxBytes;

constexpr const char* kVariable = "coll_libnbc_iallreduce_algorithm";

// The value Open MPI holds for libnbc's all-reduce algorithm; nullopt when it has none.
std::optional<int> libnbc_algorithm_in_effect() { return testing::mpi_tool_int_variable(kVariable); }

TEST(AllReduceAlgorithm, SmallBuffersDoubleAndLargeOnesHalveThenGather) {
  EXPECT_EQ(all_reduce_algorithm(4), AllReduceAlgorithm::recursive_doubling);
  EXPECT_EQ(all_reduce_algorithm(kRecursiveDoublingMaxBytes), AllReduceAlgorithm::recursive_doubling);
  EXPECT_EQ(all_reduce_algorithm(kRecursiveDoublingMaxBytes + 4), AllReduceAlgorithm::rabenseifner);
  EXPECT_EQ(all_reduce_algorithm(int64_t{64} << 20), AllReduceAlgorithm::rabenseifner);
  EXPECT_EQ(libnbc_algorithm_number(AllReduceAlgorithm::rabenseifner), 3);
  EXPECT_EQ(libnbc_algorithm_number(AllReduceAlgorithm::recursive_doubling), 4);
}

TEST(AllReduceAlgorithmSwitch, LibnbcHoldsTheAlgorithmForEachSizeUntilRestored) {
  const std::optional<int> before = libnbc_algorithm_in_effect();
  if (!before) GTEST_SKIP() << "Open MPI has no " << kVariable;
  AllReduceAlgorithmSwitch algorithm(/*keep_users_choice=*/false);
  ASSERT_TRUE(algorithm.active());
  for (int64_t bytes : {int64_t{4}, kRecursiveDoublingMaxBytes, kRecursiveDoublingMaxBytes + 4, int64_t{1} << 20}) {
    algorithm.select_for(bytes);
    EXPECT_EQ(libnbc_algorithm_in_effect(), libnbc_algorithm_number(all_reduce_algorithm(bytes))) << bytes << " B";
  }
  algorithm.restore();
  EXPECT_EQ(libnbc_algorithm_in_effect(), before);
}

// Exact sums either side of the threshold (and for a length no power of two divides), each half
// of the ranks summing a size of its own; afterwards the variable is the same on every rank, so
// the all-reduce by which Open MPI agrees on a new communicator's id runs one algorithm
// everywhere (it waited forever when the ranks' last sizes differed).
TEST(AllReduceAlgorithmSwitch, SumsAreExactAndCommunicatorsCanStillBeMade) {
  int size = 1;
  int rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm half = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half), MPI_SUCCESS);
  int half_size = 1;
  MPI_Comm_size(half, &half_size);
  const std::optional<int> before = libnbc_algorithm_in_effect();
  const std::vector<int64_t> sizes = {int64_t{4}, kRecursiveDoublingMaxBytes, kRecursiveDoublingMaxBytes + 4,
                                      int64_t{1} << 20, int64_t{4} * 100003};
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t bytes = sizes[(i + static_cast<size_t>(rank % 2)) % sizes.size()];
    const int count = static_cast<int>(bytes / 4);
    std::vector<float> values(static_cast<size_t>(count));
    for (int j = 0; j < count; ++j) values[static_cast<size_t>(j)] = static_cast<float>((rank + 1) * (j % 7));
    MPI_Request request = MPI_REQUEST_NULL;
    start_float_sum_all_reduce(MPI_IN_PLACE, values.data(), count, half, &request);
    EXPECT_EQ(libnbc_algorithm_in_effect(), before) << bytes << " B";
    ASSERT_EQ(MPI_Wait(&request, MPI_STATUS_IGNORE), MPI_SUCCESS);
    // The half's ranks are rank % 2, rank % 2 + 2, ...: the sum of their (rank + 1) is exact in
    // floats, as are the products with small integers, whatever the order of the additions.
    int ranks_sum = 0;
    for (int r = rank % 2; r < size; r += 2) ranks_sum += r + 1;
    int wrong = 0;
    for (int j = 0; j < count; ++j) wrong += values[static_cast<size_t>(j)] != static_cast<float>(ranks_sum * (j % 7));
    EXPECT_EQ(wrong, 0) << bytes << " B over " << half_size << " ranks";
  }
  MPI_Comm copy = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Comm_dup(MPI_COMM_WORLD, &copy), MPI_SUCCESS);
  MPI_Comm_free(&copy);
  MPI_Comm_free(&half);
}

TEST(AllReduceAlgorithmSwitch, KeepsTheUsersChoice) {
  const std::optional<int> before = libnbc_algorithm_in_effect();
  if (!before) GTEST_SKIP() << "Open MPI has no " << kVariable;
  AllReduceAlgorithmSwitch keeping(/*keep_users_choice=*/true);
  EXPECT_FALSE(keeping.active());
  keeping.select_for(4);
  keeping.select_for(int64_t{1} << 20);
  EXPECT_EQ(libnbc_algorithm_in_effect(), before);
}

}  // namespace
}  // namespace splitbrain::exec::comm
