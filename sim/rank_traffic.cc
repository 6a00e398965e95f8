#include "sim/rank_traffic.h"

#include <cstdint>
#include <map>
#include <vector>

#include "plans/collective_kind.h"
#include "sim/plan_collective_cost.h"

namespace splitbrain::sim {
namespace {

// The outermost cluster level each rank's group over some axes crosses.
class GroupLevels {
 public:
  GroupLevels(const plans::Plan& plan, const Cluster& cluster) : plan_(plan), cluster_(cluster) {}

  // The level the group of `axes` around `rank` crosses, memoised per axes: collectives of the
  // same axes share groups, and a mesh whose axes do not align with nodes has groups that differ.
  int of(const std::vector<int>& axes, int rank) {
    auto [it, inserted] = level_by_axes_.try_emplace(axes);
    if (inserted) {
      // A group's members share its level: one group's span is found once (a 3,072-rank data
      // axis would otherwise sort 3,072 groups of 3,072 per prediction).
      std::vector<int>& levels = it->second;
      levels.assign(static_cast<size_t>(plan_.mesh.rank_count()), -1);
      for (int r = 0; r < plan_.mesh.rank_count(); ++r) {
        if (levels[static_cast<size_t>(r)] >= 0) continue;
        const std::vector<int> group = plan_.mesh.group(r, axes);
        const int level = level_spanned(cluster_, group);
        for (int member : group) levels[static_cast<size_t>(member)] = level;
      }
    }
    return it->second[static_cast<size_t>(rank)];
  }

 private:
  const plans::Plan& plan_;
  const Cluster& cluster_;
  std::map<std::vector<int>, std::vector<int>> level_by_axes_;  // level per rank, by axes
};

}  // namespace

std::vector<RankPrediction> rank_predictions(const plans::Plan& plan, const Cluster& cluster,
                                             std::span<const CollectiveUse> uses,
                                             std::span<const MemoryBreakdown> memory_of_stage) {
  GroupLevels levels(plan, cluster);
  std::vector<RankPrediction> ranks;
  // Most collectives send the same bytes from every member: add those once per stage. Only
  // the others (pipeline hand-overs, uneven all-reduce chunks, halo edges) are added rank by
  // rank, with each rank's index in the group of that collective's axes.
  // Their bytes per level are kept per axes, whose group's level is found per rank.
  std::vector<int64_t> uniform(static_cast<size_t>(plan.stage_count()), 0);
  std::vector<std::map<std::vector<int>, int64_t>> uniform_by_axes(static_cast<size_t>(plan.stage_count()));
  std::vector<const CollectiveUse*> varying;
  for (const CollectiveUse& u : uses) {
    const int64_t first = plans::bytes_sent(u.collective, 0);
    bool same = u.collective.kind != plans::CollectiveKind::send_recv;
    for (int i = 1; same && i < u.collective.group_size; ++i) same = plans::bytes_sent(u.collective, i) == first;
    if (same) {
      uniform[static_cast<size_t>(u.stage)] += u.count * first;
      uniform_by_axes[static_cast<size_t>(u.stage)][u.collective.axes] += u.count * first;
    } else {
      varying.push_back(&u);
    }
  }
  std::map<std::vector<int>, std::vector<int>> index_by_axes;
  for (const CollectiveUse* u : varying) {
    auto [it, inserted] = index_by_axes.try_emplace(u->collective.axes);
    if (!inserted) continue;
    for (int rank = 0; rank < plan.mesh.rank_count(); ++rank)
      it->second.push_back(plan.mesh.index_in_group(rank, u->collective.axes));
  }
  for (int rank = 0; rank < plan.mesh.rank_count(); ++rank) {
    const int stage = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
    RankPrediction r{rank, stage, memory_of_stage[static_cast<size_t>(stage)], uniform[static_cast<size_t>(stage)], {}};
    r.comm_bytes_sent_per_level.assign(cluster.levels.size(), 0);
    for (const auto& [axes, bytes] : uniform_by_axes[static_cast<size_t>(stage)]) {
      // Group kinds send over their whole group (plans::sent_spans): its level, found once per group.
      const int level = levels.of(axes, rank);
      if (level >= 0) r.comm_bytes_sent_per_level[static_cast<size_t>(level)] += bytes;
    }
    for (const CollectiveUse* u : varying) {
      // Pipeline hand-overs involve two stages; bytes_sent tells the sender from the rest.
      const bool involved = u->collective.kind == plans::CollectiveKind::send_recv || u->stage == stage;
      if (!involved) continue;
      const int index = index_by_axes.at(u->collective.axes)[static_cast<size_t>(rank)];
      const int64_t sent = u->count * plans::bytes_sent(u->collective, index);
      r.comm_bytes_sent += sent;
      const plans::CollectiveKind kind = u->collective.kind;
      if (kind == plans::CollectiveKind::send_recv || kind == plans::CollectiveKind::halo_exchange) {
        // Over the link of a pair: its own level.
        add_bytes_per_level(cluster, plan.mesh, u->collective, rank, u->count, r.comm_bytes_sent_per_level);
      } else if (const int level = levels.of(u->collective.axes, rank); sent > 0 && level >= 0) {
        r.comm_bytes_sent_per_level[static_cast<size_t>(level)] += sent;
      }
    }
    ranks.push_back(r);
  }
  return ranks;
}

}  // namespace splitbrain::sim
