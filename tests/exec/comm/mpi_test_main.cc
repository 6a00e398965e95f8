// main() for the MPI tests of exec/comm (see tests/exec/mpi_gtest.h for how failures propagate).

#include "tests/exec/mpi_gtest.h"
#include "exec/comm/mpi_process.h"

int main(int argc, char** argv) {
  // MPI as `run` starts it (its progress pump), so the tests check that.
  const splitbrain::exec::comm::MpiProcess mpi(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int worst = splitbrain::testing_support::run_tests_on_all_ranks();
  return worst;
}
