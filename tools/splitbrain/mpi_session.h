#pragma once
// MPI for the length of a command (`run`, `calibrate`); started without mpirun it is a 1-rank job.

#include <mpi.h>

namespace splitbrain::tools {

class MpiSession {
 public:
  MpiSession() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

}  // namespace splitbrain::tools
