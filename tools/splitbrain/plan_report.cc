#include "tools/splitbrain/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdlib>
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
  double times_bound = 0.0;  // seconds over the job's lower bound; 0 where there is none
  bool yours = false;        // the user's plan (--against), ranked among the planner's
  const sim::PricedPlan* priced = nullptr;
};

// A ranked plan's figures; `rank` is its place in the ranking (1-based).
Row row_of(const PlanReport& report, const sim::PricedPlan& p, int rank) {
  const sim::PlannerResult& r = report.result;
  Row row;
  row.rank = rank;
  row.priced = &p;
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
  if (report.bound.seconds() > 0.0) row.times_bound = row.seconds / report.bound.seconds();
  return row;
}

// The ranked plans, and the user's plan at its rank (the planner's keep their own numbers, which
// --emit-plans and --explain use).
std::vector<Row> rows(const PlanReport& report) {
  std::vector<Row> result;
  const sim::PlannerResult& r = report.result;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    Row row = row_of(report, r.plans[i], static_cast<int>(i) + 1);
    row.plan_file = report.plan_files.empty() ? "" : report.plan_files[i];
    result.push_back(row);
  }
  if (report.against != nullptr) {
    const int rank = against_rank(report);
    Row yours = row_of(report, report.against->priced, rank);
    yours.family = fmt::format("yours: {}", yours.family);
    yours.plan_file = report.against->file;
    yours.yours = true;
    result.insert(result.begin() + (rank - 1), yours);
  }
  return result;
}

std::string rank_text(const Row& row) { return fmt::format("{}{}", row.rank, row.yours ? "*" : ""); }

std::string times_bound_text(const Row& row) {
  return row.times_bound > 0.0 ? fmt::format("{:.2f}x", row.times_bound) : "-";
}

// "+1.20 MB", "-340 kB", "0 B".
std::string signed_bytes(int64_t bytes) {
  if (bytes == 0) return "0 B";
  return fmt::format("{}{}", bytes > 0 ? "+" : "-", human_bytes(std::abs(static_cast<double>(bytes))));
}

std::string signed_milliseconds(double seconds) { return fmt::format("{:+.3f}", seconds * 1e3); }

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

nlohmann::ordered_json times_bound_json(const Row& row) {
  return row.times_bound > 0.0 ? nlohmann::ordered_json(row.times_bound) : nlohmann::ordered_json(nullptr);
}

// Why the bound has no communication term, for the table and the JSON alike.
std::string communication_note(const sim::JobLowerBound& bound) {
  if (bound.link_level.empty()) return "one device: no link";
  return "no bytes are certain to cross it: a plan may replicate every layer on every rank and send nothing";
}

nlohmann::ordered_json lower_bound_json(const sim::JobLowerBound& bound) {
  return {{"seconds", bound.seconds()},
          {"compute_seconds", bound.compute_seconds},
          {"compute_counted", bound.compute_counted},
          {"communication_seconds", bound.communication_seconds},
          {"communication_bytes", bound.communication_bytes},
          {"link_level", bound.link_level},
          {"link_bytes_per_second", bound.link_bytes_per_second},
          {"communication_note", communication_note(bound)}};
}

std::string lower_bound_line(const sim::JobLowerBound& bound) {
  if (!bound.compute_counted) {
    return "no lower bound on the step: the cluster's measured kernel times are bounded by no peak rate";
  }
  std::string link = "of communication";
  if (!bound.link_level.empty())
    link = fmt::format("on {} ({}/s)", bound.link_level, human_bytes(bound.link_bytes_per_second));
  return fmt::format("no plan can run faster than {} ms: {} ms compute at peak + {} ms {} ({})",
                     milliseconds(bound.seconds()), milliseconds(bound.compute_seconds),
                     milliseconds(bound.communication_seconds), link, communication_note(bound));
}

const sim::PricedPlan& pick_of(const PlanReport& report) { return report.result.plans.at(report.against->pick_index); }

