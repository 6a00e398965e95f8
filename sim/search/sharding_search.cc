#include "sim/search/sharding_search.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/search/context_parallel_search.h"

namespace splitbrain::sim {
namespace {

using plans::LayerSharding;

// The sharding a non-deciding layer takes after a producer sharded as `producer`.
LayerSharding follower_sharding(CostTable& table, int v, const LayerSharding& producer) {
  LayerSharding inherited = plans::inherited_sharding(table.model().layer(v), producer);
  if (table.layouts(v, inherited) != nullptr) return inherited;
  LayerSharding batch_only;
  batch_only.batch = inherited.batch;
  if (table.layouts(v, batch_only) != nullptr) return batch_only;
  return LayerSharding{};
}

// One partial assignment: decisions 0..k, the last being `choice` (an index into the
// candidates of decision k), the rest reachable through `parent`.
struct Entry {
  double per_micro_batch = 0.0;
  double per_step = 0.0;
  int64_t memory_bytes = 0;
  int parent = -1;
  int choice = 0;
};

class ShardingDp {
 public:
  ShardingDp(CostTable& table, const SearchMesh& mesh, const ShardingSearchOptions& options)
      : table_(table), net_(table.model()), options_(options), micro_batches_(table.skeleton().micro_batches) {
    const int n = net_.size();
    anchor_.assign(static_cast<size_t>(n), -1);
    for (int v = 0; v < n; ++v) {
      const model::Layer& layer = net_.layer(v);
      if (plans::chooses_own_sharding(layer)) {
        anchor_[static_cast<size_t>(v)] = static_cast<int>(decisions_.size());
        decisions_.push_back(v);
        candidates_.push_back(decision_candidates(table_, v, mesh));
      } else {
        anchor_[static_cast<size_t>(v)] = anchor_[static_cast<size_t>(layer.inputs.front())];
      }
    }
    // Each layer is priced at the step that makes the last of the decisions it depends on.
    priced_at_.resize(decisions_.size());
    for (int v = 0; v < n; ++v) {
      int step = anchor_[static_cast<size_t>(v)];
      for (int u : net_.layer(v).inputs) step = std::max(step, anchor_[static_cast<size_t>(u)]);
      priced_at_[static_cast<size_t>(step)].push_back(v);
    }
    precompute_followers();
    layer_costs_.resize(static_cast<size_t>(n));
    edge_seconds_.resize(static_cast<size_t>(n));
    codes_.resize(static_cast<size_t>(n));
    for (int v = 0; v < n; ++v) {
      const size_t choices = candidates_[static_cast<size_t>(anchor_[static_cast<size_t>(v)])].size();
      for (size_t c = 0; c < choices; ++c)
        codes_[static_cast<size_t>(v)].push_back(sharding_code(sharding_of(v, static_cast<int>(c))));
    }
  }

  bool has_candidates() const {
    return std::none_of(candidates_.begin(), candidates_.end(), [](const auto& c) { return c.empty(); });
  }

  std::optional<ShardingAssignment> run() {
    if (!has_candidates()) return std::nullopt;
    std::vector<std::vector<int>> previous;  // per candidate of the previous decision: its entries
    // The entries one candidate's extensions make; only those keep_pareto keeps enter the arena,
    // which so stays small (most extensions are dominated).
    std::vector<Entry> made;
    for (size_t k = 0; k < decisions_.size(); ++k) {
      std::vector<std::vector<int>> current(candidates_[k].size());
      for (size_t c = 0; c < candidates_[k].size(); ++c) {
        made.clear();
        if (k == 0) {
          extend(-1, static_cast<int>(k), static_cast<int>(c), made);
        } else {
          for (const auto& entries : previous) {
            for (int e : entries) extend(e, static_cast<int>(k), static_cast<int>(c), made);
          }
        }
        current[c] = keep_pareto(made);
      }
      previous = std::move(current);
    }
    int best = -1;
    for (const auto& entries : previous) {
      for (int e : entries) {
        if (best < 0 || objective(arena_[static_cast<size_t>(e)]) < objective(arena_[static_cast<size_t>(best)]))
          best = e;
      }
    }
    if (best < 0) return std::nullopt;
    return assignment(best);
  }

