#include "plans/plan_builder.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include "model/model_json.h"

namespace splitbrain::plans {

Plan build_plan(std::shared_ptr<const model::Model> model, std::string model_spec, Mesh mesh, int64_t global_batch,
                const ShardingRule& rule) {
  Plan plan;
  plan.model_spec = std::move(model_spec);
  plan.model = std::move(model);
  plan.global_batch = global_batch;
  plan.mesh = std::move(mesh);
  for (const model::Layer& layer : plan.model->layers()) plan.layers.push_back(rule(layer));
  plan.stage_of_layer.assign(plan.layers.size(), 0);
  return plan;
}

Plan build_plan(const std::string& model_spec, Mesh mesh, int64_t global_batch, const ShardingRule& rule) {
  return build_plan(std::make_shared<model::Model>(model::resolve_model(model_spec)), model_spec, std::move(mesh),
                    global_batch, rule);
}

namespace {

// Chunk starts by depth-first search, each chunk's end tried nearest its even share first.
class ChunkCuts {
 public:
  ChunkCuts(const model::Model& model, int chunks) : n_(model.size()), chunks_(chunks) {
    for (int v = 0; v < n_; ++v) {
      int lowest = v;
      for (int u : model.layer(v).inputs) lowest = std::min(lowest, u);
      lowest_input_.push_back(lowest);
      computes_.push_back(model.layer(v).kind != model::OpKind::input);
    }
  }

  std::optional<std::vector<int>> find() {
    starts_ = {0};
    if (chunks_ < 1 || n_ < chunks_ || !extend(0)) return std::nullopt;
    std::vector<int> chunk_of(static_cast<size_t>(n_), 0);
    for (int k = 0; k < chunks_; ++k) {
      const int end = k + 1 < chunks_ ? starts_[static_cast<size_t>(k) + 1] : n_;
      for (int v = starts_[static_cast<size_t>(k)]; v < end; ++v) chunk_of[static_cast<size_t>(v)] = k;
    }
    return chunk_of;
  }

 private:
  // Layers [begin, end) may form chunk k: each reads only layers from the previous chunk's start,
  // and at least one of them computes (a chunk of input layers alone would run no pass).
  bool fits(int k, int begin, int end) const {
    const int floor = k == 0 ? 0 : starts_[static_cast<size_t>(k) - 1];
    bool computes = false;
    for (int v = begin; v < end; ++v) {
      if (lowest_input_[static_cast<size_t>(v)] < floor) return false;
      computes = computes || computes_[static_cast<size_t>(v)];
    }
    return computes;
  }

  // Chunk k starts at starts_.back(): find its end and the rest.
  bool extend(int k) {
    const int begin = starts_.back();
    if (k == chunks_ - 1) return fits(k, begin, n_);
    const int previous = k == 0 ? 0 : starts_[static_cast<size_t>(k) - 1];
    if (failed_.contains({k, previous, begin})) return false;
    const int target = static_cast<int>(static_cast<int64_t>(k + 1) * n_ / chunks_);
    std::vector<int> ends;
    for (int end = begin + 1; end <= n_ - (chunks_ - k - 1); ++end) ends.push_back(end);
    std::stable_sort(ends.begin(), ends.end(),
                     [&](int a, int b) { return std::abs(a - target) < std::abs(b - target); });
    for (int end : ends) {
      if (!fits(k, begin, end)) continue;
      starts_.push_back(end);
      if (extend(k + 1)) return true;
      starts_.pop_back();
    }
    failed_.insert({k, previous, begin});
    return false;
  }

  int n_;
  int chunks_;
  std::vector<int> lowest_input_;
  std::vector<bool> computes_;
  std::vector<int> starts_;
  std::set<std::tuple<int, int, int>> failed_;
};

}  // namespace

std::optional<std::vector<int>> even_chunks(const model::Model& model, int chunks) {
  return ChunkCuts(model, chunks).find();
}

}  // namespace splitbrain::plans