std::string against_line(const PlanReport& report) {
  const AgainstPlan& a = *report.against;
  return fmt::format("* your plan {}: rank {} of {}, {:.2f}x the step time of the pick (rank {})", a.file,
                     against_rank(report), report.result.plans.size() + 1,
                     a.priced.prediction.iteration_seconds / pick_of(report).prediction.iteration_seconds,
                     a.pick_index + 1);
}

nlohmann::ordered_json figures_json(const sim::PlanFigures& f) {
  return {{"iteration_seconds", f.seconds},
          {"peak_memory_bytes", f.peak_bytes},
          {"bytes_sent_per_step", f.sent_bytes},
          {"feasible", f.feasible}};
}

nlohmann::ordered_json against_json(const PlanReport& report) {
  const AgainstPlan& a = *report.against;
  const sim::PlanDifference& d = a.difference;
  nlohmann::ordered_json differences = nlohmann::ordered_json::array();
  for (const sim::ChoiceStep& step : d.steps) {
    differences.push_back({{"choices", step.choices},
                           {"user", step.user_values},
                           {"pick", step.pick_values},
                           {"merged_because", step.merge_reasons},
                           {"delta_seconds", step.delta_seconds()},
                           {"delta_peak_memory_bytes", step.delta_peak_bytes()},
                           {"delta_bytes_sent_per_step", step.delta_sent_bytes()},
                           {"after", figures_json(step.after)}});
  }
  return {{"plan_file", a.file},
          {"family", a.priced.plan.family},
          {"rank", against_rank(report)},
          {"times_lower_bound", report.bound.seconds() > 0.0
                                    ? nlohmann::ordered_json(d.user.seconds / report.bound.seconds())
                                    : nlohmann::ordered_json(nullptr)},
          {"pick_rank", a.pick_index + 1},
          {"pick_family", pick_of(report).plan.family},
          {"user", figures_json(d.user)},
          {"pick", figures_json(d.pick)},
          {"plans_priced", d.plans_priced},
          {"differences", differences},
          {"total",
           {{"delta_seconds", d.pick.seconds - d.user.seconds},
            {"delta_peak_memory_bytes", d.pick.peak_bytes - d.user.peak_bytes},
            {"delta_bytes_sent_per_step", d.pick.sent_bytes - d.user.sent_bytes}}}};
}

}  // namespace

size_t pick_index(const sim::PlannerResult& result) {
  for (size_t i = 0; i < result.plans.size(); ++i) {
    if (result.plans[i].feasible) return i;
  }
  return 0;
}

int against_rank(const PlanReport& report) {
  const sim::PricedPlan& yours = report.against->priced;
  int ahead = 0;
  for (const sim::PricedPlan& p : report.result.plans) {
    const bool before = p.feasible != yours.feasible
                            ? p.feasible
                            : p.prediction.iteration_seconds <= yours.prediction.iteration_seconds;
    if (before) ++ahead;
  }
  return ahead + 1;
}

void print_plan_difference(std::ostream& out, const PlanReport& report) {
  const AgainstPlan& a = *report.against;
  const sim::PlanDifference& d = a.difference;
  out << fmt::format("\nyour plan -> the pick (rank {}: {}), one choice at a time in this order, each plan priced:\n",
                     a.pick_index + 1, pick_of(report).plan.family);
  if (d.steps.empty()) {
    out << "the pick makes every choice your plan makes\n";
    return;
  }
  TextTable table({{"choice", TextTable::Align::left},
                   {"yours", TextTable::Align::left},
                   {"pick", TextTable::Align::left},
                   {"delta step ms"},
                   {"delta peak mem/rank"},
                   {"delta sent/rank"}});
  std::vector<std::string> notes;
  for (const sim::ChoiceStep& step : d.steps) {
    std::string choice = fmt::format("{}", fmt::join(step.choices, " + "));
    for (size_t i = 0; i < step.merge_reasons.size(); ++i) {
      const auto through = step.choices.begin() + static_cast<std::ptrdiff_t>(i) + 1;
      notes.push_back(fmt::format("the plan with {} changed is not valid: {}",
                                  fmt::join(step.choices.begin(), through, " and "), step.merge_reasons[i]));
      choice += fmt::format(" [{}]", notes.size());
    }
    table.add_row({choice, fmt::format("{}", fmt::join(step.user_values, "; ")),
                   fmt::format("{}", fmt::join(step.pick_values, "; ")), signed_milliseconds(step.delta_seconds()),
                   signed_bytes(step.delta_peak_bytes()), signed_bytes(step.delta_sent_bytes())});
  }
  table.add_rule();
  table.add_row({"total = pick - yours", milliseconds(d.user.seconds) + " ms", milliseconds(d.pick.seconds) + " ms",
                 signed_milliseconds(d.pick.seconds - d.user.seconds),
                 signed_bytes(d.pick.peak_bytes - d.user.peak_bytes),
                 signed_bytes(d.pick.sent_bytes - d.user.sent_bytes)});
  table.print(out);
  for (size_t i = 0; i < notes.size(); ++i) {
    out << fmt::format("[{}] merged with the next choice: {}\n", i + 1, notes[i]);
  }
}

