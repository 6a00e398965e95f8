#include "tools/training/placement_announcement.h"

#include <fmt/format.h>
#include <mpi.h>

#include <iostream>

#include "exec/comm/driver_thread_cpu.h"
#include "exec/comm/mpi_check.h"

namespace splitbrain::tools {

exec::comm::JobPlacement place_and_announce(bool pin, const std::string& tag) {
  exec::comm::JobPlacement placement = exec::comm::place_ranks(MPI_COMM_WORLD, pin);
  // Every rank holds the same summary and warnings; one copy is enough.
  if (exec::comm::world_rank() == 0) {
    std::cout << fmt::format("[{}] placement: {}\n", tag, exec::comm::placement_summary(placement));
    std::cout << std::flush;
    for (const std::string& warning : placement.warnings) std::cerr << fmt::format("[{}] warning: {}\n", tag, warning);
  }
  return placement;
}

void give_driver_its_own_cpu(const std::string& tag, bool say) {
  const auto placed = exec::comm::give_calling_thread_its_own_cpu();
  if (!say) return;
  if (placed) {
    std::cout << fmt::format(
        "[{}] the thread driving the GPU runs alone on cpu {}; the rank's other threads on cpus {}\n", tag,
        placed->driver_cpu, exec::comm::cpu_list_text(placed->helper_cpus));
  } else {
    std::cout << fmt::format("[{}] the thread driving the GPU shares the rank's only CPU with its other threads\n",
                             tag);
  }
  std::cout << std::flush;
}

}  // namespace splitbrain::tools
