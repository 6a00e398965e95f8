#include "sim/job_lower_bound.h"

#include <limits>
#include <numeric>
#include <vector>

#include "plans/op_sharding.h"
#include "sim/compute_cost.h"

namespace splitbrain::sim {
namespace {

// The cluster's device as the roofline's best case: every kernel at the peak FLOP rate
// (efficiency 1 at any size), memory traffic free, no measured GEMM table. compute_cost then
// charges a layer exactly the FLOPs it prices at the FLOP rate over the peak, and nothing for
// what it prices as memory passes (attention's softmax, the executor's zero fills).
Cluster at_peak(const Cluster& cluster) {
  Cluster ideal = cluster;
  Device& device = ideal.device;
  const EfficiencyCurve full{1.0, 0.0};
  device.gemm_efficiency = full;
  device.conv_efficiency = full;
  device.elementwise_efficiency = full;
  device.memory_efficiency = full;
  device.backward = {};
  device.weight_gradient = {};
  device.op_memory_efficiency.clear();
  device.measured_kernels.clear();
  device.gemm_table.reset();
  device.memory_bandwidth_bytes_per_second = std::numeric_limits<double>::infinity();
  return ideal;
}

// The whole batch's forward and backward through every layer on one device at peak.
//
// Why no plan's step is faster than this over `devices`: a rank's layer costs it
// layer_compute_seconds, whose FLOP part is the layer's FLOPs x micro-batch x work_fraction at
// peak x efficiency(size) <= peak (efficiencies are in (0, 1], cluster.h validates them; the
// roofline max and the memory passes only add; a GEMM table's efficiencies are in (0, 1] too).
// Those FLOPs are linear in micro-batch x work_fraction, and the ranks of a stage together cover
// every sample of the layer at least once per step (work_fraction is 1 / the ranks that split
// the work; the others compute it again), so the ranks' FLOPs add up to at least the batch's.
// A stage's timeline runs its compute instructions one after another on its compute stream, so
// the step lasts at least the busiest rank's compute, at least the mean over all ranks: this
// figure over `devices`. Recomputation, ZeRO gathers, gradient accumulation passes, the update
// and every collective only add to a rank's time.
double batch_seconds_at_peak(const model::Model& model, int64_t global_batch, model::DType dtype,
                             const Cluster& cluster) {
  const Cluster ideal = at_peak(cluster);
  const plans::Mesh one_device({{"data", 1}});
  const plans::LayerSharding whole;
  double seconds = 0.0;
  for (int v = 0; v < model.size(); ++v) {
    // An input layer loads its block: the step program charges it no compute.
    if (model.layer(v).kind == model::OpKind::input) continue;
    const plans::LayerLayouts layouts = plans::layer_layouts(model, v, whole, one_device, global_batch, dtype);
    const LayerComputeSeconds layer = layer_compute_seconds(ideal, model, v, layouts, one_device, global_batch, dtype);
    seconds += layer.forward + layer.backward_input + layer.backward_weight;
  }
  return seconds;
}

// The slowest link the devices' traffic could cross: of the levels a group of all of them spans
// (where it holds more than one unit below), the one of least bandwidth.
void find_slowest_link(const Cluster& cluster, int devices, JobLowerBound& bound) {
  if (devices < 2) return;
  std::vector<int> ranks(static_cast<size_t>(devices));
  std::iota(ranks.begin(), ranks.end(), 0);
  const GroupShape shape = group_shape(cluster, ranks);
  for (int level = 0; level <= shape.spanned_level; ++level) {
    if (shape.fan_in[static_cast<size_t>(level)] < 2) continue;
    const Level& crossed = cluster.levels[static_cast<size_t>(level)];
    const double bandwidth = crossed.link.bandwidth_bytes_per_second;
    if (bound.link_level.empty() || bandwidth < bound.link_bytes_per_second) {
      bound.link_level = crossed.name;
      bound.link_bytes_per_second = bandwidth;
    }
  }
}

}  // namespace

JobLowerBound job_lower_bound(const model::Model& model, int64_t global_batch, model::DType dtype, int devices,
                              const Cluster& cluster) {
  JobLowerBound bound;
  // A measured kernel problem's seconds are what calibrate timed, faster than the device's stated
  // peak if that is set low, and on a node of busy neighbours the curves are raised toward the
  // speed alone (sim/neighbour_speed.h): no peak bounds them, so the term is left out.
  bound.compute_counted = cluster.device.measured_kernels.empty();
  if (bound.compute_counted && devices > 0)
    bound.compute_seconds = batch_seconds_at_peak(model, global_batch, dtype, cluster) / devices;
  find_slowest_link(cluster, devices, bound);
  // Communication: no bytes are certain to cross any link. The plan format (and the search: the
  // `model` axis may leave every layer whole) holds a plan that replicates every layer on every
  // rank, each rank computing the whole batch: its ranks hold equal gradients and send nothing
  // (tests/sim/job_lower_bound_test.cc checks it). Any term added to the compute's would bound
  // that plan too, whose compute alone is `devices` times the term above, but a sum of the form
  // compute-at-peak + bytes cannot be proven for it; and the plans that split the work overlap
  // their transfers with compute (gradient buckets, pipeline hand-overs), so even the bytes they
  // must send are not certain to add to the step. So the term is 0, and the slowest link is
  // reported for the reader.
  bound.communication_bytes = 0;
  bound.communication_seconds = 0.0;
  return bound;
}

}  // namespace splitbrain::sim
