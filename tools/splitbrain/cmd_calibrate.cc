// `splitbrain calibrate` (under mpirun for the collectives): measures this machine with the
// executor's own kernels and MPI, fits the cost model's rates, and writes a cluster file that
// `plan` and `simulate` read (--cluster FILE).

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"
#include "model/file_io.h"
#include "model/model_json.h"
#include "sim/cluster_json.h"
#include "sim/cluster_presets.h"
#include "tools/calibration/pass_overhead_calibration.h"
#include "tools/training/backend_choice.h"
#include "tools/calibration/cache_probe.h"
#include "tools/splitbrain/commands.h"
#include "tools/training/heap_reuse.h"
#include "tools/calibration/host_layout.h"
#include "tools/calibration/kernel_calibration.h"
#include "tools/calibration/level_calibration.h"
#include "exec/comm/mpi_process.h"
#include "tools/training/placement_announcement.h"
#include "tools/calibration/device_rate_calibration.h"
#include "tools/calibration/problem_calibration.h"
#include "tools/splitbrain/stage_progress.h"
#include "tools/calibration/step_overlap_calibration.h"
#include "tools/splitbrain/number_flags.h"

namespace splitbrain::tools {
namespace {

struct CalibrateOptions {
  std::string backend = "cpu";
  std::string out;   // empty: local-<backend>-calibrated.json
  std::string base;  // empty: the backend's preset (local-cpu; dgx-h100 for cuda)
  int repeats = 5;
  // --model: also time the exact kernel problems of these models' plans.
  std::vector<std::string> models;
  std::vector<int> devices;  // empty: 1 and the job's rank count
  std::vector<int64_t> batches = {64};
  std::string conv_algorithms;  // cuda: where to write the cuDNN algorithms the problems ran with
  bool no_bind = false;
};

// What `--backend cuda` measures: the exact kernel problems of --model's plans on this rank's GPU,
// the costs around them, and NCCL's collectives when there are GPUs to join. Compute rates and
// the overlap of communication with compute are kept from the base cluster.
constexpr const char* kCudaMeasures =
    "the exact kernel problems of --model's plans on this rank's GPU (cuDNN, cuBLAS and own kernels, timed by CUDA "
    "events with the launches queued ahead), the host link (the input's upload), the optimizer's update rate and "
    "the runtime's host time per pass (a short run of the first model's step), and with two or more ranks every "
    "collective among their GPUs with NCCL on device buffers; compute rates and the overlap of communication are "
    "the base cluster's";

// What can be found wrong without measuring, found before the minutes of measurement: the
// cluster file's folder (written by rank 0) and every --model (built or read in full).
void check_inputs_before_measuring(const CalibrateOptions& options) {
  if (exec::comm::world_rank() == 0) check_output_path(options.out, "--out");
  for (const std::string& model : options.models) {
    try {
      model::resolve_model(model);
    } catch (const InputError& e) {
      throw InputError(fmt::format("--model {}: {}", model, e.what()));
    }
  }
}

// Each device count's plans run as many ranks at once on a node as it has: this host must have them.
void check_device_counts(const std::vector<int>& device_counts, const sim::Cluster& cluster, const HostLayout& layout) {
  for (int devices : device_counts) {
    const int per_node = std::min(devices, cluster.levels.front().fan_out);
    if (per_node > layout.ranks_per_host) {
      throw InputError(fmt::format(
          "--devices {}: plans of {} ranks run {} at once on a node here; measuring their kernels needs as many "
          "ranks on each host ({} here; mpirun -np {} on one host)",
          devices, devices, per_node, layout.ranks_per_host, per_node));
    }
  }
}

void calibrate(CalibrateOptions options) {
  const bool on_gpu = options.backend == "cuda";
  if (options.base.empty()) options.base = on_gpu ? "dgx-h100" : "local-cpu";
  if (options.out.empty()) options.out = fmt::format("local-{}-calibrated.json", options.backend);
  if (on_gpu && options.models.empty()) {
    throw InputError(fmt::format("--backend cuda: give --model; it measures {}", kCudaMeasures));
  }
  if (!options.conv_algorithms.empty()) {
    if (!on_gpu) throw InputError("--conv-algorithms: cuDNN algorithm choices come with --backend cuda");
    check_output_path(options.conv_algorithms, "--conv-algorithms");
  }
  check_inputs_before_measuring(options);
  // Where the ranks ran is part of what was measured: it goes into the cluster file's sources.
  const exec::comm::JobPlacement job = place_and_announce(!options.no_bind, "calibrate");
  const std::string placement = exec::comm::placement_summary(job);
  const MPI_Comm comm = MPI_COMM_WORLD;
  int rank = 0;
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &ranks));
  const bool leader = rank == 0;
  sim::Cluster cluster = sim::resolve_cluster(options.base);
  const HostLayout layout = host_layout(exec::comm::host_of_rank(job));
  const std::vector<int> device_counts =
      options.devices.empty() ? (ranks > 1 ? std::vector<int>{1, ranks} : std::vector<int>{1}) : options.devices;
  if (!options.models.empty()) check_device_counts(device_counts, cluster, layout);
  // Minutes of measuring, most of whose detail goes to standard output: a line per stage on
  // standard error says which is running and how long it has taken so far.
  const std::string kernel_stage =
      "kernels: convolution, inner product, ReLU, max pooling and the SGD update, forward and backward, at several "
      "sizes";
  const std::string link_stage =
      ranks > 1 ? fmt::format("links: every collective among the {} ranks through {}, 8 B to 64 MiB", ranks,
                              on_gpu ? "NCCL" : "MPI")
                : std::string("links: one rank, nothing to measure (the base cluster's are kept)");
  const std::string cache_stage = "the cache: reads of 2 MiB to 256 MiB, to weigh the problems' cold and warm times";
  const std::string problem_stage = fmt::format("the exact kernel problems of the plans for {} (batch {}, {} devices)",
                                                fmt::join(options.models, ", "), fmt::join(options.batches, " and "),
                                                fmt::join(device_counts, " and "));
  const std::string device_rate_stage = "the GPU's rates: the host link and the optimizer's update";
  const std::string pass_stage = "the runtime's host time per pass: a short run of the first model's step";
  const std::string overlap_stage =
      "the overlap of a gradient reduction with the backward: a few steps of the first model's data-parallel plan";
  std::vector<std::string> stages;
  if (!on_gpu) stages.push_back(kernel_stage);
  stages.push_back(link_stage);
  if (!options.models.empty()) {
    if (!on_gpu) stages.push_back(cache_stage);
    stages.push_back(problem_stage);
    if (on_gpu) stages.push_back(device_rate_stage);
    if (on_gpu && ranks == 1) stages.push_back(pass_stage);
    if (!on_gpu && ranks > 1) stages.push_back(overlap_stage);
  }
  StageProgress progress("[calibrate]", stages, leader ? &std::cerr : nullptr);
  if (on_gpu) {
    if (leader) {
      std::cout << fmt::format("[calibrate] {} ranks on their GPUs; starting from '{}'; measures {}\n", ranks,
                               options.base, kCudaMeasures);
    }
  } else {
    if (leader) {
      std::cout << fmt::format(
          "[calibrate] {} ranks, one thread each; starting from preset '{}'\n[calibrate] kernels (every rank at "
          "once)\n",
          ranks, options.base);
    }
    progress.begin(kernel_stage);
    calibrate_kernels({options.repeats, true}, comm, cluster.device);
  }
  // The links as the backend's collectives use them: MPI on host arrays, NCCL between GPUs.
  MeasuredLevels levels;
  progress.begin(link_stage);
  {
    const std::unique_ptr<CollectiveTransport> transport =
        ranks > 1 ? make_collective_transport(options.backend) : nullptr;
    levels = calibrate_levels({options.repeats, true, transport.get()}, comm, layout, cluster);
  }
  std::string step_overlap;  // where --model's step measured the overlap, what it found
  if (!options.models.empty()) {
    std::vector<PlanningTarget> targets;
    for (const std::string& model : options.models) {
      for (int devices : device_counts)
        for (int64_t batch : options.batches) targets.push_back({model, devices, batch});
    }
    BackendKernels kernels = make_backend_kernels(options.backend, {});
    // Each host times its own ranks' problems (measure_kernel_problems says why).
    MPI_Comm host = MPI_COMM_NULL;
    SB_MPI_CHECK(MPI_Comm_split(comm, layout.host_of_rank[static_cast<size_t>(rank)], rank, &host));
    // The swept and warm times of each problem are weighed by how much of a step fits this cache.
    if (kernels.computes_on_host) {
      progress.begin(cache_stage);
      kernels.last_level_cache_bytes = measure_host_cache_bytes(comm, host, leader, kernels.last_level_cache_bytes);
    }
    // The measured kernels change the planner's ranking, and a plan it ranks only then has
    // problems of its own (seen: a tiny GPT's tensor-parallel plan with its MLP replicated, whose
    // 4x larger GELU was then priced off the memory-rate curve at a quarter of its time). So the
    // plans are ranked again on what was measured, until they bring nothing new.
    constexpr int kMaxRounds = 4;
    progress.begin(problem_stage);
    for (int round = 1; round <= kMaxRounds; ++round) {
      const std::vector<PlannedProblem> problems =
          unmeasured(planned_kernel_problems(targets, cluster), cluster.device);
      if (problems.empty()) break;
      if (leader) {
        std::cout << fmt::format("[calibrate] {} {}kernel problems of the plans for {} (batch {}, {} devices){}\n",
                                 problems.size(), round == 1 ? "" : "more ", fmt::join(options.models, ", "),
                                 fmt::join(options.batches, " and "), fmt::join(device_counts, " and "),
                                 round == 1 ? "" : ", ranked on the kernels measured so far")
                  << std::flush;
      }
      measure_kernel_problems(problems, options.repeats, leader, comm, host, kernels, cluster.device);
    }
    SB_MPI_CHECK(MPI_Comm_free(&host));
    if (on_gpu) {
      progress.begin(device_rate_stage);
      measure_device_rates(kernels, leader, cluster.device);
      // The runtime's own host time per pass, from the first model's step at the smallest batch
      // (where the host's queuing shows most); a run of one rank, so one process.
      if (ranks == 1) {
        progress.begin(pass_stage);
        // An aid to the cost model, not a measurement the rest needs: a run that fails (a model too
        // large for one GPU at that batch) leaves it out, saying why.
        try {
          cluster.device.instruction_host_seconds = measure_pass_host_seconds(
              options.models.front(), *std::min_element(options.batches.begin(), options.batches.end()), cluster,
              !options.no_bind, leader);
        } catch (const std::exception& e) {
          std::cerr << fmt::format("[calibrate] warning: the runtime's host time per pass not measured: {}\n",
                                   e.what());
        }
      } else if (leader) {
        std::cout << "[calibrate] the runtime's host time per pass: measured by a run of one rank (mpirun -np 1)\n";
      }
    }
    // Last, on the kernels and links measured: the simulator prices the step it runs with them.
    if (!on_gpu && ranks > 1) {
      progress.begin(overlap_stage);
      if (const std::optional<StepOverlap> measured =
              measure_step_overlap(options.models, options.batches.front(), cluster, leader)) {
        cluster.communication_overlap = measured->overlap;
        step_overlap = fmt::format("{}'s data-parallel step at batch {} on {} ranks",
                                   fmt::join(measured->models, " and "), options.batches.front(), ranks);
      }
    }
    if (leader && !options.conv_algorithms.empty()) {
      save_conv_algorithms(options.conv_algorithms, "--conv-algorithms");
      std::cout << fmt::format("[calibrate] wrote the cuDNN algorithms the convolutions were timed with to {}\n",
                               options.conv_algorithms);
    }
  }
  progress.finish();
  if (!leader) return;
  const sim::Device& device = cluster.device;
  cluster.name = options.base + "-calibrated";
  if (on_gpu) {
    cluster.description =
        fmt::format("Measured by `splitbrain calibrate --backend cuda` with {} ranks from '{}': {}; {}.", ranks,
                    options.base, kCudaMeasures, levels.summary);
    cluster.sources.push_back(fmt::format("splitbrain calibrate --backend cuda: {}", levels.source));
    cluster.sources.push_back(fmt::format("splitbrain calibrate --backend cuda: rank placement {}", placement));
  } else {
    cluster.description = fmt::format(
        "Measured by `splitbrain calibrate` with {} ranks from preset '{}': peak {:.1f} GFLOP/s; conv forward {:.0f}% "
        "/ "
        "backward {:.0f}% of it, gemm forward {:.0f}% / backward {:.0f}%; memory-bound kernels {:.1f} GB/s; {}.",
        ranks, options.base, device.peak_fp32_flops_per_second / 1e9, device.conv_efficiency.max_efficiency * 100,
        device.efficiency(sim::OpClass::conv, sim::KernelPass::backward).max_efficiency * 100,
        device.gemm_efficiency.max_efficiency * 100,
        device.efficiency(sim::OpClass::gemm, sim::KernelPass::backward).max_efficiency * 100,
        device.memory_bandwidth_bytes_per_second / 1e9,
        step_overlap.empty()
            ? levels.summary
            : fmt::format("{}, then {:+.2f} in {}", levels.summary, cluster.communication_overlap, step_overlap));
    cluster.sources = {
        "splitbrain calibrate: the executor's oneDNN convolution and inner product, forward, backward-data and "
        "backward-weights, at 6 and 5 sizes; ReLU, max pooling and the SGD update at several sizes; rates fitted as "
        "peak * size / (size + half) by relative least squares",
        "splitbrain calibrate: all-reduce, all-gather, reduce-scatter, all-to-all and send/recv through the executor's "
        "MPI code, 8 B to 64 MiB; latency and bandwidth per kind fitted with the simulator's formula for the cluster's "
        "algorithm; overlap from an MPI_Iallreduce during convolutions against each alone",
        fmt::format("splitbrain calibrate: {}", levels.source),
        fmt::format("splitbrain calibrate: rank placement {}", placement)};
    // Whether a node's ranks take turns on its cores or each has one is known from where they
    // ran, not guessed from how much they slowed each other (sim::Cluster::cpu_cores_per_node).
    cluster.cpu_cores_per_node = exec::comm::fewest_cpus_per_host(job);
    cluster.sources.push_back(fmt::format(
        "splitbrain calibrate: cpu_cores_per_node {}, the CPUs the ranks of a host may run on (the fewest of any host)",
        cluster.cpu_cores_per_node));
  }
  if (!step_overlap.empty()) {
    cluster.sources.push_back(fmt::format(
        "splitbrain calibrate --model: communication_overlap {:+.2f} from {}, run with its gradient buckets reduced "
        "during the backward and, alternately, each waited for when full: the overlap at which the simulator charges "
        "the first's reductions what they cost it (tools/calibration/step_overlap_calibration.h)",
        cluster.communication_overlap, step_overlap));
  }
  if (!options.models.empty()) {
    cluster.sources.push_back(
        fmt::format("splitbrain calibrate --model {}: {} exact kernel problems of the planned plans (convolutions, "
                    "pooling, activations, linear layers, attention cores, layer norms, the loss), each timed forward, "
                    "backward-data and backward-weights with the executor's kernel (device.measured_kernels)",
                    fmt::join(options.models, " --model "), device.measured_kernels.size()));
  }
  sim::validate_cluster(cluster, options.out);
  sim::write_cluster_file(cluster, options.out);
  std::cout << fmt::format("[calibrate] {}\n[calibrate] wrote {}\n", cluster.description, options.out);
}