 private:
  double objective(const Entry& e) const { return micro_batches_ * e.per_micro_batch + e.per_step; }

  uint64_t code_of(int v, int choice) const { return codes_[static_cast<size_t>(v)][static_cast<size_t>(choice)]; }

  // The sharding of layer v when its anchor decision took candidate `choice`.
  const LayerSharding& sharding_of(int v, int choice) const {
    const int k = anchor_[static_cast<size_t>(v)];
    if (decisions_[static_cast<size_t>(k)] == v)
      return candidates_[static_cast<size_t>(k)][static_cast<size_t>(choice)];
    return followers_[static_cast<size_t>(v)][static_cast<size_t>(choice)];
  }

  void precompute_followers() {
    followers_.resize(static_cast<size_t>(net_.size()));
    for (int v = 0; v < net_.size(); ++v) {
      const int k = anchor_[static_cast<size_t>(v)];
      if (decisions_[static_cast<size_t>(k)] == v) continue;
      const int producer = net_.layer(v).inputs.front();
      // The producer follows the same decision (a follower's anchor is its producer's).
      for (size_t c = 0; c < candidates_[static_cast<size_t>(k)].size(); ++c) {
        followers_[static_cast<size_t>(v)].push_back(follow(v, sharding_of(producer, static_cast<int>(c))));
      }
    }
  }

  LayerSharding follow(int v, const LayerSharding& producer) { return follower_sharding(table_, v, producer); }

  // The table's prices, looked up once per (layer, choice) and (edge, choices): the DP asks for
  // the same ones for every entry it extends, and a hash lookup each time was most of its work.
  size_t choices_of(int v) const { return candidates_[static_cast<size_t>(anchor_[static_cast<size_t>(v)])].size(); }

  const ChoiceCost& layer_cost(int v, int choice) {
    std::vector<const ChoiceCost*>& row = layer_costs_[static_cast<size_t>(v)];
    if (row.empty()) row.assign(choices_of(v), nullptr);
    const ChoiceCost*& cost = row[static_cast<size_t>(choice)];
    if (cost == nullptr) cost = &table_.layer_cost(v, sharding_of(v, choice), code_of(v, choice));
    return *cost;
  }

  double edge_seconds(int v, size_t position, int input_choice, int own_choice) {
    std::vector<std::vector<double>>& edges = edge_seconds_[static_cast<size_t>(v)];
    if (edges.empty()) edges.resize(net_.layer(v).inputs.size());
    std::vector<double>& grid = edges[position];  // input choice x own choice; NaN: not looked up yet
    const size_t own_choices = choices_of(v);
    if (grid.empty()) {
      const int u = net_.layer(v).inputs[position];
      grid.assign(choices_of(u) * own_choices, std::numeric_limits<double>::quiet_NaN());
    }
    double& seconds = grid[static_cast<size_t>(input_choice) * own_choices + static_cast<size_t>(own_choice)];
    if (std::isnan(seconds)) {
      const int u = net_.layer(v).inputs[position];
      seconds = table_.edge_seconds(v, static_cast<int>(position), sharding_of(u, input_choice),
                                    code_of(u, input_choice), sharding_of(v, own_choice), code_of(v, own_choice));
    }
    return seconds;
  }

  // The candidate decision `k` took on the path ending at entry `e` (which decided `at`).
  int choice_on_path(int e, int at, int k) const {
    while (at > k) {
      e = arena_[static_cast<size_t>(e)].parent;
      --at;
    }
    return arena_[static_cast<size_t>(e)].choice;
  }

