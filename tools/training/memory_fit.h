#pragma once
// `run` refuses, before anything is allocated, a plan whose predicted memory does not fit the
// machine: the step programs' peaks of the ranks on this node (plans::step_memory) against the
// node's available memory (MemAvailable). Without it such a run dies in the middle with
// bad_alloc or the kernel's OOM killer. The prediction counts what the plan holds, not the
// process's own overhead (libraries, data), so a plan that fits here can still be close.

#include <cstdint>
#include <string>

#include "exec/comm/mesh_communicators.h"
#include "plans/plan.h"

namespace splitbrain::tools {

// Bytes the kernel says can be allocated without swapping (/proc/meminfo MemAvailable); -1
// where it does not say.
int64_t available_memory_bytes();

// Collective over all ranks. Throws InputError on every rank, naming the node's predicted and
// available bytes and `override_flag`, when the ranks sharing this node would not fit.
void check_plan_fits_memory(const plans::Plan& plan, exec::comm::MeshCommunicators& communicators,
                            const std::string& override_flag);

}  // namespace splitbrain::tools
