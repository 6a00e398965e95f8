#include "tools/splitbrain/plan_report.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>

#include "plans/compiled_plan.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/text_table.h"

namespace splitbrain::tools {
namespace {

// The figures of one ranked plan, computed once for every output format.
struct Row {
  int rank = 0;
  std::string family;
  std::string mesh;
  double seconds = 0.0;
  double speedup = 0.0;
  int64_t peak_bytes = 0;
  double memory_saving = 0.0;  // against data parallelism; 0 when it does not apply
  double comm_exposed = 0.0;
  double bubble = 0.0;
  bool feasible = false;
  std::string plan_file;
};

std::vector<Row> rows(const PlanReport& report) {
  std::vector<Row> result;
  const sim::PlannerResult& r = report.result;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    const sim::PricedPlan& p = r.plans[i];
    Row row;
    row.rank = static_cast<int>(i) + 1;
    row.family = p.plan.family;
    row.mesh = p.plan.mesh.to_string();
    if (p.plan.pipe_axis >= 0) row.mesh += fmt::format(" x{} micro-batches", p.plan.micro_batches);
    row.seconds = p.prediction.iteration_seconds;
    row.speedup = r.single_device_seconds / row.seconds;
    row.peak_bytes = sim::peak_memory_bytes(p.prediction);
    if (r.data_parallel_peak_bytes > 0) {
      row.memory_saving = 1.0 - static_cast<double>(row.peak_bytes) / static_cast<double>(r.data_parallel_peak_bytes);
    }
    row.comm_exposed = p.prediction.phases.comm_exposed;
    row.bubble = p.prediction.phases.bubble;
    row.feasible = p.feasible;
    row.plan_file = report.plan_files.empty() ? "" : report.plan_files[i];
    result.push_back(row);
  }
  return result;
}

// "-0%" reads like a bug: round first.
std::string percent(double fraction) {
  const long rounded = std::lround(100 * fraction);
  return fmt::format("{}%", rounded == 0 ? 0 : rounded);
}

std::string milliseconds(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }

std::string sharding_text(const plans::LayerSharding& s, const plans::Mesh& mesh) {
  std::string text;
  for (plans::ShardRole role :
       {plans::ShardRole::batch, plans::ShardRole::out, plans::ShardRole::in, plans::ShardRole::spatial}) {
    if (s.axes(role).empty()) continue;
    std::string axes;
    for (int axis : s.axes(role)) axes += (axes.empty() ? "" : "+") + mesh.axis(axis).name;
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", plans::role_name(role), axes);
  }
  return text.empty() ? "replicated" : text;
}

}  // namespace

nlohmann::ordered_json plan_report_json(const PlanReport& report) {
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const Row& row : rows(report)) {
    const sim::PricedPlan& p = report.result.plans[static_cast<size_t>(row.rank - 1)];
    nlohmann::ordered_json mesh = nlohmann::ordered_json::object();
    for (const plans::MeshAxis& axis : p.plan.mesh.axes()) mesh[axis.name] = axis.size;
    nlohmann::ordered_json entry = {{"rank", row.rank},
                                    {"family", row.family},
                                    {"mesh", mesh},
                                    {"iteration_seconds", row.seconds},
                                    {"samples_per_second", p.prediction.samples_per_second},
                                    {"speedup", row.speedup},
                                    {"peak_memory_bytes", row.peak_bytes},
                                    {"memory_saving_vs_data_parallel", row.memory_saving},
                                    {"comm_exposed_seconds", row.comm_exposed},
                                    {"bubble_seconds", row.bubble},
                                    {"micro_batches", p.plan.micro_batches},
                                    {"zero_stage", p.plan.zero_stage},
                                    {"recompute_activations", p.plan.recompute_activations},
                                    {"recompute_attention", p.plan.recompute_attention},
                                    {"feasible", row.feasible}};
    if (!row.plan_file.empty()) entry["plan_file"] = row.plan_file;
    plans.push_back(std::move(entry));
  }
  const sim::SearchStats& stats = report.result.stats;
  return {{"model", report.request.model_spec},
          {"cluster", report.request.cluster.name},
          {"devices", report.request.devices},
          {"batch", report.request.global_batch},
          {"dtype", model::dtype_name(report.request.dtype)},
          {"memory_limit_bytes", report.request.effective_memory_limit()},
          {"single_device_seconds", report.result.single_device_seconds},
          {"search_seconds", report.result.search_seconds},
          {"plans_simulated", stats.plans_simulated},
          {"memory_walks", stats.memory_walks},
          {"layer_prices", stats.layer_prices},
          {"plans_left_out", stats.plans_left_out},
          {"first_left_out_reason", stats.first_left_out_reason},
          {"plans", plans}};
}

std::string plan_report_csv(const PlanReport& report) {
  std::string csv =
      "rank,family,mesh,iteration_seconds,speedup,peak_memory_bytes,memory_saving_vs_data_parallel,"
      "comm_exposed_seconds,bubble_seconds,feasible,plan_file\n";
  for (const Row& row : rows(report)) {
    csv += fmt::format("{},\"{}\",\"{}\",{:.9g},{:.6g},{},{:.6g},{:.9g},{:.9g},{},{}\n", row.rank, row.family, row.mesh,
                       row.seconds, row.speedup, row.peak_bytes, row.memory_saving, row.comm_exposed, row.bubble,
                       row.feasible ? "true" : "false", row.plan_file);
  }
  return csv;
}