  void extend(int parent, int k, int choice, std::vector<Entry>& made) {
    Entry entry;
    if (parent >= 0) entry = arena_[static_cast<size_t>(parent)];
    entry.parent = parent;
    entry.choice = choice;
    auto choice_of = [&](int decision) { return decision == k ? choice : choice_on_path(parent, k - 1, decision); };
    for (int v : priced_at_[static_cast<size_t>(k)]) {
      const int own_choice = choice_of(anchor_[static_cast<size_t>(v)]);
      const ChoiceCost& cost = layer_cost(v, own_choice);
      entry.per_micro_batch += cost.seconds_per_micro_batch;
      entry.per_step += cost.seconds_per_step;
      entry.memory_bytes += cost.memory_bytes;
      const auto& inputs = net_.layer(v).inputs;
      for (size_t position = 0; position < inputs.size(); ++position) {
        const int u = inputs[position];
        entry.per_micro_batch += edge_seconds(v, position, choice_of(anchor_[static_cast<size_t>(u)]), own_choice);
      }
    }
    if (entry.memory_bytes > options_.memory_limit_bytes) return;
    made.push_back(entry);
  }

  // The non-dominated entries of `made` in (objective, memory), at most pareto_limit of them (the
  // fastest ones and the one with the least memory), moved into the arena: their arena indices.
  std::vector<int> keep_pareto(const std::vector<Entry>& made) {
    std::vector<int> order(made.size());
    for (size_t i = 0; i < made.size(); ++i) order[i] = static_cast<int>(i);
    std::sort(order.begin(), order.end(), [&](int a, int b) {
      const Entry& x = made[static_cast<size_t>(a)];
      const Entry& y = made[static_cast<size_t>(b)];
      return objective(x) != objective(y) ? objective(x) < objective(y) : x.memory_bytes < y.memory_bytes;
    });
    std::vector<int> front;
    for (int e : order) {
      if (front.empty() ||
          made[static_cast<size_t>(e)].memory_bytes < made[static_cast<size_t>(front.back())].memory_bytes) {
        front.push_back(e);
      }
    }
    const auto limit = static_cast<size_t>(std::max(options_.pareto_limit, 2));
    if (front.size() > limit) {
      const int least_memory = front.back();
      front.resize(limit - 1);
      front.push_back(least_memory);
    }
    for (int& e : front) {
      arena_.push_back(made[static_cast<size_t>(e)]);
      e = static_cast<int>(arena_.size()) - 1;
    }
    return front;
  }

  ShardingAssignment assignment(int e) const {
    ShardingAssignment result;
    result.seconds = objective(arena_[static_cast<size_t>(e)]);
    result.memory_bytes = arena_[static_cast<size_t>(e)].memory_bytes;
    std::vector<int> choices(decisions_.size());
    for (int k = static_cast<int>(decisions_.size()) - 1; k >= 0; --k) {
      choices[static_cast<size_t>(k)] = arena_[static_cast<size_t>(e)].choice;
      e = arena_[static_cast<size_t>(e)].parent;
    }
    for (int v = 0; v < net_.size(); ++v) {
      result.layers.push_back(sharding_of(v, choices[static_cast<size_t>(anchor_[static_cast<size_t>(v)])]));
    }
    return result;
  }

