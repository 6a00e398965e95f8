#pragma once
// MPI for a process of the executor (`run`, `calibrate`, the MPI tests): Open MPI's reduce-scatter
// algorithm chosen before MPI_Init (reduce_scatter_algorithm.h; the all-reduce's is chosen per
// call, collective_algorithms.h), MPI_THREAD_MULTIPLE, and the progress pump (progress_pump.h)
// while MPI lives. Started without mpirun it is a 1-rank job.
// Where MPI does not provide MPI_THREAD_MULTIPLE there is no pump, and the runtime's MPI_Test
// between layers is all the progress a started operation gets.

#include <memory>

#include "exec/comm/progress_pump.h"

namespace splitbrain::exec::comm {

class MpiProcess {
 public:
  // How often the pump probes while an operation is in flight: a 4 MiB socket buffer drains in
  // 3 ms at 10 Gb/s, and a probe costs a few microseconds of a core.
  static constexpr double kProgressIntervalSeconds = 200e-6;

  MpiProcess(int* argc, char*** argv);
  MpiProcess() : MpiProcess(nullptr, nullptr) {}
  ~MpiProcess();  // collective: MPI_Finalize
  MpiProcess(const MpiProcess&) = delete;
  MpiProcess& operator=(const MpiProcess&) = delete;

  const ProgressPump* pump() const { return pump_.get(); }

 private:
  std::unique_ptr<ProgressPump> pump_;
};

}  // namespace splitbrain::exec::comm
