#include "exec/comm/driver_thread_cpu.h"

#include <sched.h>

#include <algorithm>
#include <iterator>

#include "exec/comm/rank_placement.h"

namespace splitbrain::exec::comm {

std::optional<DriverThreadCpus> give_calling_thread_its_own_cpu() {
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) return std::nullopt;
  // Staying where it runs spares the driver a migration and its warm caches.
  const int current = sched_getcpu();
  DriverThreadCpus placed;
  placed.driver_cpu = std::find(cpus.begin(), cpus.end(), current) != cpus.end() ? current : cpus.front();
  std::copy_if(cpus.begin(), cpus.end(), std::back_inserter(placed.helper_cpus),
               [&](int cpu) { return cpu != placed.driver_cpu; });
  // Every thread onto the helpers' CPUs first, so that none is left on the driver's once the
  // driver moves there.
  pin_process(placed.helper_cpus);
  pin_calling_thread({placed.driver_cpu});
  return placed;
}

}  // namespace splitbrain::exec::comm
