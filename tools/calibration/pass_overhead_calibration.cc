#include "tools/calibration/pass_overhead_calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <utility>

#include "exec/comm/mesh_communicators.h"
#include "exec/data/dataset_spec.h"
#include "exec/runtime/trainer.h"
#include "model/model_json.h"
#include "sim/search/families.h"
#include "sim/search/planner.h"
#include "tools/training/backend_choice.h"
#include "tools/training/dataset_batches.h"
#include "tools/calibration/pass_host_excess.h"
#include "tools/training/placement_announcement.h"
#include "tools/training/synthetic_defaults.h"

namespace splitbrain::tools {
namespace {

// Warm-up steps (the allocator's first blocks, cuDNN's algorithm searches) and measured steps.
constexpr int kWarmupSteps = 3;
constexpr int kMeasuredSteps = 5;

}  // namespace

double measure_pass_host_seconds(const std::string& model_spec, int64_t batch, const sim::Cluster& cluster,
                                 bool own_cpu, bool print) {
  sim::PlannerRequest request;
  request.model = std::make_shared<model::Model>(model::resolve_model(model_spec));
  request.model_spec = model_spec;
  request.cluster = cluster;
  request.devices = 1;
  request.global_batch = batch;
  sim::validate_request(request);
  const model::Model& net = *request.model;
  const std::optional<plans::Plan> plan = sim::data_parallel_plan(request);
  if (net.layer(0).output_is_tokens || !plan) {
    if (print)
      std::cout << fmt::format("[calibrate] the runtime's host time per pass: not measured on {}\n", model_spec);
    return 0.0;
  }
  if (print) {
    std::cout << fmt::format("[calibrate] the runtime's host time per pass: {} steps of {}, batch {}, on this GPU\n",
                             kWarmupSteps + kMeasuredSteps, model_spec, batch)
              << std::flush;
  }
  exec::comm::MeshCommunicators communicators(plan->mesh);
  exec::Backend backend = make_backend("cuda", communicators, {});
  const exec::data::DatasetSpec data = exec::data::parse_dataset_spec("synthetic", synthetic_defaults_for(net));
  DatasetBatches batches(exec::data::open_dataset(data, exec::data::Split::kTrain), batch, 1, BatchPrefetch::next_step,
                         backend.device->host_link().upload_memory());
  exec::Trainer trainer(*plan, std::move(backend), 1);
  // Priced without any earlier figure of it (a --base that was itself calibrated), which the
  // excess replaces rather than adds to.
  sim::Cluster kernels_only = cluster;
  kernels_only.device.instruction_host_seconds = 0.0;
  const sim::Prediction prediction = sim::simulate(*plan, kernels_only);
  std::vector<PassHostExcess> excess;
  for (int step = 0; step < kWarmupSteps + kMeasuredSteps; ++step) {
    trainer.step(batches);
    // As `run` places its threads, so that the host time measured is the one a run's step has.
    if (step == 0 && own_cpu) give_driver_its_own_cpu("calibrate", print);
    if (step < kWarmupSteps || !trainer.last_step_host_ran_ahead()) continue;
    const std::vector<PassHostExcess> of_step = pass_host_excess(trainer.last_step_timeline(), prediction, net);
    excess.insert(excess.end(), of_step.begin(), of_step.end());
  }
  const double seconds = per_pass_host_seconds(excess);
  if (print) {
    std::cout << fmt::format(
        "[calibrate] the runtime's host time per pass: {:.1f} us beyond its kernels' queuing "
        "(mean over {} passes, the highest and lowest tenth left out)\n[calibrate] the runtime's host time per "
        "pass, by op (median): {}\n",
        seconds * 1e6, excess.size(), excess_by_op(excess, net));
  }
  return seconds;
}

}  // namespace splitbrain::tools
