#include "tools/calibration/level_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <iostream>

#include "exec/comm/mpi_check.h"
#include "sim/cluster_json.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/calibration/message_overhead_calibration.h"

namespace splitbrain::tools {
namespace {

std::string link_text(const sim::Link& link) {
  return fmt::format("{:.3f} GB/s and {:.2f} us", link.bandwidth_bytes_per_second / 1e9, link.latency_seconds * 1e6);
}

void take_measured(sim::Level& level, const MeasuredCommunication& measured) {
  level.link = measured.all_reduce_link;
  level.collective_links = measured.links;
}

// Every rank takes world rank 0's cluster: each group measured its own links, and what follows
// (planning the --model problems every rank then times together) must be the same on all ranks.
void take_leaders_cluster(MPI_Comm world, sim::Cluster& cluster) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  std::string text = rank == 0 ? sim::cluster_json_text(cluster) : std::string();
  uint64_t length = text.size();
  SB_MPI_CHECK(MPI_Bcast(&length, 1, MPI_UINT64_T, 0, world));
  text.resize(length);
  SB_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, world));
  if (rank != 0) cluster = sim::parse_cluster_json(text, "calibrate: rank 0's measured cluster");
}

// The ranks of `world` split by `color` (rank order kept).
MPI_Comm split(MPI_Comm world, int color) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  MPI_Comm part = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split(world, color, rank, &part));
  return part;
}

std::string overhead_text(const sim::MessageOverhead& overhead) {
  return fmt::format("{:.1f} us + {:.2f} us/KiB", overhead.seconds * 1e6, overhead.seconds_per_byte * 1024 * 1e6);
}

// "; node messages: send ..., receive ..." where the level's were measured.
std::string messages_text(const sim::Level& level) {
  if (level.send_overhead == sim::MessageOverhead{} && level.receive_overhead == sim::MessageOverhead{}) return "";
  return fmt::format("; {} messages: send {}, receive {}", level.name, overhead_text(level.send_overhead),
                     overhead_text(level.receive_overhead));
}

// A pipeline message's overheads on `level`, measured by the pairs of world ranks that share a
// `color` (MPI_UNDEFINED: sits out, asleep); world rank 0's pair prints, and its numbers are the
// ones every rank keeps (take_leaders_cluster).
void measure_messages(const CollectiveCalibration& options, MPI_Comm world, int color, sim::Level& level) {
  int rank = 0;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  MPI_Comm pair = split(world, color);
  if (pair != MPI_COMM_NULL) {
    const bool print = options.print && rank == 0;
    if (print) std::cout << fmt::format("[calibrate] {} level: a pipeline message's host overheads\n", level.name);
    const MessageOverheads overheads =
        measure_message_overheads(pair, level.link_for(plans::CollectiveKind::send_recv), options.repeats, print);
    level.send_overhead = overheads.send;
    level.receive_overhead = overheads.receive;
    if (print) {
      std::cout << fmt::format("[calibrate] {} level: send {}, receive {}\n", level.name, overhead_text(overheads.send),
                               overhead_text(overheads.receive));
    }
    SB_MPI_CHECK(MPI_Comm_free(&pair));
  }
  MPI_Request measured = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibarrier(world, &measured));
  wait_asleep(measured);
}

}  // namespace

