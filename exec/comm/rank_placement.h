#pragma once
// Rank placement: which CPUs each rank of the job runs on, and who chose them.
//
// Contract of place_ranks(world, pin):
//   - Collective over `world`; call it once, right after MPI init, before any compute or thread
//     pool starts (threads made later inherit the rank's CPUs; threads that exist are moved too).
//   - A launcher that bound its ranks (mpirun --bind-to core, srun --cpu-bind) is kept: every
//     rank's placement says "launcher".
//   - Otherwise, if `pin`, the ranks on a node split its CPUs evenly (split_cpus) and say
//     "splitbrain"; if not, nothing changes and they say "none". A node where the launcher bound
//     only some ranks is left as it is (the unbound ones say "none").
//   - "Unbound" means: every rank on the node may run on every online CPU. A container's cpuset
//     that hides some online CPUs therefore reads as the launcher's binding (kept; a warning in
//     JobPlacement::warnings tells when two of its ranks overlap).
//   - Throws MpiError when an MPI call fails and std::system_error when the OS refuses the
//     affinity calls; it never ends the job or prints (the command decides).
//
// Why: launchers do not always bind. Open MPI 4 binds to a core only for jobs of up to 2 ranks,
// to a whole package or NUMA node above that, and not at all when oversubscribed or told
// --bind-to none; unbound ranks migrate between cores and share caches. The project's issue
// measured vgg11-cifar10 on 2 ranks 40-53% slower unbound than with --bind-to core, and the cost
// model, which assumes a core per rank, mispredicts such runs (tools/bench/rank-placement.sh
// measures it again).

#include <mpi.h>

#include <string>
#include <vector>

namespace splitbrain::exec::comm {

enum class PlacedBy { launcher, splitbrain, none };

// "launcher", "splitbrain", "none": the names the run report and the summary line use.
const char* placed_by_name(PlacedBy by);

struct RankPlacement {
  int rank = 0;           // world rank
  std::string host;       // MPI_Get_processor_name
  std::vector<int> cpus;  // the CPUs the rank may run on after placement, ascending
  PlacedBy by = PlacedBy::none;
};

struct JobPlacement {
  std::vector<RankPlacement> ranks;   // one per world rank, on every rank
  std::vector<std::string> warnings;  // the same on every rank; print them from one rank
};

// Moves every thread of this process onto `cpus`. The main thread alone is not enough: MPI_Init
// has already started helper threads (Open MPI's progress and PMIx threads), and a launcher's
// binding, which place_ranks stands in for, covers the whole process. Threads created later
// inherit the mask of their creator. Throws std::system_error when the OS refuses.
void pin_process(const std::vector<int>& cpus);

// Moves the calling thread alone onto `cpus`. Throws std::system_error when the OS refuses.
void pin_calling_thread(const std::vector<int>& cpus);

// The CPUs the calling thread may run on (sched_getaffinity), ascending. Throws std::system_error
// when the OS refuses.
std::vector<int> allowed_cpus();

// The CPUs local rank `local_rank` of `local_ranks` gets from the node's `allowed` CPUs (c of
// them): [i*c/n, (i+1)*c/n) of `allowed` when n <= c; when n > c ranks must share, and rank i gets
// the single CPU allowed[i % c]. Pure; std::invalid_argument for an empty `allowed` or a
// local_rank outside [0, local_ranks).
std::vector<int> split_cpus(const std::vector<int>& allowed, int local_rank, int local_ranks);

// Places this rank (see the contract above) and gathers every rank's placement.
JobPlacement place_ranks(MPI_Comm world, bool pin);

// "rank 0 cpus 0-3, rank 1 cpus 4-7 (pinned by splitbrain)"; host names are added when the
// job spans more than one host. "(pinned by ...)" reads "(bound by the launcher)" and
// "(not bound)" for the other two kinds, and lists each kind when ranks differ.
std::string placement_summary(const JobPlacement& placement);

// Each world rank's host name, by rank.
std::vector<std::string> host_of_rank(const JobPlacement& placement);

// The CPUs that the ranks of one host may run on together (the union of their CPU sets), the
// fewest over the hosts: the cores a node's ranks compute on, for the cost model
// (sim::Cluster::cpu_cores_per_node). 0 for no ranks. Pure.
int fewest_cpus_per_host(const JobPlacement& placement);

// A warning when a rank has fewer CPUs than `threads_per_rank` compute threads (they would
// time-share its cores), empty otherwise.
std::string threads_warning(const JobPlacement& placement, int threads_per_rank);

// Ranks that time-share cores: entry i of the result labels rank i (of `cpus_by_rank`, the CPUs
// each rank of one host may run on) with the lowest rank it shares a CPU with, directly or
// through others; a rank on CPUs of its own is labelled with itself. Pure.
std::vector<int> core_sharing_groups(const std::vector<std::vector<int>>& cpus_by_rank);

// core_sharing_groups over a whole job: entry r labels world rank r with the lowest world rank of
// its host it shares a CPU with (ranks on other hosts never share). `ranks` indexed by world rank,
// as JobPlacement::ranks. Pure.
std::vector<int> job_core_sharing_groups(const std::vector<RankPlacement>& ranks);

// The ranks of `comm` that time-share cores with this one (on its host, by core_sharing_groups of
// their CPUs now), as a new communicator the caller frees; a rank on cores of its own gets a
// communicator of one. Collective over `comm`. Why: ranks on one core take turns, so a kernel
// that one of them times from its own start can look as fast as on a core of its own, while a
// synchronous step waits for all of them (calibrate times from the first start to the last end).
MPI_Comm split_by_shared_cores(MPI_Comm comm);

// "0-3,6" for {0, 1, 2, 3, 6}: the kernel's cpu-list notation (taskset, /proc/self/status).
std::string cpu_list_text(const std::vector<int>& cpus);

}  // namespace splitbrain::exec::comm
