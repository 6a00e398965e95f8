#include "sim/search/plan_difference.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <optional>

#include "model/errors.h"
#include "plans/compiled_plan.h"
#include "plans/plan_error.h"
#include "plans/plan_validation.h"
#include "plans/tied_weights.h"
#include "sim/simulation.h"
#include "sim/steady_pipeline.h"

namespace splitbrain::sim {
namespace {

// One choice a plan makes: the fields it sets, how it reads, whether two plans make it alike.
struct Choice {
  std::string_view name;
  std::function<void(plans::Plan& to, const plans::Plan& from)> take;
  std::function<std::string(const plans::Plan&)> describe;
  std::function<bool(const plans::Plan&, const plans::Plan&)> same;
};

// The user's mesh; the pick's with how many layers it splits otherwise where the mesh is the same.
std::string mesh_and_layers(const plans::Plan& plan, const plans::Plan* user) {
  std::string text = plan.mesh.to_string();
  if (user == nullptr || !(plan.mesh == user->mesh)) return text;
  int differ = 0;
  for (size_t v = 0; v < plan.layers.size() && v < user->layers.size(); ++v) {
    if (plan.layers[v] != user->layers[v]) ++differ;
  }
  if (differ > 0) text += fmt::format(", {} of {} layers split otherwise", differ, plan.layers.size());
  return text;
}

std::string stages_text(const plans::Plan& plan) {
  if (plan.chunk_count() <= 1) return "one stage";
  std::vector<int> layers_per_chunk(static_cast<size_t>(plan.chunk_count()), 0);
  for (int chunk : plan.stage_of_layer) {
    if (chunk >= 0 && chunk < plan.chunk_count()) ++layers_per_chunk[static_cast<size_t>(chunk)];
  }
  return fmt::format("{} {}: {} layers", plan.chunk_count(), plan.virtual_stages > 1 ? "chunks" : "stages",
                     fmt::join(layers_per_chunk, "+"));
}

std::string schedule_text(const plans::Plan& plan) {
  std::string text(plans::schedule_name(plan.schedule));
  if (plan.virtual_stages > 1) text += fmt::format(", {} chunks per stage", plan.virtual_stages);
  return text;
}

std::string recompute_text(const plans::Plan& plan) {
  std::string text = "off";
  if (plan.recompute_activations) {
    text = plan.recompute_blocks > 0 ? fmt::format("full, first {} blocks", plan.recompute_blocks) : "full";
  }
  if (plan.recompute_attention) text = plan.recompute_activations ? text + " + selective" : "selective";
  return text;
}

std::string gradients_text(const plans::Plan& plan) {
  const model::DType type = plan.gradient_dtype.value_or(plan.dtype);
  return fmt::format("{}, {}, {:g} MB buckets", model::dtype_name(type),
                     plan.overlap_gradient_sync ? "overlapped" : "after backward",
                     static_cast<double>(plan.gradient_bucket_bytes) / 1e6);
}

std::string optimizer_text(const plans::Plan& plan) {
  const plans::OptimizerConfig& o = plan.optimizer;
  return fmt::format("{}, rate {:g}", plans::optimizer_kind_name(o.kind), o.learning_rate);
}

// The plan's choices in walk order. The mesh goes with the layer shardings (they name its axes)
// and the pipeline axis; the stages' count follows from the mesh, their cut is a choice of its own.
std::vector<Choice> choices(const plans::Plan& user) {
  return {
      {"mesh and layer shardings",
       [](plans::Plan& to, const plans::Plan& from) {
         to.mesh = from.mesh;
         to.layers = from.layers;
         to.pipe_axis = from.pipe_axis;
       },
       [&](const plans::Plan& p) { return mesh_and_layers(p, &p == &user ? nullptr : &user); },
       [](const plans::Plan& a, const plans::Plan& b) {
         return a.mesh == b.mesh && a.layers == b.layers && a.pipe_axis == b.pipe_axis;
       }},
      {"pipeline stages", [](plans::Plan& to, const plans::Plan& from) { to.stage_of_layer = from.stage_of_layer; },
       stages_text, [](const plans::Plan& a, const plans::Plan& b) { return a.stage_of_layer == b.stage_of_layer; }},
      {"schedule",
       [](plans::Plan& to, const plans::Plan& from) {
         to.schedule = from.schedule;
         to.virtual_stages = from.virtual_stages;
       },
       schedule_text,
       [](const plans::Plan& a, const plans::Plan& b) {
         return a.schedule == b.schedule && a.virtual_stages == b.virtual_stages;
       }},
      {"micro-batches", [](plans::Plan& to, const plans::Plan& from) { to.micro_batches = from.micro_batches; },
       [](const plans::Plan& p) { return fmt::format("{} x {} samples", p.micro_batches, p.micro_batch_size()); },
       [](const plans::Plan& a, const plans::Plan& b) { return a.micro_batches == b.micro_batches; }},
      {"sequence parallelism (inputs re-gathered)",
       [](plans::Plan& to, const plans::Plan& from) { to.regather_saved_inputs = from.regather_saved_inputs; },
       [](const plans::Plan& p) { return std::string(p.regather_saved_inputs ? "on" : "off"); },
       [](const plans::Plan& a, const plans::Plan& b) { return a.regather_saved_inputs == b.regather_saved_inputs; }},
      {"recompute",
       [](plans::Plan& to, const plans::Plan& from) {
         to.recompute_activations = from.recompute_activations;
         to.recompute_blocks = from.recompute_blocks;
         to.recompute_attention = from.recompute_attention;
       },
       recompute_text,
       [](const plans::Plan& a, const plans::Plan& b) {
         return a.recompute_activations == b.recompute_activations && a.recompute_blocks == b.recompute_blocks &&
                a.recompute_attention == b.recompute_attention;
       }},
      {"ZeRO stage", [](plans::Plan& to, const plans::Plan& from) { to.zero_stage = from.zero_stage; },
       [](const plans::Plan& p) { return std::to_string(p.zero_stage); },
       [](const plans::Plan& a, const plans::Plan& b) { return a.zero_stage == b.zero_stage; }},
      {"gradients",
       [](plans::Plan& to, const plans::Plan& from) {
         to.gradient_dtype = from.gradient_dtype;
         to.overlap_gradient_sync = from.overlap_gradient_sync;
         to.gradient_bucket_bytes = from.gradient_bucket_bytes;
       },
       gradients_text,
       [](const plans::Plan& a, const plans::Plan& b) {
         return a.gradient_dtype.value_or(a.dtype) == b.gradient_dtype.value_or(b.dtype) &&
                a.overlap_gradient_sync == b.overlap_gradient_sync &&
                a.gradient_bucket_bytes == b.gradient_bucket_bytes;
       }},
      {"optimizer", [](plans::Plan& to, const plans::Plan& from) { to.optimizer = from.optimizer; }, optimizer_text,
       [](const plans::Plan& a, const plans::Plan& b) { return a.optimizer == b.optimizer; }},
  };
}

// Why no step can run `plan` ("" when one can).
std::string problem_of(const plans::Plan& plan) {
  try {
    plans::validate_plan(plan, "the plan on the way");
  } catch (const InputError& e) {
    return e.what();
  }
  return plans::tied_weight_problem(plan);
}

PlanFigures figures_of(const PlannerRequest& request, const Prediction& prediction) {
  PlanFigures figures;
  figures.seconds = prediction.iteration_seconds;
  figures.peak_bytes = peak_memory_bytes(prediction);
  for (const RankPrediction& rank : prediction.ranks)
    figures.sent_bytes = std::max(figures.sent_bytes, rank.comm_bytes_sent);
  figures.feasible = figures.peak_bytes <= request.effective_memory_limit();
  return figures;
}

void require_same_job(const PlannerRequest& request, const plans::Plan& plan, std::string_view which) {
  const auto refuse = [&](std::string_view field, const std::string& problem) {
    throw plans::PlanError(fmt::format("against: {} plan: {}: {}", which, field, problem));
  };
  if (plan.model == nullptr || plan.model->size() != request.model->size()) refuse("model", "another model");
  if (plan.global_batch != request.global_batch)
    refuse("batch", fmt::format("{}, not {}", plan.global_batch, request.global_batch));
  if (plan.dtype != request.dtype) refuse("dtype", std::string(model::dtype_name(plan.dtype)));
  if (plan.mesh.rank_count() != request.devices)
    refuse("mesh", fmt::format("{} ranks, not {}", plan.mesh.rank_count(), request.devices));
  if (std::string problem = problem_of(plan); !problem.empty()) refuse("plan", problem);
}

}  // namespace

PlanFigures price_figures(const PlannerRequest& request, const plans::Plan& plan) {
  // As the planner predicts the plans it keeps: a long pipeline grown from its steady-state cut,
  // whose figures equal the full simulation's and fit in memory on the largest jobs.
  return figures_of(request, steady_pipeline_prediction(plan, plans::compile_plan(plan), request.cluster));
}

PlanDifference plan_difference(const PlannerRequest& request, const plans::Plan& user, const plans::Plan& pick) {
  require_same_job(request, user, "the user's");
  require_same_job(request, pick, "the pick's");
  PlanDifference result;
  result.user = price_figures(request, user);
  result.plans_priced = 1;

  const std::vector<Choice> all = choices(user);
  std::vector<const Choice*> differing;
  for (const Choice& c : all) {
    if (!c.same(user, pick)) differing.push_back(&c);
  }

  plans::Plan current = user;
  PlanFigures current_figures = result.user;
  ChoiceStep step;  // the step being gathered: its choices so far
  for (size_t i = 0; i < differing.size(); ++i) {
    const Choice& choice = *differing[i];
    plans::Plan next = current;
    choice.take(next, pick);
    step.choices.emplace_back(choice.name);
    step.user_values.push_back(choice.describe(user));
    step.pick_values.push_back(choice.describe(pick));
    const bool last = i + 1 == differing.size();
    // The last step ends at the pick itself, labels and all (nothing that is priced is left).
    if (last) next = pick;
    if (!last) {
      if (std::string problem = problem_of(next); !problem.empty()) {
        step.merge_reasons.push_back(std::move(problem));
        current = std::move(next);  // the next choice is taken on top of this one
        continue;
      }
    }
    step.before = current_figures;
    step.after = price_figures(request, next);
    ++result.plans_priced;
    step.plan_after = next;
    current_figures = step.after;
    current = std::move(next);
    result.steps.push_back(std::move(step));
    step = ChoiceStep{};
  }
  result.pick = current_figures;
  return result;
}

}  // namespace splitbrain::sim
