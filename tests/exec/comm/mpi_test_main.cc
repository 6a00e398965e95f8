// main() for the MPI tests of exec/comm (see tests/exec/mpi_gtest.h for how failures propagate).

#include "tests/exec/mpi_gtest.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  const int worst = splitbrain::testing_support::run_tests_on_all_ranks();
  MPI_Finalize();
  return worst;
}
