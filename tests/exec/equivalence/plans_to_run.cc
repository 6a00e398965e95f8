#include "tests/exec/equivalence/plans_to_run.h"

#include <algorithm>
#include <optional>
#include <string>

#include "plans/compiled_plan.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"
#include "plans/sequence_parallel.h"
#include "tests/plans/interleaved_variant.h"

namespace splitbrain::equivalence {
namespace {

// A two-stage pipeline cut again at the first reader of a tensor that several layers read, so
// all of them sit on the second stage: the tensor crosses once each way and its readers share
// it (plans/compiled_plan.h). None for models without such a tensor.
std::optional<plans::Plan> shared_reader_variant(const std::vector<plans::Plan>& plans) {
  for (const plans::Plan& plan : plans) {
    if (plan.stage_count() != 2 || plan.zero_stage != 0 || plan.recompute_activations) continue;
    const model::Model& net = *plan.model;
    for (int u = 1; u < net.size(); ++u) {
      const std::vector<int>& readers = net.layer(u).consumers;
      if (readers.size() < 2) continue;
      const int first = *std::min_element(readers.begin(), readers.end());
      plans::Plan variant = plan;
      for (int v = 0; v < net.size(); ++v) variant.stage_of_layer[static_cast<size_t>(v)] = v < first ? 0 : 1;
      variant.family += " + shared reader cut";
      return variant;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// Megatron's sequence parallelism (plans/sequence_parallel.h) on the first plan with tensor
// parallelism and neither ZeRO nor recomputation. None for plans without tensor parallelism.
std::optional<plans::Plan> sequence_parallel_variant(const std::vector<plans::Plan>& plans) {
  for (const plans::Plan& plan : plans) {
    if (plan.zero_stage != 0 || plan.recompute_activations || plan.recompute_attention) continue;
    if (std::optional<plans::Plan> variant = plans::with_sequence_parallelism(plan)) return variant;
  }
  return std::nullopt;
}

// Context parallelism on the data-parallel plan: every layer's sequence (attention's queries
// included) split over a `context` axis of 2, the batch over `data` on the other ranks, for models
// with attention. None for an odd world, or a model some layer of which cannot split positions.
std::optional<plans::Plan> context_parallel_variant(const std::vector<plans::Plan>& plans) {
  for (const plans::Plan& plan : plans) {
    if (!plan.family.starts_with("data-parallel") || plan.pipe_axis >= 0) continue;
    const int ranks = plan.mesh.rank_count();
    const auto& layers = plan.model->layers();
    if (ranks % 2 != 0 || std::none_of(layers.begin(), layers.end(),
                                       [](const model::Layer& l) { return l.kind == model::OpKind::self_attention; })) {
      return std::nullopt;
    }
    plans::Plan variant = plan;
    variant.mesh = plans::Mesh({{"data", ranks / 2}, {"context", 2}});
    for (size_t v = 0; v < layers.size(); ++v) {
      plans::LayerSharding sharding;
      sharding.batch = {0};
      if (plans::role_allowed(layers[v], plans::ShardRole::spatial)) sharding.spatial = {1};
      variant.layers[v] = sharding;
    }
    variant.family = "context-parallel 2";
    try {
      plans::compile_plan(variant);
    } catch (const plans::PlanError&) {
      return std::nullopt;
    }
    return variant;
  }
  return std::nullopt;
}

// Context parallelism beside tensor parallelism: the first plan that splits some layer's `out`
// over one axis and the batch over another, with the sequence split over that other axis in
// place of the batch wherever the layer can split positions (attention then splits its heads and
// its queries at once). None where no plan has that shape.
std::optional<plans::Plan> context_tensor_variant(const std::vector<plans::Plan>& plans) {
  for (const plans::Plan& plan : plans) {
    if (plan.pipe_axis >= 0 || plan.mesh.axis_count() != 2) continue;
    const auto& layers = plan.model->layers();
    const bool attention = std::any_of(layers.begin(), layers.end(),
                                       [](const model::Layer& l) { return l.kind == model::OpKind::self_attention; });
    const bool tensor = std::any_of(plan.layers.begin(), plan.layers.end(),
                                    [](const plans::LayerSharding& s) { return !s.out.empty(); });
    if (!attention || !tensor) continue;
    plans::Plan variant = plan;
    for (size_t v = 0; v < layers.size(); ++v) {
      plans::LayerSharding& sharding = variant.layers[v];
      if (sharding.batch.size() != 1 || !plans::role_allowed(layers[v], plans::ShardRole::spatial)) continue;
      sharding.spatial = sharding.batch;
      sharding.batch.clear();
    }
    variant.family = "context x tensor parallel, from " + plan.family;
    try {
      plans::compile_plan(variant);
    } catch (const plans::PlanError&) {
      continue;
    }
    return variant;
  }
  return std::nullopt;
}

// The planner emits each plan with the fastest of its ZeRO and recompute variants that fits; the
// variants below start from the plan as it was searched: ZeRO 0, every activation kept, its label
// without the variant's suffixes.
plans::Plan plain_form(plans::Plan plan) {
  plan.zero_stage = 0;
  plan.recompute_activations = false;
  plan.recompute_blocks = 0;
  plan.recompute_attention = false;
  for (const std::string suffix : {" +zero1", " +zero2", " +zero3", " +selective-recompute", " +recompute"}) {
    for (size_t at = plan.family.find(suffix); at != std::string::npos; at = plan.family.find(suffix)) {
      plan.family.erase(at, suffix.size());
    }
  }
  return plan;
}

}  // namespace

// What the executor is checked on beyond the planner's choices: ZeRO 1-3 of every plan whose
// gradients sync over a group (something to shard), recompute of every plan, and on the
// data-parallel plan both at once and ZeRO with the buckets reduced after backward instead of
// during it (the planner's plans overlap). Named like the planner names such variants.
std::vector<plans::Plan> plans_to_run(const std::vector<sim::PricedPlan>& planned) {
  std::vector<plans::Plan> out;
  std::vector<plans::Plan> bases;  // each planned plan with ZeRO 0 and every activation kept
  for (const sim::PricedPlan& p : planned) {
    out.push_back(p.plan);
    if (p.plan.zero_stage == 0 && !p.plan.recompute_activations && !p.plan.recompute_attention) {
      bases.push_back(p.plan);
    } else {
      bases.push_back(plain_form(p.plan));
      out.push_back(bases.back());
    }
  }
  for (const plans::Plan& plan : bases) {
    const bool syncs = !plans::compile_plan(plan).buckets.empty();
    for (int zero = 1; zero <= 3 && syncs; ++zero) {
      plans::Plan variant = plan;
      variant.zero_stage = zero;
      variant.family += " +zero" + std::to_string(zero);
      out.push_back(variant);
    }
    plans::Plan recompute = plan;
    recompute.recompute_activations = true;
    recompute.family += " +recompute";
    out.push_back(recompute);
    const auto& layers = plan.model->layers();
    if (std::any_of(layers.begin(), layers.end(),
                    [](const model::Layer& l) { return l.kind == model::OpKind::self_attention; })) {
      plans::Plan selective = plan;
      selective.recompute_attention = true;
      selective.family += " +selective recompute";
      out.push_back(selective);
      // Recomputation of the first blocks only (Megatron's block method): the embeddings and the
      // first layer's attention half rerun, the rest keep their activations.
      plans::Plan first_blocks = plan;
      first_blocks.recompute_activations = true;
      first_blocks.recompute_blocks = 4;
      first_blocks.family += " +recompute 4 blocks";
      out.push_back(first_blocks);
    }
    if (plan.family.starts_with("data-parallel") && plan.pipe_axis < 0 &&
        plan.global_batch % (2 * plan.mesh.rank_count()) == 0) {
      // Gradient accumulation without a pipeline: two micro-batches per step.
      plans::Plan accumulate = plan;
      accumulate.micro_batches = 2;
      accumulate.family += " +accumulate 2";
      out.push_back(accumulate);
    }
    if (syncs && plan.family.starts_with("data-parallel")) {
      recompute.zero_stage = 3;
      recompute.family = plan.family + " +zero3 +recompute";
      out.push_back(recompute);
      for (int zero = 1; zero <= 3; ++zero) {
        plans::Plan serial = plan;
        serial.zero_stage = zero;
        serial.overlap_gradient_sync = false;
        serial.family += " +zero" + std::to_string(zero) + " +sync-after-backward";
        out.push_back(serial);
      }
    }
  }
  if (std::optional<plans::Plan> shared = shared_reader_variant(out)) out.push_back(*shared);
  if (std::optional<plans::Plan> sequence = sequence_parallel_variant(out)) out.push_back(*sequence);
  if (std::optional<plans::Plan> context = context_parallel_variant(bases)) {
    out.push_back(*context);
    plans::Plan recompute = *context;
    recompute.recompute_activations = true;
    recompute.family += " +recompute";
    out.push_back(recompute);
  }
  if (std::optional<plans::Plan> context = context_tensor_variant(bases)) out.push_back(*context);
  // Interleaved 1F1B: each 1F1B pipeline re-cut into two
  // chunks per stage, alone, with recompute and with ZeRO 3 where gradients sync over a group.
  for (const plans::Plan& plan : bases) {
    if (plan.schedule == plans::PipelineSchedule::interleaved_one_f_one_b) continue;
    const std::optional<plans::Plan> interleaved = plans::testing::interleaved_variant(plan, 2);
    if (!interleaved) continue;
    out.push_back(*interleaved);
    plans::Plan recompute = *interleaved;
    recompute.recompute_activations = true;
    recompute.family += " +recompute";
    out.push_back(recompute);
    if (!plans::compile_plan(*interleaved).buckets.empty()) {
      plans::Plan zero = *interleaved;
      zero.zero_stage = 3;
      zero.family += " +zero3";
      out.push_back(zero);
    }
  }
  return out;
}

}  // namespace splitbrain::equivalence
