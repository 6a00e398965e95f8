#pragma once
// Keeps MPI moving the data of non-blocking operations while the working thread computes.
//
// Why: Open MPI's TCP and shared-memory transports have no progress thread of their own: a
// started MPI_Iallreduce (and a pipeline's MPI_Isend) moves data only inside MPI calls of its
// process, and libnbc advances a collective's schedule at most one round per call. The runtime
// tests its requests between layers, but a layer can compute for tens of times longer than a
// TCP socket's buffer takes to drain at 1 Gb/s: over 2 emulated nodes, a vgg11 gradient all-reduce that
// started during backward made almost no headway until the step waited for it, so the overlap
// that the cost model assumes did not happen. The pump is a thread that, while any such operation
// is in flight, calls MPI_Iprobe on a communicator of its own every interval (an unmatched probe
// runs Open MPI's progress engine, which advances every transport and libnbc schedule), as
// PyTorch's Gloo backend runs collectives on threads of their own. It never touches the
// operations' requests, which stay the working thread's.
//
// Needs MPI_THREAD_MULTIPLE; MpiProcess (mpi_process.h) starts one when MPI provides it.

#include <mpi.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace splitbrain::exec::comm {

class ProgressPump;

// While a hold lives, the pump runs (nothing when no pump does). Move-only.
class ProgressHold {
 public:
  ProgressHold() = default;
  explicit ProgressHold(ProgressPump* pump);
  ~ProgressHold();
  ProgressHold(ProgressHold&& other) noexcept;
  ProgressHold& operator=(ProgressHold&& other) noexcept;
  ProgressHold(const ProgressHold&) = delete;
  ProgressHold& operator=(const ProgressHold&) = delete;

 private:
  ProgressPump* pump_ = nullptr;
};

class ProgressPump {
 public:
  // Collective over `world` (duplicates it). The process's pump from now until destruction:
  // keep_mpi_progressing() holds this one. interval_seconds > 0.
  ProgressPump(MPI_Comm world, double interval_seconds);
  ~ProgressPump();  // stops the thread; collective over the world (frees the duplicate)
  ProgressPump(const ProgressPump&) = delete;
  ProgressPump& operator=(const ProgressPump&) = delete;

  // How many probes the thread made so far (tests: the pump ran).
  long probes() const;

 private:
  friend class ProgressHold;
  void acquire();
  void release();
  void run();

  MPI_Comm quiet_ = MPI_COMM_NULL;  // no message is ever sent here: every probe is unmatched
  double interval_seconds_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  int holds_ = 0;
  long probes_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// Taken by every operation that MPI completes in the background (bucket reductions, pipeline
// sends) from its start until it is complete: the process's pump runs while any is held.
ProgressHold keep_mpi_progressing();

// The process's pump, or nullptr when none runs.
const ProgressPump* process_progress_pump();

}  // namespace splitbrain::exec::comm