MeasuredLevels calibrate_levels(const CollectiveCalibration& options, MPI_Comm world, const HostLayout& layout,
                                sim::Cluster& cluster) {
  int rank = 0;
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_rank(world, &rank));
  SB_MPI_CHECK(MPI_Comm_size(world, &ranks));
  const bool leader = rank == 0;
  CollectiveCalibration leader_prints = options;
  leader_prints.print = options.print && leader;
  CollectiveTransport& transport = options.transport != nullptr ? *options.transport : mpi_collective_transport();
  // The overlap is an MPI reduction's behind the CPU's compute; on GPUs the base cluster's stays.
  const bool on_mpi = &transport == &mpi_collective_transport();
  const auto overlap_text = [&] {
    return fmt::format("communication overlap {:+.2f}{}", cluster.communication_overlap,
                       on_mpi ? "" : " (the base cluster's)");
  };
  if (ranks == 1) {
    if (leader)
      std::cout << "[calibrate] 1 rank: the link keeps the preset's numbers (run under mpirun -np 2 to measure it)\n";
    return {"the preset's link (1 rank: nothing to measure)", "one rank: the base cluster's levels, not measured"};
  }
  const int hosts = static_cast<int>(layout.hosts.size());
  if (hosts == 1) {
    if (leader) std::cout << fmt::format("[calibrate] collectives through {}\n", transport.name());
    const MeasuredCommunication measured = calibrate_collectives(leader_prints, world, cluster);
    sim::Level& level = cluster.levels.front();
    level.fan_out = std::max(level.fan_out, ranks);
    take_measured(level, measured);
    if (on_mpi) {
      cluster.communication_overlap = measure_overlap(options, world, options.print && leader);
      measure_messages(options, world, rank < 2 ? 0 : MPI_UNDEFINED, level);
      take_leaders_cluster(world, cluster);  // (`level` refers to the old levels from here on)
    }
    const sim::Level& one = cluster.levels.front();
    return {fmt::format("all-reduce {}, {}{}", link_text(one.link), overlap_text(), messages_text(one)),
            fmt::format("one level: the collectives among all {} ranks of one host through {}{}", ranks,
                        transport.name(), on_mpi ? "; a pipeline message's overheads between ranks 0 and 1" : "")};
  }

  // Two levels: the base's innermost level becomes the node, a new one joins the hosts.
  sim::Level node = cluster.levels.front();
  node.name = "node";
  node.fan_out = layout.ranks_per_host;
  sim::Level between;
  between.name = "cluster";
  between.fan_out = hosts;
  between.link = node.link;
  std::string node_source = "the node level keeps the base cluster's link (one rank per host: nothing to measure)";
  if (layout.ranks_per_host > 1) {
    if (leader) {
      std::cout << fmt::format(
          "[calibrate] node level: collectives among the {} ranks of each host, {} hosts at once\n",
          layout.ranks_per_host, hosts);
    }
    MPI_Comm on_host = split(world, layout.host_of_rank[static_cast<size_t>(rank)]);
    take_measured(node, calibrate_collectives(leader_prints, on_host, cluster));
    SB_MPI_CHECK(MPI_Comm_free(&on_host));
    const int position = layout.position_on_host[static_cast<size_t>(rank)];
    if (on_mpi)
      measure_messages(options, world, position < 2 ? layout.host_of_rank[static_cast<size_t>(rank)] : MPI_UNDEFINED,
                       node);
    node_source = fmt::format("the node level among the {} ranks of each host, all {} hosts at once",
                              layout.ranks_per_host, hosts);
  }
  if (leader) {
    std::cout << fmt::format(
        "[calibrate] cluster level: collectives among the first rank of each host ({} hosts), the other ranks "
        "idle\n",
        hosts);
  }
  // One group measures the way out of each host alone: its latency is the wire's, not that of
  // ranks that share a core polling at once (on 2 emulated hosts of 2 ranks per core, about 7x
  // the wire's), and its bandwidth is the whole port's. The simulator shares the port among
  // the groups that cross it at once (Level::uplink_shared, sim/link_sharing.h). The other ranks
  // wait asleep, so they take no core from it.
  const bool measures = layout.position_on_host[static_cast<size_t>(rank)] == 0;
  MPI_Comm across = split(world, measures ? 0 : MPI_UNDEFINED);
  if (measures) {
    take_measured(between, calibrate_collectives(leader_prints, across, cluster));
    SB_MPI_CHECK(MPI_Comm_free(&across));
  }
  MPI_Request measured = MPI_REQUEST_NULL;
  SB_MPI_CHECK(MPI_Ibarrier(world, &measured));
  wait_asleep(measured);
  if (on_mpi) {
    // Between the first ranks of the first two hosts, as the link.
    measure_messages(options, world, measures && layout.host_of_rank[static_cast<size_t>(rank)] < 2 ? 0 : MPI_UNDEFINED,
                     between);
  }
  // The overlap that matters most is that of a gradient all-reduce across the hosts, measured as a
  // step runs it: every rank computing, each reducing with its counterparts on the other hosts
  // (the data-parallel groups), so the cores' other ranks compete for them (on 2 emulated hosts
  // of 2 ranks per core, the first ranks alone read 51-73% hidden in three calibrations, all
  // ranks at once 64%). With one rank per host that is the cluster level's group.
  if (on_mpi) {
    if (leader) {
      std::cout << "[calibrate] overlap across the hosts: every rank computing, each reducing with its counterparts\n";
    }
    MPI_Comm counterparts = split(world, layout.position_on_host[static_cast<size_t>(rank)]);
    double overlap = measure_overlap(options, counterparts, options.print && leader);
    SB_MPI_CHECK(MPI_Comm_free(&counterparts));
    // The least hidden: a synchronous step waits for its slowest group.
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &overlap, 1, MPI_DOUBLE, MPI_MIN, world));
    cluster.communication_overlap = overlap;
    if (leader)
      std::cout << fmt::format("[calibrate] overlap across the hosts: {:+.2f} (the least of the groups)\n", overlap);
  }
  between.uplink_shared = true;
  cluster.levels = {node, between};
  take_leaders_cluster(world, cluster);
  return {fmt::format("node all-reduce {}, between hosts {} per host (shared by the groups crossing at once); {}{}{}",
                      link_text(cluster.levels.front().link), link_text(cluster.levels.back().link), overlap_text(),
                      messages_text(cluster.levels.front()), messages_text(cluster.levels.back())),
          fmt::format("two levels on {} hosts of {} ranks through {}: {}; the cluster level among the first rank of "
                      "each host, the other ranks idle{}",
                      hosts, layout.ranks_per_host, transport.name(), node_source,
                      on_mpi ? "; the overlap with every rank computing, each reducing with its counterparts on the "
                               "other hosts; a pipeline message's overheads between two ranks of each level, the "
                               "others idle"
                             : "")};
}

}  // namespace splitbrain::tools
