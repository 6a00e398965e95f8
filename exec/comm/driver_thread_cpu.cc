#include "exec/comm/driver_thread_cpu.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include "exec/comm/rank_placement.h"

namespace splitbrain::exec::comm {
namespace {

cpu_set_t mask_of(const std::vector<int>& cpus) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : cpus) CPU_SET(static_cast<size_t>(cpu), &mask);
  return mask;
}

void set_thread_cpus(pid_t thread, const std::vector<int>& cpus) {
  const cpu_set_t mask = mask_of(cpus);
  // ESRCH: the thread ended since the listing; nothing left to place.
  if (sched_setaffinity(thread, sizeof(mask), &mask) != 0 && errno != ESRCH) {
    throw std::system_error(errno, std::generic_category(), fmt::format("sched_setaffinity(thread {})", thread));
  }
}

}  // namespace

std::optional<DriverThreadCpus> give_calling_thread_its_own_cpu() {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  // Staying where it runs spares the driver a migration and its warm caches.
  const int current = sched_getcpu();
  DriverThreadCpus placed;
  placed.driver_cpu = std::find(cpus.begin(), cpus.end(), current) != cpus.end() ? current : cpus.front();
  std::copy_if(cpus.begin(), cpus.end(), std::back_inserter(placed.helper_cpus),
               [&](int cpu) { return cpu != placed.driver_cpu; });

  const auto self = static_cast<pid_t>(syscall(SYS_gettid));
  // Helpers first, so that none is left on the driver's CPU once the driver is pinned there.
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const auto thread = static_cast<pid_t>(std::stol(entry.path().filename().string()));
    if (thread != self) set_thread_cpus(thread, placed.helper_cpus);
  }
  set_thread_cpus(self, {placed.driver_cpu});
  return placed;
}

}  // namespace splitbrain::exec::comm
