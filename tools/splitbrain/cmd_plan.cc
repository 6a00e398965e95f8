// `splitbrain plan`: rank hybrid partitions of a training job by predicted step time.

#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <optional>

#include "model/errors.h"
#include "model/file_io.h"
#include "model/model_json.h"
#include "model/output_files.h"
#include "plans/plan_json.h"
#include "plans/tied_weights.h"
#include "sim/cluster_presets.h"
#include "sim/job_lower_bound.h"
#include "sim/search/plan_difference.h"
#include "sim/search/plan_pricing.h"
#include "sim/search/planner.h"
#include "tools/splitbrain/byte_size.h"
#include "tools/splitbrain/commands.h"
#include "tools/export/export_formats.h"
#include "tools/export/export_refusal.h"
#include "tools/splitbrain/human_units.h"
#include "tools/splitbrain/plan_report.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::tools {
namespace {

struct PlanOptions {
  std::string model;
  std::string cluster = "local-cpu";
  int devices = 0;
  int64_t batch = 0;
  std::string dtype = "fp32";
  std::string optimizer = "sgd";
  std::string gradient_dtype;  // "": the element type
  int top = 15;
  std::string memory_limit;
  std::string json_path;
  std::string csv_path;
  std::string emit_dir;
  int explain = 0;
  bool exhaustive = false;
  int threads = 0;  // 0: one per core
  std::string export_format;
  std::string export_dir;
  int export_top = 1;
  bool export_nearest = false;
  std::string against_path;
};

std::string slug(std::string_view family) {
  std::string out;
  for (char c : family) {
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// The best `export_top` ranked plans that fit and that the format expresses, each into
// DIR/NN-family/ (NN its rank), added to `outputs`; the others on the way are skipped with the
// reason. Exit 2 when none can be written. Returns the folders.
std::vector<std::string> add_export_ranking(const PlanOptions& options, const sim::Cluster& cluster,
                                            const sim::PlannerResult& result, OutputFiles& outputs) {
  const ExportFormat format = parse_export_format(options.export_format);
  std::vector<std::string> folders;
  for (size_t i = 0; i < result.plans.size() && static_cast<int>(folders.size()) < options.export_top; ++i) {
    const auto& priced = result.plans[i];
    const std::string name = fmt::format("{:02d}-{}", i + 1, slug(priced.plan.family));
    if (!priced.feasible) {
      std::cerr << fmt::format("[export] rank {} ({}): skipped: it does not fit in memory\n", i + 1,
                               priced.plan.family);
      continue;
    }
    try {
      const ExportRequest request{
          &priced.plan, cluster.levels.front().fan_out,
          fmt::format("rank {} of `splitbrain plan --model {} --cluster {} --devices {} --batch {} "
                      "--dtype {} --optimizer {}`",
                      i + 1, options.model, options.cluster, options.devices, options.batch, options.dtype,
                      options.optimizer),
          options.export_nearest};
      const std::vector<ExportedFile> files = export_plan(format, request);
      folders.push_back((std::filesystem::path(options.export_dir) / name).string());
      add_exported_files(outputs, "--export-dir", folders.back(), files);
    } catch (const ExportRefusal& refusal) {
      std::cerr << fmt::format("[export] rank {} ({}): skipped: {}\n", i + 1, priced.plan.family, refusal.what());
    }
  }
  if (folders.empty()) {
    throw ExportRefusal(
        fmt::format("--export {}: no ranked plan that fits can be expressed (reasons above)", options.export_format));
  }
  return folders;
}

// Whether two models are the same network: layer by layer the same name, op, inputs, shape and
// cost (a plan file may name its model by another path or spelling than --model).
bool same_model(const model::Model& a, const model::Model& b) {
  if (a.size() != b.size()) return false;
  for (int v = 0; v < a.size(); ++v) {
    const model::Layer& x = a.layer(v);
    const model::Layer& y = b.layer(v);
    if (x.name != y.name || x.kind != y.kind || x.inputs != y.inputs || x.output_shape != y.output_shape ||
        !(x.cost == y.cost))
      return false;
  }
  return true;
}

// The plan file --against names, read and checked to be a plan of this command's job (exit 2
// naming the file and the field otherwise), before the search.
plans::Plan load_against_plan(const std::string& path, const sim::PlannerRequest& request, const PlanOptions& options) {
  plans::Plan plan = plans::load_plan_file(path);
  const auto refuse = [&](std::string_view field, const std::string& problem) {
    throw InputError(fmt::format("--against {}: {}: {}", path, field, problem));
  };
  if (!same_model(*plan.model, *request.model))
    refuse("model", fmt::format("the plan is for '{}', not --model {}", plan.model_spec, options.model));
  if (plan.mesh.rank_count() != request.devices) {
    refuse("mesh", fmt::format("{} has {} ranks, not --devices {}", plan.mesh.to_string(), plan.mesh.rank_count(),
                               request.devices));
  }
  if (plan.global_batch != request.global_batch)
    refuse("batch", fmt::format("{}, not --batch {}", plan.global_batch, request.global_batch));
  if (plan.dtype != request.dtype) {
    refuse("dtype", fmt::format("{}, not --dtype {}", model::dtype_name(plan.dtype), model::dtype_name(request.dtype)));
  }
  if (plan.optimizer.kind != request.optimizer.kind) {
    refuse("optimizer.kind",
           fmt::format("{}, not --optimizer {}", plans::optimizer_kind_name(plan.optimizer.kind), options.optimizer));
  }
  if (std::string problem = plans::tied_weight_problem(plan); !problem.empty())
    refuse("layers", "no step can share its tied weights: " + problem);
  return plan;
}

// The user's plan priced as the ranking prices a plan, and the walk from it to the pick.
AgainstPlan compare_against(const std::string& path, const plans::Plan& plan, const sim::PlannerRequest& request,
                            const sim::PlannerResult& result) {
  sim::SearchStats uncounted;
  std::optional<sim::PricedPlan> priced = sim::price_as_is(request, plan, uncounted);
  if (!priced) throw InputError(fmt::format("--against {}: layers: no step can share its tied weights", path));
  AgainstPlan against{path, std::move(*priced), pick_index(result), {}};
  against.difference = sim::plan_difference(request, against.priced.plan, result.plans.at(against.pick_index).plan);
  return against;
}

// Every output path, checked before the search rather than found bad after it.
void check_output_paths(const PlanOptions& options) {
  if (!options.json_path.empty()) check_output_path(options.json_path, "--json");
  if (!options.csv_path.empty()) check_output_path(options.csv_path, "--csv");
  if (!options.emit_dir.empty()) check_output_folder(options.emit_dir, "--emit-plans");
  if (!options.export_dir.empty()) check_output_folder(options.export_dir, "--export-dir");
}

void run_plan(const PlanOptions& options) {
  check_output_paths(options);
  sim::PlannerRequest request;
  request.model = std::make_shared<model::Model>(model::resolve_model(options.model));
  request.model_spec = options.model;
  request.cluster = sim::resolve_cluster(options.cluster);
  request.devices = options.devices;
  request.global_batch = options.batch;
  request.dtype = model::parse_dtype(options.dtype);
  if (!options.gradient_dtype.empty()) request.gradient_dtype = model::parse_dtype(options.gradient_dtype);
  request.optimizer.kind =
      options.optimizer == "adam" ? plans::OptimizerKind::adam : plans::OptimizerKind::sgd_momentum;
  request.exhaustive = options.exhaustive;
  request.search_threads = options.threads;
  if (!options.memory_limit.empty())
    request.memory_limit_bytes = parse_byte_size(options.memory_limit, "--memory-limit");

  const std::optional<plans::Plan> user_plan =
      options.against_path.empty() ? std::nullopt
                                   : std::optional(load_against_plan(options.against_path, request, options));

  const bool quiet = options.json_path == "-" || options.csv_path == "-";
  const sim::PlannerResult result = sim::plan_training(request, [&](std::string_view line) {
    if (!quiet) std::cerr << "[plan] " << line << '\n';
  });
  if (options.explain > static_cast<int>(result.plans.size())) {
    throw InputError(fmt::format("--explain: rank {} does not exist; the search found {} plans", options.explain,
                                 result.plans.size()));
  }

  // All or none: a failed export or an unwritable file leaves none of the others.
  OutputFiles outputs;
  std::vector<std::string> plan_files(result.plans.size());
  if (!options.emit_dir.empty()) {
    for (size_t i = 0; i < result.plans.size(); ++i) {
      const auto path = std::filesystem::path(options.emit_dir) /
                        fmt::format("{:02d}-{}.json", i + 1, slug(result.plans[i].plan.family));
      // Saved beside its final name, so a model file's path is written relative to that folder.
      outputs.add_file("--emit-plans", path, [&plan = result.plans[i].plan](const std::filesystem::path& file) {
        plans::save_plan_file(plan, file);
      });
      plan_files[i] = path.string();
    }
  }
  const sim::JobLowerBound bound =
      sim::job_lower_bound(*request.model, request.global_batch, request.dtype, request.devices, request.cluster);
  const std::optional<AgainstPlan> against =
      user_plan ? std::optional(compare_against(options.against_path, *user_plan, request, result)) : std::nullopt;
  const PlanReport report{request, result, plan_files, bound, against ? &*against : nullptr};
  if (!options.json_path.empty()) outputs.add_json("--json", options.json_path, plan_report_json(report));
  if (!options.csv_path.empty()) outputs.add_text("--csv", options.csv_path, plan_report_csv(report));
  const std::vector<std::string> export_folders = options.export_format.empty()
                                                      ? std::vector<std::string>{}
                                                      : add_export_ranking(options, request.cluster, result, outputs);
  outputs.write_all();
  if (options.json_path != "-" && options.csv_path != "-") {
    print_plan_table(std::cout, report, options.top);
    if (options.explain > 0) print_plan_explanation(std::cout, report, options.explain - 1);
    if (against) print_plan_difference(std::cout, report);
  }
  for (const std::string& folder : export_folders)
    std::cerr << fmt::format("[export] {} -> {}/\n", options.export_format, folder);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto options = std::make_shared<PlanOptions>();
  CLI::App* command =
      app.add_subcommand("plan", "Rank hybrid data/model/pipeline/spatial partitions by predicted step time");
  command->add_option("--model", options->model, "Zoo name (with options) or model file")
      ->type_name("NAME|FILE")
      ->required();
  command->add_option("--cluster", options->cluster, "Cluster preset or cluster file")
      ->type_name("NAME|FILE")
      ->default_val("local-cpu");
  // The search grows with the device count's divisors and the mesh; past a million devices it
  // runs out of memory rather than answering.
  command->add_option("--devices", options->devices, "Number of devices (ranks), 1 to 1048576")
      ->required()
      ->check(integer_from(1, 1 << 20));
  command->add_option("--batch", options->batch, "Global batch per optimizer step")
      ->required()
      ->check(positive_integer_for(options->batch));
  command->add_option("--dtype", options->dtype, "Element type")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->default_val("fp32");
  command->add_option("--optimizer", options->optimizer, "Optimizer (sets the state memory)")
      ->check(CLI::IsMember({"sgd", "adam"}))
      ->default_val("sgd");
  command
      ->add_option("--gradient-dtype", options->gradient_dtype,
                   "Element type every plan accumulates and reduces gradients in (default: --dtype), e.g. fp32 "
                   "main gradients under bf16 as Megatron-LM keeps them; a constraint, not a choice the search "
                   "weighs (it only adds bytes)")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  command->add_option("--top", options->top, "Rows of the table")
      ->check(positive_integer_for(options->top))
      ->default_val(15);
  command->add_option("--memory-limit", options->memory_limit, "Memory per device (default: the device's), e.g. 40GB")
      ->type_name("BYTES");
  command->add_option("--json", options->json_path, "Write the ranking as JSON to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->add_option("--csv", options->csv_path, "Write the ranking as CSV to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->add_option("--emit-plans", options->emit_dir, "Write every ranked plan as a plan file into DIR")
      ->type_name("DIR");
  command->add_option("--explain", options->explain, "Show the per-layer choices and costs of the plan ranked RANK")
      ->type_name("RANK")
      ->check(positive_integer_for(options->explain));
  command
      ->add_option("--against", options->against_path,
                   "A plan file of this job (model, devices, batch, dtype, optimizer) to rank among the plans found "
                   "and to compare with the pick, choice by choice")
      ->type_name("FILE");
  command->add_flag("--exhaustive", options->exhaustive,
                    "Time every candidate plan and variant in full instead of skipping those that provably cannot "
                    "change the ranking (the same answer, many times slower on large models)");
  command
      ->add_option("--threads", options->threads,
                   "Threads the search over meshes uses (default: one per core; the ranking is the same for any)")
      ->check(integer_from(1, 1024));
  auto* export_option =
      command
          ->add_option(
              "--export", options->export_format,
              "Write launch configurations of the best ranked plans: megatron (launch.sh for pretrain_gpt.py), "
              "deepspeed (ds_config.json, launch.sh), torchrun (launch.sh, torchrun_train.py: data "
              "parallel GPTs) or torchtitan (torchtitan.toml: Llama 3); plans the format cannot express are "
              "skipped with the reason")
          ->check(CLI::IsMember({"megatron", "deepspeed", "torchrun", "torchtitan"}))
          ->type_name("FORMAT");
  auto* export_dir = command
                         ->add_option("--export-dir", options->export_dir,
                                      "Folder for --export: one subfolder per plan, NN-family (NN its rank)")
                         ->type_name("DIR");
  command
      ->add_option("--export-top", options->export_top,
                   "How many plans --export writes (the best that fit and that it expresses)")
      ->check(positive_integer_for(options->export_top))
      ->default_val(1)
      ->needs(export_option);
  command->add_flag("--nearest", options->export_nearest, kNearestHelp)->needs(export_option);
  export_option->needs(export_dir);
  export_dir->needs(export_option);
  command->callback([options] { run_plan(*options); });
}

}  // namespace splitbrain::tools
