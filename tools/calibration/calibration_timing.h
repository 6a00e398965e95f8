#pragma once
// Timing for `splitbrain calibrate`: the median of several runs, every rank running at once so
// the rates include the contention of one rank per core, as in training; the slowest rank's.

#include <mpi.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "exec/comm/mpi_check.h"
#include "exec/comm/rank_placement.h"
#include "tools/training/cpu_cache_size.h"

namespace splitbrain::tools {

// The upper median (the middle value of an odd count, the higher middle one of an even count):
// always a time that was measured. `values` must not be empty.
inline double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Seconds on this host's monotonic clock, which every process of the host shares.
inline double host_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Waits for a non-blocking collective without spinning: a rank that sits out a measurement must
// leave its core (and, with SMT, its sibling's execution units) to the busy ones, as an idle core
// does when fewer ranks train.
inline void wait_asleep(MPI_Request& request) {
  int done = 0;
  while (true) {
    SB_MPI_CHECK(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Ranks that take turns on cores (exec/comm/rank_placement.h, split_by_shared_cores): a kernel
// shorter than the scheduler's time slice runs whole while the others wait for their turn, so
// timed from its own start it looks as fast as on a core of its own (on 2 ranks per core a
// convolution shorter than a slice timed as alone, one of tens of slices nearly twice that), yet
// a synchronous step waits for all of them. So on shared cores:
//   - a kernel (computed on the rank's thread) costs the group's CPU seconds over its cores:
//     they take turns, and the CPU time leaves out the turns of the others and the wake-ups;
//   - a collective (the ranks wait on each other) lasts from the group's first start to its last
//     end.
// A rank on cores of its own keeps its own wall time. Every call is collective over the group.
class CoreSharing {
 public:
  enum class Cost { cpu_share, wall_span };

  explicit CoreSharing(MPI_Comm comm) : sharers_(exec::comm::split_by_shared_cores(comm)) {
    SB_MPI_CHECK(MPI_Comm_size(sharers_, &size_));
    if (size_ == 1) return;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) CPU_SET(sched_getcpu(), &cpus);
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &cpus, sizeof(cpus), MPI_BYTE, MPI_BOR, sharers_));
    cores_ = std::max(1, CPU_COUNT(&cpus));
  }
  ~CoreSharing() { MPI_Comm_free(&sharers_); }
  // Whether this rank takes turns on its cores with others of the group.
  bool shares_cores() const { return size_ > 1; }
  CoreSharing(const CoreSharing&) = delete;
  CoreSharing& operator=(const CoreSharing&) = delete;

  // Where more of the group computed than it has cores (a rank that sat out passes 0 CPU
  // seconds): the group's CPU seconds over its cores, at least this rank's. Else no rank waited
  // for a core and own_wall_seconds stands, as on a core of its own (timed by their CPU seconds,
  // the tiny GPT's 10-50 us passes on a shared core, the core-mate asleep, read a median 1.2-1.7x
  // their wall seconds on a core of its own). Waits asleep (wait_asleep), so a rank that sat out
  // does not spin on a busy one's core.
  double cpu_share(double own_wall_seconds, double own_cpu_seconds) const {
    if (size_ == 1) return own_wall_seconds;
    double sums[2] = {own_cpu_seconds, own_cpu_seconds > 0.0 ? 1.0 : 0.0};  // CPU seconds, ranks computing
    MPI_Request request = MPI_REQUEST_NULL;
    SB_MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, sharers_, &request));
    wait_asleep(request);
    if (sums[1] <= cores_) return own_wall_seconds;
    return std::max(own_cpu_seconds, sums[0] / cores_);
  }

  // From the group's first start to its last end, at least own_wall_seconds; host_seconds().
  double wall_span(double own_wall_seconds, double start, double end) const {
    if (size_ == 1) return own_wall_seconds;
    double bounds[2] = {-start, end};  // one MPI_MAX gives the first start and the last end
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, bounds, 2, MPI_DOUBLE, MPI_MAX, sharers_));
    return std::max(own_wall_seconds, bounds[1] + bounds[0]);
  }

 private:
  MPI_Comm sharers_ = MPI_COMM_NULL;
  int size_ = 1;
  int cores_ = 1;
};

// `cost`: how ranks that share cores are timed (CoreSharing): cpu_share for kernels, wall_span
// for collectives and anything that waits on other ranks.
template <class Work>
double median_seconds(int repeats, MPI_Comm comm, Work&& work, CoreSharing::Cost cost = CoreSharing::Cost::wall_span) {
  const CoreSharing sharing(comm);
  work();  // warm-up: first-touch page faults, JIT compilation, MPI connection set-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    evict_caches();
    SB_MPI_CHECK(MPI_Barrier(comm));
    const double start = host_seconds();
    const double start_cpu = thread_cpu_seconds();
    work();
    const double end = host_seconds();
    times.push_back(cost == CoreSharing::Cost::cpu_share
                        ? sharing.cpu_share(end - start, thread_cpu_seconds() - start_cpu)
                        : sharing.wall_span(end - start, start, end));
  }
  // A synchronous step goes at its slowest rank's pace, and the cores of a shared host are not
  // equally fast (here one often runs a third slower than the other): every rank gets the
  // slowest rank's median.
  double slowest = upper_median(times);
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm));
  return slowest;
}

// Rates measured at several sizes (FLOPs or bytes): the points a saturating curve is fitted to.
struct RateSamples {
  std::vector<double> sizes;
  std::vector<double> rates;

  void add(double size, double seconds) {
    sizes.push_back(size);
    rates.push_back(size / seconds);
  }
  // A rate read against another size than the work it measures (a conv weight gradient's FLOP/s
  // against its reduction length).
  void add_rate(double size, double rate) {
    sizes.push_back(size);
    rates.push_back(rate);
  }
};

}  // namespace splitbrain::tools
