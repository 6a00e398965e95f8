#pragma once
// A lower bound on the step time of every plan of a training job (a model, a batch, a dtype, a
// number of devices on a cluster), whatever its mesh, shardings, pipeline, micro-batches, ZeRO
// stage or recompute mode: what `splitbrain plan` prints under every ranking, so a reader sees
// how far the best plan is from anything the simulator could ever predict.
//
// It is the job's compute at the devices' peak rate, every device busy and nothing recomputed,
// plus the communication every plan must make over the slowest link the devices span. Each term
// is proven against sim::simulate in job_lower_bound.cc; a term that cannot be proven is left at
// 0 there, with the reason. Unlike sim/step_time_bound.h (one plan's bound, for pruning), it reads
// no plan.

#include <cstdint>
#include <string>

#include "model/dtype.h"
#include "model/model.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

struct JobLowerBound {
  // What the simulator charges at the FLOP rate for the whole batch (forward, input and weight
  // gradients, once each), at the device's peak for the dtype, spread evenly over the devices.
  double compute_seconds = 0.0;
  // False where the cluster prices kernels by measured seconds (`calibrate --model`), which no
  // peak rate bounds: compute_seconds is 0 there.
  bool compute_counted = true;
  // The bytes every plan must move across the slowest link, per device, and their time there.
  int64_t communication_bytes = 0;
  double communication_seconds = 0.0;
  // The slowest link the devices span: its level's name and bandwidth ("" and 0 on one device).
  std::string link_level;
  double link_bytes_per_second = 0.0;

  double seconds() const { return compute_seconds + communication_seconds; }
};

JobLowerBound job_lower_bound(const model::Model& model, int64_t global_batch, model::DType dtype, int devices,
                              const Cluster& cluster);

}  // namespace splitbrain::sim