void run_calibrate(const CalibrateOptions& options) {
  keep_freed_memory_for_reuse();
  exec::comm::MpiProcess mpi;
  try {
    calibrate(options);
  } catch (const InputError& e) {
    exec::comm::abort_job(e.what(), 2);
  } catch (const std::exception& e) {
    exec::comm::abort_job(fmt::format("internal error: {}", e.what()), 1);
  }
}

}  // namespace

void add_calibrate_command(CLI::App& app) {
  auto options = std::make_shared<CalibrateOptions>();
  CLI::App* command =
      app.add_subcommand("calibrate", "Measure this machine (under mpirun for the link) and write a cluster file");
  command
      ->add_option("--backend", options->backend,
                   "cpu: time the oneDNN kernels, MPI links and collectives; cuda: time --model's kernel problems on "
                   "this rank's GPU and, with 2 or more ranks, NCCL's collectives between the GPUs (the rest is kept "
                   "from --base)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->default_val("cpu");
  command->add_option("--out", options->out, "Cluster file to write (default: local-<backend>-calibrated.json)")
      ->type_name("FILE");
  command
      ->add_option("--base", options->base,
                   "Preset or cluster file whose structure is kept (default: local-cpu; dgx-h100 for cuda)")
      ->type_name("NAME|FILE");
  command->add_option("--repeats", options->repeats, "Timed runs per measurement (medians)")
      ->check(positive_integer_for(options->repeats))
      ->default_val(5);
  command
      ->add_option("--model", options->models,
                   "Also time the exact kernel problems (convolutions, pooling, activations, linear layers, "
                   "attention cores, layer norms, the loss) of the plans `splitbrain plan` considers for this model "
                   "(zoo name or file; repeatable); the cost model then uses these times for them. With 2 or more CPU "
                   "ranks, also how much a gradient reduction beside the backward costs, from a few steps of the "
                   "model's data-parallel plan at the first --batch")
      ->type_name("MODEL");
  command
      ->add_option("--devices", options->devices, "Device counts to plan --model for (default: 1 and the job's ranks)")
      ->check(positive_integer_for(options->devices))
      ->delimiter(',');
  command->add_option("--batch", options->batches, "Global batches to plan --model with (comma-separated)")
      ->check(positive_integer_for(options->batches))
      ->delimiter(',')
      ->capture_default_str();
  command
      ->add_option("--conv-algorithms", options->conv_algorithms,
                   "cuda: also write the cuDNN algorithms the convolutions were timed with, for `run "
                   "--conv-algorithms` (so the run times the same ones)")
      ->type_name("FILE");
  command->add_flag("--no-bind", options->no_bind, kNoBindHelp);
  command->callback([options] { run_calibrate(*options); });
}

}  // namespace splitbrain::tools
