#pragma once
// The prediction as JSON: the contract `splitbrain compare` and users read. Top-level keys:
//   iteration_seconds, samples_per_second,
//   phases {compute_forward, compute_backward, comm_exposed, bubble, optimizer},
//   ranks [{rank, stage, peak_memory_bytes, memory {params, grads, optimizer, activations,
//           buffers}, comm_bytes_sent, comm_bytes_sent_per_level {level name: bytes},
//           node (the index of the innermost cluster unit, level 0, its device sits in)}],
//   collectives [{layer, stage, phase, kind, axes, bytes, bytes_sent_per_rank, count, seconds,
//                 level (the outermost cluster level its group crosses, null for one rank)}],
// plus the plan's identity (model, batch, dtype, mesh, cluster, cluster_levels: the level names,
// innermost first) and per-layer and per-stage times.

#include <nlohmann/json.hpp>

#include "plans/plan.h"
#include "sim/cluster.h"
#include "sim/simulation.h"

namespace splitbrain::sim {

constexpr std::string_view kPredictionFormatName = "splitbrain-prediction";
constexpr int kPredictionFormatVersion = 1;

nlohmann::ordered_json prediction_to_json(const plans::Plan& plan, const Cluster& cluster,
                                          const Prediction& prediction);

}  // namespace splitbrain::sim