void print_plan_table(std::ostream& out, const PlanReport& report, int top) {
  const sim::PlannerRequest& q = report.request;
  out << fmt::format("{} on {} x {} ({}), batch {}, {}, memory limit {} per device\n", q.model_spec, q.devices,
                     q.cluster.device.name, q.cluster.name, q.global_batch, model::dtype_name(q.dtype),
                     human_bytes(static_cast<double>(q.effective_memory_limit())));
  out << fmt::format("one device: {} ms per step\n\n", milliseconds(report.result.single_device_seconds));
  TextTable table({{"rank"},
                   {"family", TextTable::Align::left},
                   {"mesh", TextTable::Align::left},
                   {"step ms"},
                   {"speedup"},
                   {"peak mem/rank"},
                   {"saving vs DP"},
                   {"comm exposed ms"},
                   {"bubble ms"},
                   {"fits", TextTable::Align::left}});
  const std::vector<Row> all = rows(report);
  for (const Row& row : all) {
    if (row.rank > top) break;
    table.add_row({std::to_string(row.rank), row.family, row.mesh, milliseconds(row.seconds),
                   fmt::format("{:.2f}x", row.speedup), human_bytes(static_cast<double>(row.peak_bytes)),
                   report.result.data_parallel_peak_bytes > 0 ? percent(row.memory_saving) : "-",
                   milliseconds(row.comm_exposed), milliseconds(row.bubble),
                   row.feasible ? "yes" : "NO (over memory)"});
  }
  table.print(out);
  const sim::SearchStats& stats = report.result.stats;
  out << fmt::format("\n{} plans ranked ({} shown); {} plans simulated, {} layer/edge prices, {:.2f} s of search\n",
                     all.size(), std::min<size_t>(all.size(), static_cast<size_t>(top)), stats.plans_simulated,
                     stats.layer_prices, report.result.search_seconds);
  if (stats.plans_left_out > 0) {
    out << fmt::format("{} candidate plans left out: a step cannot share their tied weights; the first: {}\n",
                       stats.plans_left_out, stats.first_left_out_reason);
  }
  if (!report.plan_files.empty() && !report.plan_files.front().empty())
    out << "plan files: " << std::filesystem::path(report.plan_files.front()).parent_path().string() << "/\n";
}

void print_plan_explanation(std::ostream& out, const PlanReport& report, int index) {
  const sim::PricedPlan& p = report.result.plans[static_cast<size_t>(index)];
  const plans::Plan& plan = p.plan;
  const sim::Prediction& pred = p.prediction;
  out << fmt::format("\nrank {}: {} on mesh {}, {} micro-batch(es), ZeRO {}, recompute {}\n", index + 1, plan.family,
                     plan.mesh.to_string(), plan.micro_batches, plan.zero_stage,
                     plan.recompute_activations ? "on" : (plan.recompute_attention ? "selective" : "off"));
  TextTable layers({{"layer", TextTable::Align::left},
                    {"op", TextTable::Align::left},
                    {"stage"},
                    {"sharding", TextTable::Align::left},
                    {"fwd ms"},
                    {"bwd ms"},
                    {"comm ms"}});
  const model::Model& net = *plan.model;
  for (int i = 0; i < net.size(); ++i) {
    const sim::LayerTiming& t = pred.layers[static_cast<size_t>(i)];
    layers.add_row({net.layer(i).name, std::string(model::op_name(net.layer(i).kind)),
                    std::to_string(plan.stage_of_layer.empty() ? 0 : plan.stage_of_layer[static_cast<size_t>(i)]),
                    sharding_text(plan.layers[static_cast<size_t>(i)], plan.mesh), milliseconds(t.compute.forward),
                    milliseconds(t.compute.backward_input + t.compute.backward_weight),
                    milliseconds(t.forward_comm_seconds + t.backward_comm_seconds)});
  }
  layers.print(out);
  const sim::PhaseSeconds& ph = pred.phases;
  out << fmt::format("\nstep {} ms = compute fwd {} + bwd {} + exposed comm {} + bubble {} + optimizer {} (ms)\n",
                     milliseconds(pred.iteration_seconds), milliseconds(ph.compute_forward),
                     milliseconds(ph.compute_backward), milliseconds(ph.comm_exposed), milliseconds(ph.bubble),
                     milliseconds(ph.optimizer));
  int last_stage = -1;
  for (const sim::RankPrediction& r : pred.ranks) {
    if (r.stage == last_stage) continue;
    last_stage = r.stage;
    const auto b = [](int64_t bytes) { return human_bytes(static_cast<double>(bytes)); };
    out << fmt::format("memory, stage {}: params {}, grads {}, optimizer {}, activations {}, buffers {} = {}\n",
                       r.stage, b(r.memory.params), b(r.memory.grads), b(r.memory.optimizer),
                       b(r.memory.activations_peak()), b(r.memory.buffers), b(r.memory.total()));
  }
}

}  // namespace splitbrain::tools
