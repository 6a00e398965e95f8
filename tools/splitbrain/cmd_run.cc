// `splitbrain run` (under mpirun): train with a plan for real on a backend (--backend: cpu =
// oneDNN + MPI, cuda = CUDA kernels + NCCL) and measure time, memory and bytes in the
// prediction's vocabulary.

#include <fmt/format.h>
#include <mpi.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <memory_resource>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_check.h"
#include "exec/comm/progress_watchdog.h"
#include "exec/data/dataset_spec.h"
#include "exec/runtime/checkpoint.h"
#include "exec/runtime/measured_trace.h"
#include "exec/runtime/run_report.h"
#include "exec/runtime/trainer.h"
#include "model/errors.h"
#include "model/file_io.h"
#include "model/output_files.h"
#include "plans/plan_json.h"
#include "tools/training/backend_choice.h"
#include "tools/splitbrain/commands.h"
#include "tools/training/dataset_batches.h"
#include "tools/training/synthetic_defaults.h"
#include "tools/training/heap_reuse.h"
#include "tools/training/memory_fit.h"
#include "exec/comm/mpi_process.h"
#include "tools/training/placement_announcement.h"
#include "tools/training/token_batches.h"
#include "tools/comparison/trace_reader.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::tools {
namespace {

struct RunOptions {
  std::string plan_path;
  int64_t iterations = 10;
  int64_t warmup = 2;
  double epochs = 0.0;
  std::string data = "synthetic";
  std::string report_path;
  std::string trace_path;
  bool evaluate = false;
  uint64_t seed = 1;
  int threads = 1;
  bool ignore_memory_limit = false;
  double watchdog_seconds = 600.0;
  std::string backend;  // empty: default_backend()
  bool tf32 = false;
  bool no_kernel_graphs = false;
  std::string conv_algorithms;  // cuda: cuDNN algorithm choices to adopt (calibrate --conv-algorithms)
  double learning_rate = 0.0;   // 0: the plan's
  int log_every = 10;
  std::string checkpoint_dir;
  int64_t checkpoint_every = 0;
  std::string resume_dir;
  bool no_bind = false;
  bool keep_going_on_nan = false;
};

// The exit code of a run stopped because its loss stopped being a finite number.
constexpr int kDivergedExitCode = 3;

// The first step whose loss was not a finite number (1-based) and that loss.
struct Divergence {
  int64_t step = 0;
  double loss = 0.0;
  // "nan", "inf" or "-inf" (a NaN's sign says nothing).
  std::string loss_name() const { return std::isnan(loss) ? "nan" : loss > 0 ? "inf" : "-inf"; }
};

// Says which step diverged and the likely cause, naming the learning rate and where it came from.
std::string divergence_message(const Divergence& divergence, int64_t steps, const RunOptions& options,
                               double learning_rate) {
  const std::string rate = options.learning_rate > 0
                               ? fmt::format("--lr {:g}", learning_rate)
                               : fmt::format("the plan's learning rate {:g} (--lr sets another)", learning_rate);
  return fmt::format(
      "[run] step {}/{}: the loss is {}: training diverged. Likely cause: {} is too high for this model, or its "
      "values overflowed fp32; {}",
      divergence.step, steps, divergence.loss_name(), rate,
      options.keep_going_on_nan
          ? "training on (--keep-going-on-nan)"
          : fmt::format("stopped, exit code {} (--keep-going-on-nan trains on)", kDivergedExitCode));
}

void check_data_fits(const exec::data::Dataset& data, const model::Model& net, const std::string& spec) {
  const model::Layer& input = net.layer(0);
  const auto shape = data.sample_shape();
  const model::Shape samples{shape.channels, shape.height, shape.width};
  if (input.output_shape != samples) {
    throw InputError(fmt::format("--data {}: samples are {} but model '{}' takes {}", spec,
                                 model::shape_to_string(samples), net.name(),
                                 model::shape_to_string(input.output_shape)));
  }
  const int64_t classes = predicted_classes(net);
  if (classes < data.class_count()) {
    throw InputError(
        fmt::format("--data {}: {} classes but model '{}' predicts {}", spec, data.class_count(), net.name(), classes));
  }
}

// The training batches and how many make an epoch (0: the source has no epochs); for --eval,
// the held-out batches and how many of them to evaluate.
struct TrainingData {
  std::unique_ptr<exec::BatchSource> batches;
  int64_t steps_per_epoch = 0;
  std::unique_ptr<exec::BatchSource> held_out;
  int64_t held_out_steps = 0;
};

// Token sequences are endless: --eval reads this many batches of the next seed's sequences.
constexpr int64_t kTokenEvaluationSteps = 16;

// Token models (GPT) read synthetic token sequences ("--data tokens"); every other model reads
// the data set --data names. Images are read into `image_memory`, the backend's memory to upload
// from.
TrainingData open_training_data(const RunOptions& options, const plans::Plan& plan, BatchPrefetch prefetch,
                                const std::shared_ptr<std::pmr::memory_resource>& image_memory) {
  const model::Model& net = *plan.model;
  if (!net.layer(0).output_is_tokens) {
    const exec::data::DatasetSpec spec = exec::data::parse_dataset_spec(options.data, synthetic_defaults_for(net));
    auto batches = std::make_unique<DatasetBatches>(exec::data::open_dataset(spec, exec::data::Split::kTrain),
                                                    plan.global_batch, options.seed, prefetch, image_memory);
    check_data_fits(batches->dataset(), net, options.data);
    TrainingData data;
    data.steps_per_epoch = batches->dataset().sample_count() / plan.global_batch;
    data.batches = std::move(batches);
    if (options.evaluate) {
      auto test = std::make_unique<DatasetBatches>(exec::data::open_dataset(spec, exec::data::Split::kTest),
                                                   plan.global_batch, options.seed, BatchPrefetch::none, image_memory);
      data.held_out_steps = test->dataset().sample_count() / plan.global_batch;
      data.held_out = std::move(test);
    }
    return data;
  }
  if (options.data != "tokens" && options.data != "synthetic") {
    throw InputError(
        fmt::format("--data {}: model '{}' reads token ids; its data is 'tokens' (synthetic token sequences)",
                    options.data, net.name()));
  }
  if (options.epochs > 0) throw InputError("--epochs: token sequences have no epochs; give --iters");
  TrainingData data;
  data.batches = TokenBatches::for_model(net, options.seed);
  if (options.evaluate) {
    data.held_out = TokenBatches::for_model(net, options.seed + 1);
    data.held_out_steps = kTokenEvaluationSteps;
  }
  return data;
}

// Steps of the run, checked before any work: a count that rounds to nothing, overflows, or
// leaves no step to measure after the warm-up would end in an empty report.
int64_t steps_to_run(const RunOptions& options, int64_t steps_per_epoch) {
  constexpr int64_t kMostSteps = 1'000'000'000;
  if (options.epochs > 0) {
    const double steps = options.epochs * static_cast<double>(steps_per_epoch);
    if (steps < 1.0) {
      throw InputError(
          fmt::format("--epochs {}: less than one step ({} steps make an epoch)", options.epochs, steps_per_epoch));
    }
    if (steps > static_cast<double>(kMostSteps)) {
      throw InputError(
          fmt::format("--epochs {}: {:.3g} steps, more than the {} a run may take", options.epochs, steps, kMostSteps));
    }
    const auto whole = static_cast<int64_t>(steps);
    if (whole <= options.warmup) {
      throw InputError(fmt::format("--epochs {}: {} steps leave none to measure after --warmup {}", options.epochs,
                                   whole, options.warmup));
    }
    return whole;
  }
  if (options.warmup > kMostSteps || options.iterations > kMostSteps - options.warmup) {
    throw InputError(fmt::format("--warmup {} --iters {}: more than the {} steps a run may take", options.warmup,
                                 options.iterations, kMostSteps));
  }
  return options.warmup + options.iterations;
}

// Returns the divergence that stopped the run, if one did.
std::optional<Divergence> train(const RunOptions& options) {
  // Output paths are checked before the run, not found bad after it.
  for (const auto& [flag, path] :
       {std::pair{"--report", &options.report_path}, std::pair{"--trace", &options.trace_path}}) {
    if (!path->empty()) check_output_path(*path, flag);
  }
  const exec::comm::JobPlacement placement = place_and_announce(!options.no_bind, "run");
  if (const std::string warning = exec::comm::threads_warning(placement, options.threads);
      !warning.empty() && exec::comm::world_rank() == 0) {
    std::cerr << fmt::format("[run] warning: {}\n", warning);
  }
  plans::Plan plan = plans::load_plan_file(options.plan_path);
  if (options.learning_rate > 0) plan.optimizer.learning_rate = options.learning_rate;
  exec::comm::MeshCommunicators communicators(plan.mesh);
  const bool leader = communicators.rank() == 0;
  if (!options.ignore_memory_limit) check_plan_fits_memory(plan, communicators, "--ignore-memory-limit");
  // Before the data: a missing GPU is reported without reading a data set first.
  const std::string backend_name = options.backend.empty() ? default_backend() : options.backend;
  exec::Backend backend =
      make_backend(backend_name, communicators,
                   {.threads = options.threads, .tf32 = options.tf32, .kernel_graphs = !options.no_kernel_graphs});
  if (!options.conv_algorithms.empty()) {
    if (backend_name != "cuda") throw InputError("--conv-algorithms: cuDNN algorithm choices come with --backend cuda");
    adopt_conv_algorithms(options.conv_algorithms, "--conv-algorithms");  // before the Trainer makes the kernels
  }
  // On a GPU the host waits while the device computes: it reads the next step's samples
  // meanwhile. On the CPU backend the cores are the step's own, so reading stays in the step.
  TrainingData data =
      open_training_data(options, plan, backend_name == "cuda" ? BatchPrefetch::next_step : BatchPrefetch::none,
                         backend.device->host_link().upload_memory());
  exec::BatchSource& train_batches = *data.batches;
  const int64_t steps_per_epoch = data.steps_per_epoch;
  const int64_t steps = steps_to_run(options, steps_per_epoch);

  exec::Trainer trainer(plan, std::move(backend), options.seed);
  // The bytes each rank sends are then split within its host / across hosts (the report's
  // comm_bytes_sent_per_host_level).
  trainer.communicator().set_rank_hosts(exec::comm::host_of_rank(placement));
  if (!options.resume_dir.empty()) {
    exec::load_checkpoint(trainer, plan, options.resume_dir);
    if (leader)
      std::cout << fmt::format("[run] resumed from {} at step {}\n", options.resume_dir, trainer.steps_taken());
  }
  if (leader) {
    std::cout << fmt::format("[run] {} on {} ranks ({} backend), mesh {}, batch {}, {} steps ({} per epoch), data {}\n",
                             plan.model_spec, plan.mesh.rank_count(), backend_name, plan.mesh.to_string(),
                             plan.global_batch, steps, steps_per_epoch, options.data)
              << std::flush;
  }
  exec::RunRecord record;
  record.placement = placement.ranks;
  record.warmup = static_cast<int>(std::min<int64_t>(options.warmup, steps));
  std::optional<Divergence> divergence;
  {
    // Ends the job, naming the rank, when one stops making progress (a stopped or hung rank would
    // leave the others waiting in MPI forever).
    std::optional<exec::comm::ProgressWatchdog> watchdog;
    if (options.watchdog_seconds > 0) watchdog.emplace(communicators.world(), options.watchdog_seconds);
    for (int64_t i = 0; i < steps; ++i) {
      record.steps.push_back(trainer.step(train_batches));
      // The loss is all-reduced (Trainer::step): every rank sees the same value and stops at the
      // same step, so none is left waiting in a collective. Checked before the checkpoint, which
      // would otherwise replace the last good one with non-finite weights.
      if (const double loss = record.steps.back().loss; !std::isfinite(loss) && !divergence) {
        divergence = Divergence{i + 1, loss};
        if (leader) {
          std::cerr << divergence_message(*divergence, steps, options, plan.optimizer.learning_rate) << '\n'
                    << std::flush;
        }
        if (!options.keep_going_on_nan) break;
      }
      // After the first step: threads that the libraries start on first use exist by then.
      if (i == 0 && backend_name == "cuda" && !options.no_bind) give_driver_its_own_cpu("run", leader);
      const bool due = options.checkpoint_every > 0 && trainer.steps_taken() % options.checkpoint_every == 0;
      if (!options.checkpoint_dir.empty() && (due || i + 1 == steps)) {
        exec::save_checkpoint(trainer, plan, options.checkpoint_dir);
      }
      if (leader && ((i + 1) % options.log_every == 0 || i + 1 == steps)) {
        std::cout << fmt::format("[run] step {}/{}  loss {:.4f}  {:.1f} ms\n", i + 1, steps, record.steps.back().loss,
                                 record.steps.back().seconds.total * 1e3)
                  << std::flush;
      }
    }
  }
  record.bytes = trainer.communicator().counter();
  nlohmann::ordered_json report = exec::gather_run_report(trainer, plan, record);
  const nlohmann::json trace = exec::gather_measured_trace(trainer, record);
  const bool stopped = divergence && !options.keep_going_on_nan;
  if (divergence) {
    report["diverged"] = {{"step", divergence->step},
                          {"loss", divergence->loss_name()},
                          {"learning_rate", plan.optimizer.learning_rate},
                          {"stopped", stopped}};
  }
  if (options.evaluate && !stopped) {
    const double accuracy = trainer.evaluate(*data.held_out, data.held_out_steps);
    report["test_accuracy"] = accuracy;
    if (leader) std::cout << fmt::format("[run] test accuracy {:.2f}%\n", 100 * accuracy);
  }
  // A stopped run's times are of too few steps to summarise; its report says where it stopped.
  if (leader && !stopped) {
    std::cout << fmt::format(
        "[run] step {:.3f} ms (median of {}), {:.1f} samples/s, peak tracked memory rank 0: {:.1f} MB, "
        "sent per step rank 0: {} bytes\n",
        report["iteration_seconds"].get<double>() * 1e3, exec::measured_steps(record).size(),
        report["samples_per_second"].get<double>(), report["ranks"][0]["peak_memory_bytes"].get<double>() / 1e6,
        report["ranks"][0]["comm_bytes_sent"].get<int64_t>());
    if (const auto& rank0 = report["ranks"][0]; rank0.contains("kernel_graphs_per_step")) {
      const auto& counts = rank0["kernel_graphs_per_step"];
      std::cout << fmt::format(
          "[run] kernel graphs rank 0, per measured step: {:.0f} calls replayed, {:.0f} recorded, {:.0f} queued "
          "directly\n",
          counts["replayed"].get<double>(), counts["recorded"].get<double>(), counts["direct"].get<double>());
    }
    if (const auto& rank0 = report["ranks"][0]; rank0.contains("host_waits_per_step")) {
      std::cout << fmt::format(
          "[run] the host waited for the device in {:.0f} instructions per measured step on rank 0 (splitbrain "
          "program numbers them: {})\n",
          rank0["host_waits_per_step"]["instructions"].get<double>(), rank0["host_waits_per_step"]["at"].dump());
    }
  }
  if (leader) {
    OutputFiles outputs;  // both or neither
    if (!options.trace_path.empty())
      outputs.add_json("--trace", options.trace_path, named_trace(trace, TraceKind::measured, report));
    if (!options.report_path.empty()) outputs.add_json("--report", options.report_path, report);
    outputs.write_all();
  }
  if (stopped) return divergence;
  return std::nullopt;
}

void run_command(const RunOptions& options) {
  keep_freed_memory_for_reuse();
  bool diverged = false;
  {
    exec::comm::MpiProcess mpi;
    try {
      diverged = train(options).has_value();
    } catch (const InputError& e) {
      exec::comm::abort_job(e.what(), 2);
    } catch (const std::exception& e) {
      exec::comm::abort_job(fmt::format("internal error: {}", e.what()), 1);
    }
  }
  // After every rank's MPI_Finalize: each exits with the code, and mpirun passes it on.
  if (diverged) std::exit(kDivergedExitCode);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* command =
      app.add_subcommand("run", "Train with a plan for real (start it with mpirun -np <ranks of the plan>)");
  command->add_option("--plan", o->plan_path, "Plan file")->type_name("FILE")->required();
  command->add_option("--iters", o->iterations, "Measured steps after the warm-up")
      ->check(positive_integer_for(o->iterations))
      ->default_val(10);
  command->add_option("--warmup", o->warmup, "Steps run before measuring")
      ->check(non_negative_integer_for(o->warmup))
      ->default_val(2);
  command->add_option("--epochs", o->epochs, "Train for this many epochs instead of --iters (fractions allowed)")
      ->check(positive_finite());
  command
      ->add_option(
          "--data", o->data,
          "fashion-mnist[:DIR] | cifar10:DIR | synthetic[:classes=N,shape=CxHxW,samples=N,test-samples=N,seed=N] "
          "(synthetic: the model's input shape and classes unless given) | tokens (token models)")
      ->default_val("synthetic");
  command->add_option("--report", o->report_path, "Write the measured report (JSON) to FILE (- for standard output)")
      ->type_name("FILE|-");
  command->add_option("--trace", o->trace_path, "Write a Chrome trace of the last measured step (open in Perfetto)")
      ->type_name("FILE");
  command->add_flag("--eval", o->evaluate,
                    "After training, measure accuracy on the test split (token models: next-token accuracy on "
                    "16 batches of the next seed's sequences)");
  command->add_option("--seed", o->seed, "Seed of the initial weights, the data order and dropout")->default_val(1);
  command
      ->add_option("--backend", o->backend,
                   "cpu: oneDNN kernels and MPI collectives; cuda: CUDA kernels and NCCL collectives, one GPU "
                   "per rank (default: cuda when this build has the CUDA backend and a GPU is visible, else cpu)")
      ->check(CLI::IsMember(std::vector<std::string>(std::begin(kBackendNames), std::end(kBackendNames))));
  command
      ->add_option("--conv-algorithms", o->conv_algorithms,
                   "cuda backend: run the convolutions with the cuDNN algorithms `calibrate --backend cuda "
                   "--conv-algorithms` wrote (the ones its prediction timed); else each process times its own")
      ->type_name("FILE");
  command->add_flag("--tf32", o->tf32,
                    "cuda backend: fp32 products on TF32 tensor cores (10 mantissa bits in; PyTorch's allow_tf32). "
                    "Off by default so results match the cpu backend; the report records it");
  command->add_flag("--no-kernel-graphs", o->no_kernel_graphs,
                    "cuda backend: queue every cuDNN and cuBLAS call directly, not through the CUDA graph recorded for "
                    "its arguments (calibrate times them through the graphs, as run does by default)");
  command
      ->add_option("--watchdog-seconds", o->watchdog_seconds,
                   "End the job, naming the rank, when a rank makes no progress for this long (0: never)")
      ->check(non_negative_finite())
      ->default_val(600);
  command->add_flag("--ignore-memory-limit", o->ignore_memory_limit,
                    "Run even if the plan's predicted memory exceeds what this machine has available");
  command->add_option("--threads", o->threads, "oneDNN threads per rank (cpu backend), 1 to 1024")
      ->check(integer_from(1, 1024))
      ->default_val(1);
  command->add_option("--lr", o->learning_rate, "Learning rate (default: the plan's)")->check(positive_finite());
  command->add_option("--log-every", o->log_every, "Print the loss every N steps")
      ->check(positive_integer_for(o->log_every))
      ->default_val(10);
  CLI::Option* checkpoint =
      command
          ->add_option("--checkpoint", o->checkpoint_dir,
                       "Write checkpoints into DIR (every --checkpoint-every steps and at the end)")
          ->type_name("DIR");
  command->add_option("--checkpoint-every", o->checkpoint_every, "Steps between checkpoints (needs --checkpoint)")
      ->check(positive_integer_for(o->checkpoint_every))
      ->needs(checkpoint);
  command->add_option("--resume", o->resume_dir, "Continue from the checkpoint in DIR")->type_name("DIR");
  command->add_flag("--no-bind", o->no_bind, kNoBindHelp);
  command->add_flag("--keep-going-on-nan", o->keep_going_on_nan,
                    "Train on when the loss stops being a finite number (its losses are then null in the report) "
                    "instead of stopping at that step with exit code 3");
  command->footer(
      "Exit codes: 0 trained; 1 internal error; 2 bad input (a flag, the plan, the data); 3 the training diverged "
      "(a loss not a finite number: the step and the likely cause are printed, the report is written with "
      "\"diverged\"; see --keep-going-on-nan)");
  command->callback([o] { run_command(*o); });
}

}  // namespace splitbrain::tools
