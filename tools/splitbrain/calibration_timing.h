#pragma once
// Timing for `splitbrain calibrate`: the median of several runs, every rank running at once so
// the rates include the contention of one rank per core, as in training; the slowest rank's.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "exec/comm/mpi_check.h"

namespace splitbrain::tools {

// Training runs each layer once per step on data the layers before it pushed out of the cache;
// timing a kernel again and again on hot data would credit it with a rate training never sees.
// Writing a buffer larger than this core's caches before each timed run puts the kernel back in
// training's conditions.
inline void evict_caches() {
  static std::vector<char> sweep(size_t{32} << 20);
  for (size_t i = 0; i < sweep.size(); i += 64) sweep[i] = static_cast<char>(sweep[i] + 1);
}

// The upper median (the middle value of an odd count, the higher middle one of an even count):
// always a time that was measured. `values` must not be empty.
inline double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

template <class Work>
double median_seconds(int repeats, MPI_Comm comm, Work&& work) {
  work();  // warm-up: first-touch page faults, JIT compilation, MPI connection set-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    evict_caches();
    SB_MPI_CHECK(MPI_Barrier(comm));
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
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
