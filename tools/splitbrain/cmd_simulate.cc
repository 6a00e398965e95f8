// `splitbrain simulate`: predict one training step of a plan on a cluster.

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "model/file_io.h"
#include "model/output_files.h"
#include "plans/collective_kind.h"
#include "plans/compiled_plan.h"
#include "plans/plan_json.h"
#include "plans/plan_validation.h"
#include "sim/chrome_trace.h"
#include "sim/cluster_error.h"
#include "sim/cluster_presets.h"
#include "sim/prediction_json.h"
#include "sim/simulation.h"
#include "tools/splitbrain/commands.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/text_table.h"
#include "tools/comparison/trace_reader.h"

namespace splitbrain::tools {
namespace {

struct SimulateOptions {
  std::string plan_path;
  std::string cluster = "local-cpu";
  std::string json_path;
  std::string trace_path;
};

std::string seconds_text(double seconds) { return fmt::format("{:.3f} ms", seconds * 1e3); }

void print_summary(const plans::Plan& plan, const sim::Cluster& cluster, const sim::Prediction& p,
                   const std::string& plan_path) {
  std::cout << fmt::format("plan {}: {}, batch {} ({} micro-batches), {}, mesh {}, on {}\n", plan_path, plan.model_spec,
                           plan.global_batch, plan.micro_batches, model::dtype_name(plan.dtype), plan.mesh.to_string(),
                           cluster.name);
  std::cout << fmt::format("iteration {}   {:.1f} samples/s\n\n", seconds_text(p.iteration_seconds),
                           p.samples_per_second);
  TextTable phases({{"phase", TextTable::Align::left}, {"seconds"}, {"share"}});
  const auto add_phase = [&](const char* name, double seconds) {
    phases.add_row({name, seconds_text(seconds), fmt::format("{:.1f}%", 100 * seconds / p.iteration_seconds)});
  };
  add_phase("compute forward", p.phases.compute_forward);
  add_phase("compute backward", p.phases.compute_backward);
  add_phase("communication exposed", p.phases.comm_exposed);
  add_phase("pipeline bubble", p.phases.bubble);
  add_phase("optimizer", p.phases.optimizer);
  phases.print(std::cout);

  std::cout << "\nmemory per rank (one row per pipeline stage; ranks of a stage are alike)\n";
  TextTable memory(
      {{"stage"}, {"params"}, {"grads"}, {"optimizer"}, {"activations"}, {"buffers"}, {"peak"}, {"sent/step"}});
  int last_stage = -1;
  for (const sim::RankPrediction& r : p.ranks) {
    if (r.stage == last_stage) continue;
    last_stage = r.stage;
    const auto b = [](int64_t bytes) { return human_bytes(static_cast<double>(bytes)); };
    memory.add_row({std::to_string(r.stage), b(r.memory.params), b(r.memory.grads), b(r.memory.optimizer),
                    b(r.memory.activations_peak()), b(r.memory.buffers), b(r.memory.total()), b(r.comm_bytes_sent)});
  }
  memory.print(std::cout);

  std::vector<const sim::CollectiveUse*> uses;
  for (const sim::CollectiveUse& u : p.collectives) uses.push_back(&u);
  std::sort(uses.begin(), uses.end(), [](auto* a, auto* b) { return a->seconds * a->count > b->seconds * b->count; });
  std::cout << fmt::format("\ncommunication: {} collectives per step, {} in all; the costliest:\n", uses.size(),
                           seconds_text(sim::total_communication_seconds(p)));
  TextTable top({{"layer", TextTable::Align::left},
                 {"phase", TextTable::Align::left},
                 {"kind", TextTable::Align::left},
                 {"axes", TextTable::Align::left},
                 {"bytes"},
                 {"runs"},
                 {"seconds"}});
  for (size_t k = 0; k < std::min<size_t>(uses.size(), 8); ++k) {
    const sim::CollectiveUse& u = *uses[k];
    std::string axes;
    for (int axis : u.collective.axes) axes += (axes.empty() ? "" : "+") + plan.mesh.axis(axis).name;
    top.add_row({u.layer >= 0 ? plan.model->layer(u.layer).name : "(gradients)",
                 std::string(sim::step_phase_name(u.phase)), std::string(plans::collective_name(u.collective.kind)),
                 axes, human_bytes(static_cast<double>(u.collective.buffer_bytes)), std::to_string(u.count),
                 seconds_text(u.seconds * u.count)});
  }
  top.print(std::cout);
}

void run_simulate(const SimulateOptions& options) {
  if (!options.json_path.empty()) check_output_path(options.json_path, "--json");
  if (!options.trace_path.empty()) check_output_path(options.trace_path, "--trace");
  const plans::Plan plan = plans::load_plan_file(options.plan_path);
  const sim::Cluster cluster = sim::resolve_cluster(options.cluster);
  const plans::CompiledPlan compiled = plans::compile_plan(plan);
  const sim::Prediction prediction = [&] {
    try {
      return sim::simulate(plan, compiled, cluster);
    } catch (const sim::ClusterError& e) {
      throw sim::ClusterError(fmt::format("--cluster {}: {}", options.cluster, e.what()));  // which file, too
    }
  }();
  const nlohmann::ordered_json report = sim::prediction_to_json(plan, cluster, prediction);
  OutputFiles outputs;  // both or neither
  if (!options.trace_path.empty()) {
    outputs.add_json("--trace", options.trace_path,
                     named_trace(sim::prediction_trace(plan, prediction), TraceKind::predicted, report));
  }
  if (!options.json_path.empty()) outputs.add_json("--json", options.json_path, report);
  outputs.write_all();
  if (options.json_path.empty()) print_summary(plan, cluster, prediction, options.plan_path);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* command =
      app.add_subcommand("simulate", "Predict one training step of a plan: time, phases, memory, bytes");
  command->add_option("--plan", options->plan_path, "Plan file (see plans/README.md)")->type_name("FILE")->required();
  command->add_option("--cluster", options->cluster, "Cluster preset or cluster file (see sim/clusters/README.md)")
      ->type_name("NAME|FILE")
      ->default_val("local-cpu");
  command->add_option("--json", options->json_path, "Write the prediction as JSON to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->add_option("--trace", options->trace_path, "Write a Chrome trace of the predicted step (open in Perfetto)")
      ->type_name("FILE");
  command->callback([options] { run_simulate(*options); });
}

}  // namespace splitbrain::tools
