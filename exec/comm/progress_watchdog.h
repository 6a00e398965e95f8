#pragma once
// A stopped or hung rank leaves the others waiting inside MPI forever. The watchdog ends such a
// job, naming the rank. Each rank counts its progress (note_progress(): the step interpreter
// calls it for every instruction); a helper thread of each rank publishes that count, with the
// time, into a shared-memory window of its node every second, and reads the others'. A rank
// whose publication is older than the timeout is stopped or dead (its helper thread no longer
// runs); one that still publishes but whose count has not moved for the timeout is hung (when
// every rank is, they are all waiting, and the job is deadlocked). The lowest rank that still
// runs prints which ranks and why, and exits, which makes the launcher end the job.
// It watches the ranks of its own node (a shared-memory window); the helper thread makes no MPI
// call.

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace splitbrain::exec::comm {

// Called by the working thread whenever it gets something done.
void note_progress();

class ProgressWatchdog {
 public:
  // Collective over `world`. timeout_seconds > 0.
  ProgressWatchdog(MPI_Comm world, double timeout_seconds);
  // Collective over `world` (frees the window).
  ~ProgressWatchdog();
  ProgressWatchdog(const ProgressWatchdog&) = delete;
  ProgressWatchdog& operator=(const ProgressWatchdog&) = delete;

  struct Slot {  // one per rank, in the node's shared window
    int64_t progress = 0;
    int64_t published_ms = 0;  // CLOCK_MONOTONIC, the same clock for every process of the node
    int32_t world_rank = 0;
    int32_t pid = 0;
  };

 private:
  void watch();

  double timeout_seconds_;
  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<Slot*> slots_;  // every rank of the node, this one included
  Slot* mine_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace splitbrain::exec::comm
