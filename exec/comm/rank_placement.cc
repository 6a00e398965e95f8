#include "exec/comm/rank_placement.h"

#include <fmt/format.h>
#include <sched.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <system_error>

#include "exec/comm/mpi_check.h"

namespace splitbrain::exec::comm {
namespace {

std::vector<int> cpus_of(const cpu_set_t& mask) {
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &mask)) cpus.push_back(cpu);
  }
  return cpus;
}

int online_cpu_count() {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 1) throw std::system_error(errno, std::generic_category(), "sysconf(_SC_NPROCESSORS_ONLN)");
  return static_cast<int>(online);
}

// Frees a communicator on every way out, so a throwing MPI call leaks nothing.
class OwnedComm {
 public:
  OwnedComm() = default;
  ~OwnedComm() {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;
  MPI_Comm* out() { return &comm_; }
  MPI_Comm get() const { return comm_; }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

std::vector<RankPlacement> gather_placements(MPI_Comm world, const RankPlacement& mine) {
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_size(world, &ranks));
  std::array<char, MPI_MAX_PROCESSOR_NAME> host{};
  std::copy_n(mine.host.begin(), std::min(mine.host.size(), host.size() - 1), host.begin());
  std::vector<char> hosts(host.size() * static_cast<size_t>(ranks));
  SB_MPI_CHECK(MPI_Allgather(host.data(), static_cast<int>(host.size()), MPI_CHAR, hosts.data(),
                             static_cast<int>(host.size()), MPI_CHAR, world));
  const std::array<int, 2> header{static_cast<int>(mine.by), static_cast<int>(mine.cpus.size())};
  std::vector<int> headers(2 * static_cast<size_t>(ranks));
  SB_MPI_CHECK(MPI_Allgather(header.data(), 2, MPI_INT, headers.data(), 2, MPI_INT, world));
  std::vector<int> counts(static_cast<size_t>(ranks));
  std::vector<int> offsets(static_cast<size_t>(ranks));
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    counts[static_cast<size_t>(r)] = headers[2 * static_cast<size_t>(r) + 1];
    offsets[static_cast<size_t>(r)] = total;
    total += counts[static_cast<size_t>(r)];
  }
  std::vector<int> all_cpus(static_cast<size_t>(std::max(total, 1)));
  SB_MPI_CHECK(MPI_Allgatherv(mine.cpus.data(), static_cast<int>(mine.cpus.size()), MPI_INT, all_cpus.data(),
                              counts.data(), offsets.data(), MPI_INT, world));
  std::vector<RankPlacement> placements(static_cast<size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    RankPlacement& p = placements[static_cast<size_t>(r)];
    p.rank = r;
    p.host = std::string(hosts.data() + static_cast<size_t>(r) * host.size());
    p.by = static_cast<PlacedBy>(headers[2 * static_cast<size_t>(r)]);
    const auto first = all_cpus.begin() + offsets[static_cast<size_t>(r)];
    p.cpus.assign(first, first + counts[static_cast<size_t>(r)]);
  }
  return placements;
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> common;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
  return !common.empty();
}

// Ranks on common CPUs slow each other down. Splitbrain shares CPUs only when a node has more
// ranks than CPUs; a launcher's sharing is kept (its choice), so in both cases the user is told:
// one warning per host, from the gathered list, so every rank has the same ones.
std::vector<std::string> sharing_warnings(const std::vector<RankPlacement>& ranks) {
  std::vector<std::string> warnings;
  std::set<std::string> warned_hosts;
  for (size_t a = 0; a < ranks.size(); ++a) {
    for (size_t b = a + 1; b < ranks.size(); ++b) {
      const RankPlacement& p = ranks[a];
      const RankPlacement& q = ranks[b];
      if (p.by == PlacedBy::none || p.by != q.by || p.host != q.host || warned_hosts.count(p.host) > 0) continue;
      if (!overlap(p.cpus, q.cpus)) continue;
      warned_hosts.insert(p.host);
      if (p.by == PlacedBy::splitbrain) {
        const auto on_host =
            std::count_if(ranks.begin(), ranks.end(), [&](const RankPlacement& r) { return r.host == p.host; });
        warnings.push_back(
            fmt::format("{} ranks on {}, more than its CPUs: ranks share CPUs (one CPU each, round robin) and "
                        "slow each other down",
                        on_host, p.host));
      } else {
        warnings.push_back(
            fmt::format("the launcher bound ranks {} (cpus {}) and {} (cpus {}) on {} to common CPUs; they will slow "
                        "each other down. "
                        "Bind them apart (mpirun --bind-to core), or leave them unbound on all CPUs (mpirun --bind-to "
                        "none) for splitbrain to place",
                        p.rank, cpu_list_text(p.cpus), q.rank, cpu_list_text(q.cpus), p.host));
      }
    }
  }
  return warnings;
}

cpu_set_t mask_of(const std::vector<int>& cpus) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  for (int cpu : cpus) CPU_SET(static_cast<size_t>(cpu), &mask);
  return mask;
}

}  // namespace