  CostTable& table_;
  const model::Model& net_;
  ShardingSearchOptions options_;
  double micro_batches_;
  std::vector<int> decisions_;                          // layer index of each decision
  std::vector<std::vector<LayerSharding>> candidates_;  // per decision
  std::vector<int> anchor_;                             // per layer: the decision it follows
  std::vector<std::vector<int>> priced_at_;             // per decision: layers priced then
  std::vector<std::vector<LayerSharding>> followers_;   // per follower, per anchor candidate
  std::vector<std::vector<uint64_t>> codes_;            // per layer, per anchor candidate
  std::vector<Entry> arena_;
  std::vector<std::vector<const ChoiceCost*>> layer_costs_;     // per layer, per anchor candidate
  std::vector<std::vector<std::vector<double>>> edge_seconds_;  // per layer, per input, per choice pair
};

LayerSharding with_role(LayerSharding sharding, plans::ShardRole role, int axis) {
  if (axis >= 0) sharding.axes(role).push_back(axis);
  return sharding;
}

}  // namespace

std::vector<LayerSharding> decision_candidates(CostTable& table, int layer, const SearchMesh& mesh) {
  using plans::ShardRole;
  const bool is_input = table.model().layer(layer).kind == model::OpKind::input;
  std::vector<std::optional<ShardRole>> space_roles = {std::nullopt};
  // A token model's space axis is context parallelism: it splits the sequence. Splitting the
  // batch over it is a larger data axis (another mesh), and replicating over it repeats the work.
  const bool context_parallel = mesh.space >= 0 && searches_context_parallelism(table.model());
  if (mesh.space >= 0) space_roles = {ShardRole::spatial, ShardRole::batch, std::nullopt};
  if (context_parallel) space_roles = {ShardRole::spatial};
  std::vector<std::optional<ShardRole>> model_roles = {std::nullopt};
  if (mesh.model >= 0) {
    model_roles =
        is_input ? std::vector<std::optional<ShardRole>>{ShardRole::batch, std::nullopt}
                 : std::vector<std::optional<ShardRole>>{ShardRole::batch, ShardRole::out, ShardRole::in, std::nullopt};
  }
  std::vector<LayerSharding> result;
  const auto add_candidates = [&](const std::vector<std::optional<ShardRole>>& roles) {
    for (const auto& space_role : roles) {
      for (const auto& model_role : model_roles) {
        // Batch axes in mesh order (data, space, model), so the batch blocks follow rank order.
        LayerSharding sharding = with_role({}, ShardRole::batch, mesh.data);
        if (space_role) sharding = with_role(sharding, *space_role, mesh.space);
        if (model_role) sharding = with_role(sharding, *model_role, mesh.model);
        if (table.layouts(layer, sharding) != nullptr) result.push_back(sharding);
      }
    }
  };
  add_candidates(space_roles);
  // A layer that cannot split its sequence takes the other space roles.
  if (context_parallel && result.empty()) add_candidates({ShardRole::batch, std::nullopt});
  return result;
}

void fill_followers(CostTable& table, std::vector<LayerSharding>& layers) {
  const model::Model& net = table.model();
  for (int v = 0; v < net.size(); ++v) {
    const model::Layer& layer = net.layer(v);
    if (plans::chooses_own_sharding(layer)) continue;
    layers[static_cast<size_t>(v)] = follower_sharding(table, v, layers[static_cast<size_t>(layer.inputs.front())]);
  }
}

std::optional<ShardingAssignment> search_shardings(CostTable& table, const SearchMesh& mesh,
                                                   const ShardingSearchOptions& options) {
  ShardingDp dp(table, mesh, options);
  return dp.run();
}

double assignment_seconds(CostTable& table, const std::vector<LayerSharding>& layers) {
  const model::Model& net = table.model();
  double per_micro_batch = 0.0;
  double per_step = 0.0;
  for (int v = 0; v < net.size(); ++v) {
    const LayerSharding& own = layers[static_cast<size_t>(v)];
    const ChoiceCost& cost = table.layer_cost(v, own);
    per_micro_batch += cost.seconds_per_micro_batch;
    per_step += cost.seconds_per_step;
    const auto& inputs = net.layer(v).inputs;
    for (size_t p = 0; p < inputs.size(); ++p) {
      per_micro_batch += table.edge_seconds(v, static_cast<int>(p), layers[static_cast<size_t>(inputs[p])], own);
    }
  }
  return table.skeleton().micro_batches * per_micro_batch + per_step;
}

}  // namespace splitbrain::sim
