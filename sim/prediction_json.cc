#include "sim/prediction_json.h"

#include <algorithm>

#include "plans/collective_kind.h"

namespace splitbrain::sim {
namespace {

using nlohmann::ordered_json;

ordered_json mesh_json(const plans::Mesh& mesh) {
  ordered_json axes = ordered_json::object();
  for (const plans::MeshAxis& axis : mesh.axes()) axes[axis.name] = axis.size;
  return axes;
}

ordered_json axis_names(const plans::Mesh& mesh, const std::vector<int>& axes) {
  ordered_json names = ordered_json::array();
  for (int axis : axes) names.push_back(mesh.axis(axis).name);
  return names;
}

int64_t max_bytes_sent(const plans::Collective& c) {
  int64_t most = 0;
  for (int i = 0; i < c.group_size; ++i) most = std::max(most, plans::bytes_sent(c, i));
  return most;
}

ordered_json memory_json(const MemoryBreakdown& m) {
  return {{"params", m.params},
          {"grads", m.grads},
          {"optimizer", m.optimizer},
          {"activations", m.activations_peak()},
          {"buffers", m.buffers}};
}

// {level name: bytes}, innermost level first.
ordered_json bytes_per_level_json(const Cluster& cluster, const std::vector<int64_t>& bytes) {
  ordered_json levels = ordered_json::object();
  for (size_t i = 0; i < cluster.levels.size(); ++i) levels[cluster.levels[i].name] = i < bytes.size() ? bytes[i] : 0;
  return levels;
}

}  // namespace

ordered_json prediction_to_json(const plans::Plan& plan, const Cluster& cluster, const Prediction& p) {
  ordered_json level_names = ordered_json::array();
  for (const Level& level : cluster.levels) level_names.push_back(level.name);
  ordered_json ranks = ordered_json::array();
  for (const RankPrediction& r : p.ranks) {
    ranks.push_back({{"rank", r.rank},
                     {"stage", r.stage},
                     {"peak_memory_bytes", r.memory.total()},
                     {"memory", memory_json(r.memory)},
                     {"comm_bytes_sent", r.comm_bytes_sent},
                     {"comm_bytes_sent_per_level", bytes_per_level_json(cluster, r.comm_bytes_sent_per_level)},
                     // The innermost unit its device sits in (Cluster::placement's node-major numbering).
                     {"node", device_of_rank(cluster, r.rank) / cluster.levels.front().fan_out}});
  }
  const model::Model& net = *plan.model;
  ordered_json collectives = ordered_json::array();
  for (const CollectiveUse& u : p.collectives) {
    collectives.push_back({{"layer", u.layer >= 0 ? ordered_json(net.layer(u.layer).name) : ordered_json(nullptr)},
                           {"stage", u.stage},
                           {"phase", step_phase_name(u.phase)},
                           {"kind", plans::collective_name(u.collective.kind)},
                           {"axes", axis_names(plan.mesh, u.collective.axes)},
                           {"bytes", u.collective.buffer_bytes},
                           {"bytes_sent_per_rank", max_bytes_sent(u.collective)},
                           {"count", u.count},
                           {"seconds", u.seconds},
                           {"level", u.level >= 0 ? ordered_json(cluster.levels[static_cast<size_t>(u.level)].name)
                                                  : ordered_json(nullptr)}});
  }
  ordered_json layers = ordered_json::array();
  for (size_t i = 0; i < p.layers.size(); ++i) {
    const LayerTiming& t = p.layers[i];
    layers.push_back({{"name", net.layer(static_cast<int>(i)).name},
                      {"forward_seconds", t.compute.forward},
                      {"backward_input_seconds", t.compute.backward_input},
                      {"backward_weight_seconds", t.compute.backward_weight},
                      {"forward_comm_seconds", t.forward_comm_seconds},
                      {"backward_comm_seconds", t.backward_comm_seconds}});
  }
  ordered_json stages = ordered_json::array();
  for (const StageTiming& s : p.stages) {
    stages.push_back({{"forward_seconds_per_micro_batch", s.work.forward_seconds},
                      {"backward_seconds_per_micro_batch", s.work.backward_seconds},
                      {"backward_end_seconds", s.backward_end_seconds},
                      {"sync_end_seconds", s.sync_end_seconds},
                      {"optimizer_seconds", s.optimizer_seconds},
                      {"end_seconds", s.end_seconds},
                      {"host_wait_instructions", s.host_wait_instructions}});
  }
  return {{"format", kPredictionFormatName},
          {"version", kPredictionFormatVersion},
          {"family", plan.family},
          {"model", plan.model_spec},
          {"batch", plan.global_batch},
          {"micro_batches", plan.micro_batches},
          {"dtype", model::dtype_name(plan.dtype)},
          {"mesh", mesh_json(plan.mesh)},
          {"cluster", cluster.name},
          {"cluster_levels", level_names},
          {"iteration_seconds", p.iteration_seconds},
          {"samples_per_second", p.samples_per_second},
          {"phases",
           {{"compute_forward", p.phases.compute_forward},
            {"compute_backward", p.phases.compute_backward},
            {"comm_exposed", p.phases.comm_exposed},
            {"bubble", p.phases.bubble},
            {"optimizer", p.phases.optimizer}}},
          {"peak_memory_bytes", peak_memory_bytes(p)},
          {"ranks", ranks},
          {"collectives", collectives},
          {"stages", stages},
          {"layers", layers}};
}

}  // namespace splitbrain::sim