void pin_process(const std::vector<int>& cpus) {
  const cpu_set_t mask = mask_of(cpus);
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t thread = static_cast<pid_t>(std::stol(entry.path().filename().string()));
    // ESRCH: the thread ended since the listing; nothing left to place.
    if (sched_setaffinity(thread, sizeof(mask), &mask) != 0 && errno != ESRCH) {
      throw std::system_error(errno, std::generic_category(), fmt::format("sched_setaffinity(thread {})", thread));
    }
  }
}

void pin_calling_thread(const std::vector<int>& cpus) {
  const cpu_set_t mask = mask_of(cpus);
  if (sched_setaffinity(0, sizeof(mask), &mask) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_setaffinity(calling thread)");
  }
}

std::vector<int> allowed_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
    throw std::system_error(errno, std::generic_category(), "sched_getaffinity");
  }
  return cpus_of(mask);
}

const char* placed_by_name(PlacedBy by) {
  switch (by) {
    case PlacedBy::launcher:
      return "launcher";
    case PlacedBy::splitbrain:
      return "splitbrain";
    case PlacedBy::none:
      return "none";
  }
  return "none";
}

std::vector<int> split_cpus(const std::vector<int>& allowed, int local_rank, int local_ranks) {
  if (allowed.empty()) throw std::invalid_argument("split_cpus: no allowed CPUs");
  if (local_ranks < 1 || local_rank < 0 || local_rank >= local_ranks) {
    throw std::invalid_argument(fmt::format("split_cpus: local rank {} of {}", local_rank, local_ranks));
  }
  const int64_t c = static_cast<int64_t>(allowed.size());
  const int64_t n = local_ranks;
  const int64_t i = local_rank;
  if (n > c) return {allowed[static_cast<size_t>(i % c)]};
  // Integer bounds i*c/n: the shares differ by at most one CPU and together cover every CPU once.
  return std::vector<int>(allowed.begin() + i * c / n, allowed.begin() + (i + 1) * c / n);
}

JobPlacement place_ranks(MPI_Comm world, bool pin) {
  int world_rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &world_rank));
  OwnedComm node;
  SB_MPI_CHECK(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, node.out()));
  int local_rank = 0;
  int local_ranks = 1;
  SB_MPI_CHECK(MPI_Comm_rank(node.get(), &local_rank));
  SB_MPI_CHECK(MPI_Comm_size(node.get(), &local_ranks));

  RankPlacement mine;
  mine.rank = world_rank;
  std::array<char, MPI_MAX_PROCESSOR_NAME> host{};
  int host_length = 0;
  SB_MPI_CHECK(MPI_Get_processor_name(host.data(), &host_length));
  mine.host.assign(host.data(), static_cast<size_t>(host_length));

  const std::vector<int> allowed = allowed_cpus();
  const int unbound_here = static_cast<int>(allowed.size()) >= online_cpu_count() ? 1 : 0;
  // Pin only when no rank of the node was bound: splitting CPUs that a launcher handed to some
  // of the ranks would undo its choice for those.
  int unbound_on_node = 0;
  SB_MPI_CHECK(MPI_Allreduce(&unbound_here, &unbound_on_node, 1, MPI_INT, MPI_MIN, node.get()));

  JobPlacement job;
  if (unbound_here == 0) {
    mine.by = PlacedBy::launcher;
    mine.cpus = allowed;
  } else if (pin && unbound_on_node == 1) {
    mine.by = PlacedBy::splitbrain;
    pin_process(split_cpus(allowed, local_rank, local_ranks));
    // Read back what the OS now enforces, so the report records the binding, not our intent.
    mine.cpus = allowed_cpus();
  } else {
    mine.by = PlacedBy::none;
    mine.cpus = allowed;
  }
  job.ranks = gather_placements(world, mine);
  job.warnings = sharing_warnings(job.ranks);
  return job;
}

std::string cpu_list_text(const std::vector<int>& cpus) {
  std::string text;
  for (size_t i = 0; i < cpus.size();) {
    size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!text.empty()) text += ',';
    text += j == i ? std::to_string(cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]);
    i = j + 1;
  }
  return text.empty() ? "none" : text;
}

std::vector<std::string> host_of_rank(const JobPlacement& placement) {
  std::vector<std::string> hosts;
  for (const RankPlacement& placed : placement.ranks) hosts.push_back(placed.host);
  return hosts;
}

int fewest_cpus_per_host(const JobPlacement& placement) {
  std::map<std::string, std::set<int>> cpus_of_host;
  for (const RankPlacement& placed : placement.ranks)
    cpus_of_host[placed.host].insert(placed.cpus.begin(), placed.cpus.end());
  int fewest = 0;
  for (const auto& [host, cpus] : cpus_of_host) {
    const int count = static_cast<int>(cpus.size());
    if (fewest == 0 || count < fewest) fewest = count;
  }
  return fewest;
}

