#include "tools/calibration/step_overlap_calibration.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <exception>
#include <iostream>
#include <memory>
#include <utility>

#include "exec/comm/mesh_communicators.h"
#include "exec/comm/mpi_check.h"
#include "exec/data/dataset_spec.h"
#include "exec/runtime/trainer.h"
#include "model/errors.h"
#include "model/model_json.h"
#include "sim/search/families.h"
#include "sim/search/planner.h"
#include "sim/simulation.h"
#include "tools/training/backend_choice.h"
#include "tools/calibration/calibration_timing.h"
#include "tools/training/dataset_batches.h"
#include "tools/training/memory_fit.h"
#include "tools/calibration/overlap_fit.h"
#include "tools/training/synthetic_defaults.h"
#include "tools/training/token_batches.h"

namespace splitbrain::tools {
namespace {

// Per variant: warm-up steps (the first touches every page of the step's memory: on this host's
// VM ~15 us a page) and measured ones, the two variants alternating step by step so that a slow
// spell of the shared host falls on both.
constexpr int kWarmupSteps = 2;
constexpr int kMeasuredSteps = 10;

// One model's step with its buckets reduced beside the backward and without.
struct StepPair {
  plans::Plan overlapped;
  plans::Plan serial;
  // The serial step as priced, less its communication: no overlap moves it, so it is priced once.
  double serial_priced_without_communication_seconds = 0.0;
};

// What a rank's step spent beyond its communication: the backward, forward and optimizer.
double without_communication(const exec::StepSeconds& seconds) {
  return seconds.total - seconds.communication - seconds.gradient_sync;
}

// What the overlapped variant's reductions cost its step: the median over the pairs of steps, and
// how much the pairs spread about it (their interquartile range).
struct MeasuredCost {
  double seconds = 0.0;
  double spread_seconds = 0.0;
};

// The seconds the overlapped variant's reductions cost its step, or nullopt where the plans cannot
// run here (every rank says why). Per pair of steps: the overlapped step's time (its slowest
// rank's) less the other's without its communication, on its slowest rank, as the simulator
// prices the compute (calibrate's kernel times are the slowest rank's): the faster rank's waits
// for the slower are not the reductions' cost. The median over the pairs.
std::optional<MeasuredCost> measured_reduction_cost(const StepPair& pair, int64_t batch, bool print) {
  const model::Model& net = *pair.overlapped.model;
  exec::comm::MeshCommunicators communicators(pair.overlapped.mesh);
  // Synthetic data of the model's shape, as `run --data synthetic` feeds it.
  const auto synthetic_batches = [&]() -> std::unique_ptr<exec::BatchSource> {
    if (net.layer(0).output_is_tokens) return TokenBatches::for_model(net, 1);
    const exec::data::DatasetSpec data = exec::data::parse_dataset_spec("synthetic", synthetic_defaults_for(net));
    return std::make_unique<DatasetBatches>(exec::data::open_dataset(data, exec::data::Split::kTrain), batch, 1);
  };
  std::vector<std::unique_ptr<exec::Trainer>> trainers;
  std::vector<std::unique_ptr<exec::BatchSource>> batches;
  try {
    // One after the other: the second's check sees the memory the first took.
    for (const plans::Plan* plan : {&pair.overlapped, &pair.serial}) {
      check_plan_fits_memory(*plan, communicators, "calibrate");
      trainers.push_back(std::make_unique<exec::Trainer>(*plan, make_backend("cpu", communicators, {}), 1));
      batches.push_back(synthetic_batches());
    }
  } catch (const InputError& e) {
    if (print) std::cout << fmt::format("[calibrate] overlap in the step: {} left out: {}\n", net.name(), e.what());
    return std::nullopt;
  }
  std::vector<double> costs;
  for (int step = 0; step < kWarmupSteps + kMeasuredSteps; ++step) {
    const exec::StepResult overlapped = trainers[0]->step(*batches[0]);
    const exec::StepResult serial = trainers[1]->step(*batches[1]);
    std::array<double, 2> slowest = {overlapped.seconds.total, without_communication(serial.seconds)};
    SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, slowest.data(), 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
    if (step >= kWarmupSteps) costs.push_back(slowest[0] - slowest[1]);
  }
  std::sort(costs.begin(), costs.end());
  const size_t n = costs.size();
  return MeasuredCost{upper_median(costs), costs[3 * n / 4] - costs[n / 4]};
}

// What the simulator charges the overlapped variant's reductions at `overlap`, the same way.
double priced_reduction_cost(const StepPair& pair, const sim::Cluster& cluster, double overlap) {
  sim::Cluster at = cluster;
  at.communication_overlap = overlap;
  return sim::simulate(pair.overlapped, at).iteration_seconds - pair.serial_priced_without_communication_seconds;
}

}  // namespace

std::optional<StepOverlap> measure_step_overlap(const std::vector<std::string>& model_specs, int64_t batch,
                                                const sim::Cluster& cluster, bool print) {
  int ranks = 1;
  SB_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &ranks));
  std::vector<StepPair> pairs;
  MeasuredCost measured;  // summed over the models
  StepOverlap result;
  for (const std::string& spec : model_specs) {
    sim::PlannerRequest request;
    request.model = std::make_shared<model::Model>(model::resolve_model(spec));
    request.model_spec = spec;
    request.cluster = cluster;
    request.devices = ranks;
    request.global_batch = batch;
    sim::validate_request(request);
    std::optional<plans::Plan> plan = sim::data_parallel_plan(request);
    if (!plan) continue;  // the batch does not split over the ranks
    StepPair pair{*plan, *plan};
    pair.overlapped.overlap_gradient_sync = true;
    pair.serial.overlap_gradient_sync = false;
    const sim::Prediction serial = sim::simulate(pair.serial, cluster);
    pair.serial_priced_without_communication_seconds = serial.iteration_seconds - serial.phases.comm_exposed;
    // A model whose reductions are all waited for at once (one bucket) says nothing of the overlap.
    if (priced_reduction_cost(pair, cluster, -1.0) - priced_reduction_cost(pair, cluster, 1.0) < 1e-9) continue;
    if (print) {
      std::cout << fmt::format(
                       "[calibrate] overlap in the step: {}'s data-parallel step, batch {}, {} steps with the "
                       "gradient buckets reduced during the backward and {} after it, alternately\n",
                       spec, batch, kWarmupSteps + kMeasuredSteps, kWarmupSteps + kMeasuredSteps)
                << std::flush;
    }
    const std::optional<MeasuredCost> cost = measured_reduction_cost(pair, batch, print);
    if (!cost) continue;
    if (print) {
      std::cout << fmt::format(
          "[calibrate] overlap in the step: {}: the reductions cost the step {:.1f} ms (the pairs of steps spread "
          "{:.1f} ms); priced {:.1f} ms all hidden (overlap +1), {:.1f} ms none (0), {:.1f} ms twice (-1)\n",
          spec, cost->seconds * 1e3, cost->spread_seconds * 1e3, priced_reduction_cost(pair, cluster, 1.0) * 1e3,
          priced_reduction_cost(pair, cluster, 0.0) * 1e3, priced_reduction_cost(pair, cluster, -1.0) * 1e3);
    }
    pairs.push_back(std::move(pair));
    measured.seconds += cost->seconds;
    measured.spread_seconds += cost->spread_seconds;
    result.models.push_back(spec);
  }
  if (pairs.empty()) {
    if (print) {
      std::cout << "[calibrate] overlap in the step: no model's data-parallel step reduces a bucket beside its "
                   "backward; the collective probe's overlap stays\n";
    }
    return std::nullopt;
  }
  const auto priced_total = [&](double overlap) {
    double total = 0.0;
    for (const StepPair& pair : pairs) total += priced_reduction_cost(pair, cluster, overlap);
    return total;
  };
  const std::optional<double> overlap = overlap_matching_cost(priced_total, measured.seconds, measured.spread_seconds);
  if (!overlap) {
    if (print) {
      std::cout << fmt::format(
          "[calibrate] overlap in the step: not read: the reductions cost the step {:.1f} ms, priced {:.1f} ms even "
          "all hidden: the link they wait on is priced too high, which no overlap can say; the collective probe's "
          "overlap stays\n",
          measured.seconds * 1e3, priced_total(1.0) * 1e3);
    }
    return std::nullopt;
  }
  result.overlap = *overlap;
  if (print) {
    std::cout << fmt::format(
        "[calibrate] overlap in the step: {:+.2f} (the host pays {:.2f}x an overlapped reduction's time)\n",
        result.overlap, 1.0 - result.overlap);
  }
  return result;
}

}  // namespace splitbrain::tools
