// abort_job must end EVERY rank: the last rank aborts while the others wait in a barrier that
// can never complete. ctest passes this when the message appears and the job ends before the
// timeout (a hang is the failure this guards against).

#include <mpi.h>

#include <cstdio>

#include "exec/comm/mpi_check.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1) splitbrain::exec::comm::abort_job("probe failure", 3);
  MPI_Barrier(MPI_COMM_WORLD);
  std::fprintf(stderr, "rank %d: the barrier completed, so abort_job did not end the job\n", rank);
  MPI_Finalize();
  return 0;
}