std::string placement_summary(const JobPlacement& placement) {
  std::set<std::string> hosts;
  std::set<PlacedBy> kinds;
  for (const RankPlacement& p : placement.ranks) {
    hosts.insert(p.host);
    kinds.insert(p.by);
  }
  auto kind_text = [](PlacedBy by) {
    switch (by) {
      case PlacedBy::launcher:
        return "bound by the launcher";
      case PlacedBy::splitbrain:
        return "pinned by splitbrain";
      case PlacedBy::none:
        break;
    }
    return "not bound";
  };
  std::vector<std::string> parts;
  for (const RankPlacement& p : placement.ranks) {
    std::string part = fmt::format("rank {}", p.rank);
    if (hosts.size() > 1) part += " on " + p.host;
    part += " cpus " + cpu_list_text(p.cpus);
    if (kinds.size() > 1) part += fmt::format(" ({})", kind_text(p.by));
    parts.push_back(part);
  }
  std::string summary = fmt::format("{}", fmt::join(parts, ", "));
  if (kinds.size() == 1) summary += fmt::format(" ({})", kind_text(*kinds.begin()));
  return summary;
}

std::string threads_warning(const JobPlacement& placement, int threads_per_rank) {
  size_t fewest = SIZE_MAX;
  int rank = 0;
  for (const RankPlacement& p : placement.ranks) {
    if (p.cpus.size() < fewest) {
      fewest = p.cpus.size();
      rank = p.rank;
    }
  }
  if (fewest == SIZE_MAX || static_cast<size_t>(threads_per_rank) <= fewest) return {};
  return fmt::format("--threads {} but rank {} has {} CPU{} ({}): its threads will time-share them", threads_per_rank,
                     rank, fewest, fewest == 1 ? "" : "s",
                     cpu_list_text(placement.ranks[static_cast<size_t>(rank)].cpus));
}

std::vector<int> core_sharing_groups(const std::vector<std::vector<int>>& cpus_by_rank) {
  // Union-find over ranks, joined wherever two share a CPU; each root is its group's lowest rank.
  std::vector<int> parent(cpus_by_rank.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  const auto root = [&](int i) {
    while (parent[static_cast<size_t>(i)] != i) i = parent[static_cast<size_t>(i)];
    return i;
  };
  for (size_t a = 0; a < cpus_by_rank.size(); ++a) {
    for (size_t b = a + 1; b < cpus_by_rank.size(); ++b) {
      if (!overlap(cpus_by_rank[a], cpus_by_rank[b])) continue;
      const int ra = root(static_cast<int>(a));
      const int rb = root(static_cast<int>(b));
      parent[static_cast<size_t>(std::max(ra, rb))] = std::min(ra, rb);
    }
  }
  std::vector<int> groups(cpus_by_rank.size());
  for (size_t i = 0; i < groups.size(); ++i) groups[i] = root(static_cast<int>(i));
  return groups;
}

std::vector<int> job_core_sharing_groups(const std::vector<RankPlacement>& ranks) {
  std::map<std::string, std::vector<int>> ranks_of_host;
  for (size_t r = 0; r < ranks.size(); ++r) ranks_of_host[ranks[r].host].push_back(static_cast<int>(r));
  std::vector<int> groups(ranks.size());
  for (const auto& [host, members] : ranks_of_host) {
    std::vector<std::vector<int>> cpus;
    for (const int r : members) cpus.push_back(ranks[static_cast<size_t>(r)].cpus);
    const std::vector<int> local = core_sharing_groups(cpus);
    for (size_t i = 0; i < members.size(); ++i)
      groups[static_cast<size_t>(members[i])] = members[static_cast<size_t>(local[i])];
  }
  return groups;
}

MPI_Comm split_by_shared_cores(MPI_Comm comm) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  MPI_Comm host = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host));
  int host_rank = 0;
  int host_size = 0;
  SB_MPI_CHECK(MPI_Comm_rank(host, &host_rank));
  SB_MPI_CHECK(MPI_Comm_size(host, &host_size));
  // Every rank's CPUs as a fixed-size mask, so one all-gather carries them.
  cpu_set_t mine;
  CPU_ZERO(&mine);
  for (int cpu : allowed_cpus()) CPU_SET(cpu, &mine);
  std::vector<cpu_set_t> masks(static_cast<size_t>(host_size));
  SB_MPI_CHECK(MPI_Allgather(&mine, sizeof(cpu_set_t), MPI_BYTE, masks.data(), sizeof(cpu_set_t), MPI_BYTE, host));
  std::vector<std::vector<int>> cpus;
  for (const cpu_set_t& mask : masks) cpus.push_back(cpus_of(mask));
  const int group = core_sharing_groups(cpus).at(static_cast<size_t>(host_rank));
  MPI_Comm sharers = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split(host, group, host_rank, &sharers));
  SB_MPI_CHECK(MPI_Comm_free(&host));
  return sharers;
}

}  // namespace splitbrain::exec::comm
