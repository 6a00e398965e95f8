#pragma once
// Timing for `splitbrain calibrate`: the median of several runs, every rank running at once so
// the rates include the contention of one rank per core, as in training.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "exec/comm/mpi_check.h"

namespace splitbrain::tools {

template <class Work>
double median_seconds(int repeats, MPI_Comm comm, Work&& work) {
  work();  // warm-up: first-touch page faults, JIT compilation, MPI connection set-up
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    SB_MPI_CHECK(MPI_Barrier(comm));
    const auto start = std::chrono::steady_clock::now();
    work();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Rates measured at several sizes (FLOPs or bytes): the points a saturating curve is fitted to.
struct RateSamples {
  std::vector<double> sizes;
  std::vector<double> rates;

  void add(double size, double seconds) {
    sizes.push_back(size);
    rates.push_back(size / seconds);
  }
};

}  // namespace splitbrain::tools
