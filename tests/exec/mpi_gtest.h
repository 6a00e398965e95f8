#pragma once
// Running GoogleTest under mpirun: every rank runs every test (the tests are collective), only
// rank 0 prints GoogleTest's report, other ranks print just their own failures prefixed with
// their rank, and the result is non-zero on EVERY rank when ANY rank failed, so mpirun and ctest
// see a failure wherever it happened. Call between MPI_Init and MPI_Finalize.

#include <mpi.h>

#include <gtest/gtest.h>

#include <cstdio>

namespace splitbrain::testing_support {

class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  explicit RankFailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_, result.file_name() ? result.file_name() : "?",
                 result.line_number(), result.summary());
  }

 private:
  int rank_;
};

// RUN_ALL_TESTS on every rank; returns the worst result over all ranks.
inline int run_tests_on_all_ranks() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  if (rank != 0) {
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new RankFailurePrinter(rank));
  }
  const int mine = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && mine == 0 && worst != 0)
    std::fprintf(stderr, "FAILED on another rank (its failures are printed above)\n");
  return worst;
}

}  // namespace splitbrain::testing_support