nlohmann::ordered_json plan_report_json(const PlanReport& report) {
  nlohmann::ordered_json plans = nlohmann::ordered_json::array();
  for (const Row& row : rows(report)) {
    if (row.yours) continue;  // under "against", so "plans" stays the planner's ranking
    const sim::PricedPlan& p = *row.priced;
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
                                    {"feasible", row.feasible},
                                    {"times_lower_bound", times_bound_json(row)}};
    if (!row.plan_file.empty()) entry["plan_file"] = row.plan_file;
    plans.push_back(std::move(entry));
  }
  const sim::SearchStats& stats = report.result.stats;
  nlohmann::ordered_json document = {{"model", report.request.model_spec},
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
                                     {"lower_bound", lower_bound_json(report.bound)},
                                     {"plans", plans}};
  if (report.against != nullptr) document["against"] = against_json(report);
  return document;
}

std::string plan_report_csv(const PlanReport& report) {
  std::string csv =
      "rank,family,mesh,iteration_seconds,speedup,peak_memory_bytes,memory_saving_vs_data_parallel,"
      "comm_exposed_seconds,bubble_seconds,feasible,plan_file,times_lower_bound,lower_bound_seconds,yours\n";
  for (const Row& row : rows(report)) {
    csv += fmt::format("{},\"{}\",\"{}\",{:.9g},{:.6g},{},{:.6g},{:.9g},{:.9g},{},{},{:.6g},{:.9g},{}\n", row.rank,
                       row.family, row.mesh, row.seconds, row.speedup, row.peak_bytes, row.memory_saving,
                       row.comm_exposed, row.bubble, row.feasible ? "true" : "false", row.plan_file, row.times_bound,
                       report.bound.seconds(), row.yours ? "true" : "false");
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
                   {"vs bound"},
                   {"fits", TextTable::Align::left}});
  const std::vector<Row> all = rows(report);
  for (const Row& row : all) {
    if (row.rank > top && !row.yours) continue;  // the user's plan shows wherever it ranks
    table.add_row({rank_text(row), row.family, row.mesh, milliseconds(row.seconds), fmt::format("{:.2f}x", row.speedup),
                   human_bytes(static_cast<double>(row.peak_bytes)),
                   report.result.data_parallel_peak_bytes > 0 ? percent(row.memory_saving) : "-",
                   milliseconds(row.comm_exposed), milliseconds(row.bubble), times_bound_text(row),
                   row.feasible ? "yes" : "NO (over memory)"});
  }
  table.print(out);
  out << '\n' << lower_bound_line(report.bound) << '\n';
  if (report.against != nullptr) out << against_line(report) << '\n';
  const sim::SearchStats& stats = report.result.stats;
  const size_t ranked = report.result.plans.size();
  out << fmt::format("{} plans ranked ({} shown); {} plans simulated, {} layer/edge prices, {:.2f} s of search\n",
                     ranked, std::min<size_t>(ranked, static_cast<size_t>(top)), stats.plans_simulated,
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
