#include "tools/calibration/cache_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <iostream>
#include <memory>
#include <vector>

#include "tools/calibration/cache_knee.h"
#include "tools/calibration/calibration_timing.h"

namespace splitbrain::tools {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
// From past any core's private L2 (1-2 MiB on current server CPUs) to far past a last-level
// cache slice: the last gives the memory's rate.
constexpr double kWorkingSetsMiB[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};
constexpr int kPasses = 9;

// Reads `bytes` of `data` once: copied in L1-sized pieces into one small buffer, so the library's
// vectorised copy reads at the cache's or the memory's full rate and the writes stay in L1.
void read_through(const char* data, size_t bytes) {
  static char landing[16384];
  for (size_t offset = 0; offset < bytes; offset += sizeof landing)
    std::memcpy(landing, data + offset, std::min(sizeof landing, bytes - offset));
  asm volatile("" : : "r"(landing) : "memory");  // the copies must happen
}

std::vector<ReadRate> measure_read_rates() {
  const auto largest = static_cast<size_t>(kWorkingSetsMiB[std::size(kWorkingSetsMiB) - 1] * kMiB);
  const std::unique_ptr<char[]> data(new char[largest]);
  std::memset(data.get(), 1, largest);
  std::vector<std::vector<double>> seconds(std::size(kWorkingSetsMiB));
  for (int pass = 0; pass < kPasses; ++pass) {
    for (size_t i = 0; i < std::size(kWorkingSetsMiB); ++i) {
      const auto bytes = static_cast<size_t>(kWorkingSetsMiB[i] * kMiB);
      read_through(data.get(), bytes);  // in the cache as far as it fits
      const double start = host_seconds();
      read_through(data.get(), bytes);
      seconds[i].push_back(host_seconds() - start);
    }
  }
  std::vector<ReadRate> rates;
  for (size_t i = 0; i < std::size(kWorkingSetsMiB); ++i) {
    const double bytes = kWorkingSetsMiB[i] * kMiB;
    rates.push_back({bytes, bytes / upper_median(seconds[i])});
  }
  return rates;
}

}  // namespace

double measure_host_cache_bytes(MPI_Comm world, MPI_Comm host, bool print, double described_bytes) {
  int host_rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(host, &host_rank));
  double measured = 0.0;
  if (host_rank == 0) {
    const std::vector<ReadRate> rates = measure_read_rates();
    measured = cache_bytes_from_read_rates(rates);
    if (print) {
      std::cout << "[calibrate] cache: read rate by working set (one rank of the host reading, the rest asleep)\n";
      for (const ReadRate& rate : rates) {
        std::cout << fmt::format("[calibrate] cache: {:>6.0f} MiB  {:7.2f} GB/s\n", rate.working_set_bytes / kMiB,
                                 rate.bytes_per_second / 1e9);
      }
    }
  }
  MPI_Request done = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibcast(&measured, 1, MPI_DOUBLE, 0, host, &done));
  wait_asleep(done);
  // A host whose curve told no cache apart counts as unmeasured, not as the smallest.
  double smallest = measured > 0.0 ? measured : std::numeric_limits<double>::infinity();
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &smallest, 1, MPI_DOUBLE, MPI_MIN, world));
  const bool any = std::isfinite(smallest);
  const double bytes = any ? smallest : described_bytes;
  if (print) {
    std::cout << (any ? fmt::format("[calibrate] cache: {:.1f} MiB a step's data shares (where the read "
                                    "rate falls halfway to the memory's; the CPU describes {:.1f} MiB)\n",
                                    bytes / kMiB, described_bytes / kMiB)
                      : fmt::format("[calibrate] cache: no cache told apart by the read rates; taking the "
                                    "{:.1f} MiB the CPU describes\n",
                                    described_bytes / kMiB))
              << std::flush;
  }
  return bytes;
}

}  // namespace splitbrain::tools
