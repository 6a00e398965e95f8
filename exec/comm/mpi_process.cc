#include "exec/comm/mpi_process.h"

#include <mpi.h>

#include "exec/comm/reduce_scatter_algorithm.h"

namespace splitbrain::exec::comm {

MpiProcess::MpiProcess(int* argc, char*** argv) {
  choose_reduce_scatter_algorithm();
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided == MPI_THREAD_MULTIPLE) pump_ = std::make_unique<ProgressPump>(MPI_COMM_WORLD, kProgressIntervalSeconds);
}

MpiProcess::~MpiProcess() {
  pump_.reset();
  MPI_Finalize();
}

}  // namespace splitbrain::exec::comm
