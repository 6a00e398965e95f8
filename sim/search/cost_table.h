#pragma once
// The planner's costs of single layers and single edges under candidate shardings: the additive
// pieces of a step as simulate() prices it when gradient synchronisation is not overlapped and
// every layer has its own bucket. Searching many plans touches the same (layer, sharding) pairs
// again and again, and deep models repeat identical blocks, so every price is memoised by the
// layer's class of alike layers (model/alike_layers.h: they cost the same) and a
// compact code of the sharding.

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "plans/op_sharding.h"
#include "plans/plan.h"
#include "sim/cluster.h"

namespace splitbrain::sim {

struct ChoiceCost {
  double seconds_per_micro_batch = 0.0;  // compute and blocking communication of one micro-batch
  double seconds_per_step = 0.0;         // gradient synchronisation and the optimizer update
  int64_t fixed_bytes = 0;               // parameters, gradients, optimizer state
  int64_t activation_bytes = 0;          // kept activations of one micro-batch
  int64_t memory_bytes = 0;              // fixed + activations of every micro-batch in flight
};

// Memo keys: equality is exact, the hash only spreads them.
struct LayerChoiceKey {
  int shape_class = 0;
  uint64_t sharding = 0;
  friend bool operator==(const LayerChoiceKey&, const LayerChoiceKey&) = default;
};
struct EdgeChoiceKey {
  LayerChoiceKey producer;
  LayerChoiceKey consumer;
  int position = 0;
  friend bool operator==(const EdgeChoiceKey&, const EdgeChoiceKey&) = default;
};
struct ChoiceKeyHash {
  size_t operator()(const LayerChoiceKey& k) const;
  size_t operator()(const EdgeChoiceKey& k) const;
};

class CostTable {
 public:
  // `skeleton` gives model, mesh, dtype, batch, micro-batches, optimizer and ZeRO stage; its
  // layer shardings are ignored. `micro_batches_in_flight` scales the kept activations.
  CostTable(const plans::Plan& skeleton, const Cluster& cluster, int micro_batches_in_flight);

  // The layer's layouts under `sharding`, or nullptr when the sharding does not fit the layer.
  const plans::LayerLayouts* layouts(int layer, const plans::LayerSharding& sharding);
  // Compute, internal communication, gradient synchronisation and optimizer of one layer.
  // Requires a sharding for which layouts() is not null.
  const ChoiceCost& layer_cost(int layer, const plans::LayerSharding& sharding);
  // Forward and backward communication of one edge: input `position` of `consumer`.
  double edge_seconds(int consumer, int position, const plans::LayerSharding& producer_sharding,
                      const plans::LayerSharding& consumer_sharding);

  // The same with the shardings' codes (sharding_code) computed once by the caller: the search
  // looks prices up millions of times.
  const ChoiceCost& layer_cost(int layer, const plans::LayerSharding& sharding, uint64_t code);
  double edge_seconds(int consumer, int position, const plans::LayerSharding& producer_sharding, uint64_t producer_code,
                      const plans::LayerSharding& consumer_sharding, uint64_t consumer_code);

  const plans::Plan& skeleton() const { return skeleton_; }
  const model::Model& model() const { return *skeleton_.model; }
  // How many distinct prices were computed (the rest were memo hits).
  int64_t evaluations() const { return evaluations_; }

 private:
  LayerChoiceKey layer_key(int layer, const plans::LayerSharding& sharding) const;

  plans::Plan skeleton_;
  const Cluster& cluster_;
  int in_flight_;
  // Per layer (model::Model::alike_classes). Alike layers may differ in which of their producers'
  // outputs backward keeps; that moves memory only, which the planner re-checks on the exact plan.
  std::vector<int> shape_class_;
  std::unordered_map<LayerChoiceKey, std::optional<plans::LayerLayouts>, ChoiceKeyHash> layouts_;
  std::unordered_map<LayerChoiceKey, ChoiceCost, ChoiceKeyHash> layer_costs_;
  std::unordered_map<EdgeChoiceKey, double, ChoiceKeyHash> edge_costs_;
  int64_t evaluations_ = 0;
};

// A 64-bit code of a sharding: each role's axis list (up to 4 axes of index < 8).
uint64_t sharding_code(const plans::LayerSharding& sharding);

}  // namespace splitbrain::sim
