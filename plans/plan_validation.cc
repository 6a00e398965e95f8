#include "plans/plan_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <string>

#include "model/errors.h"
#include "model/shape.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"

namespace splitbrain::plans {
namespace {

constexpr std::array kRoles = {ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial};

[[noreturn]] void fail(std::string_view source, std::string_view problem) {
  throw PlanError(fmt::format("{}: {}", source, problem));
}

void check_layer_axes(const Plan& plan, int index, std::string_view source) {
  const std::string& name = plan.model->layer(index).name;
  std::vector<int> seen;
  for (ShardRole role : kRoles) {
    for (int axis : plan.layers[static_cast<size_t>(index)].axes(role)) {
      const auto where = [&] { return fmt::format("layer '{}': {}", name, role_name(role)); };
      if (axis < 0 || axis >= plan.mesh.axis_count()) {
        fail(source, fmt::format("{}: mesh axis {} does not exist in {}", where(), axis, plan.mesh.to_string()));
      }
      const std::string& axis_name = plan.mesh.axis(axis).name;
      if (std::find(seen.begin(), seen.end(), axis) != seen.end()) {
        fail(source, fmt::format("{}: axis '{}' is used twice in this layer (an axis splits one role once)", where(),
                                 axis_name));
      }
      if (axis == plan.pipe_axis) {
        fail(source, fmt::format("{}: axis '{}' is the pipeline axis; it splits the layers into stages, not a layer",
                                 where(), axis_name));
      }
      seen.push_back(axis);
    }
  }
}

// Stages are contiguous runs of layers in model order: 0, 0, 1, 1, 1, 2 ... with none skipped,
// so that stage s only ever sends activations to stage s + 1 (and gradients back to s - 1).
// Under the interleaved schedule the numbers are the model chunks (virtual stages).
void check_stages(const Plan& plan, std::string_view source) {
  const int last = plan.chunk_count() - 1;
  int previous = 0;
  for (size_t i = 0; i < plan.stage_of_layer.size(); ++i) {
    const int stage = plan.stage_of_layer[i];
    const std::string& name = plan.model->layer(static_cast<int>(i)).name;
    if (i == 0 && stage != 0)
      fail(source, fmt::format("layer '{}': the first layer must be in stage 0, not {}", name, stage));
    if (stage < previous || stage > previous + 1) {
      fail(source, fmt::format("layer '{}': stage {} follows stage {}; stages must be contiguous and in model order",
                               name, stage, previous));
    }
    previous = stage;
  }
  if (previous != last) {
    if (plan.virtual_stages > 1) {
      fail(source,
           fmt::format("pipeline: the layers fill chunks 0..{} but {} stages x {} virtual stages make {} chunks",
                       previous, plan.stage_count(), plan.virtual_stages, plan.chunk_count()));
    }
    fail(source, fmt::format("pipeline: the layers fill stages 0..{} but the pipeline has {} stages", previous,
                             plan.stage_count()));
  }
}

void check_schedule(const Plan& plan, std::string_view source) {
  const bool interleaved = plan.schedule == PipelineSchedule::interleaved_one_f_one_b;
  if (plan.virtual_stages < 1) {
    fail(source, fmt::format("pipeline.virtual_stages: must be >= 1, got {}", plan.virtual_stages));
  }
  if (static_cast<int64_t>(plan.stage_count()) * plan.virtual_stages > INT_MAX) {
    fail(source, fmt::format("pipeline.virtual_stages: {} stages x {} chunks are more chunks than fit in an int",
                             plan.stage_count(), plan.virtual_stages));
  }
  if (plan.virtual_stages > 1 && !interleaved) {
    fail(source, fmt::format("pipeline.virtual_stages: {} model chunks per stage need the interleaved_1f1b schedule, "
                             "not '{}'",
                             plan.virtual_stages, schedule_name(plan.schedule)));
  }
  if (!interleaved) return;
  if (static_cast<int64_t>(plan.micro_batches) * plan.virtual_stages > INT_MAX) {
    fail(source, fmt::format("pipeline.virtual_stages: {} micro-batches x {} chunks are more passes than a stage can "
                             "count ({})",
                             plan.micro_batches, plan.virtual_stages, INT_MAX));
  }
  if (plan.virtual_stages < 2) {
    fail(source, "pipeline.virtual_stages: the interleaved_1f1b schedule needs at least 2 model chunks per stage");
  }
  if (plan.stage_count() < 2) {
    fail(source, fmt::format("pipeline.schedule: the interleaved_1f1b schedule needs a pipeline of at least 2 stages, "
                             "the plan has {}",
                             plan.stage_count()));
  }
  if (plan.micro_batches % plan.stage_count() != 0) {
    fail(source, fmt::format("pipeline.micro_batches: the interleaved_1f1b schedule needs a multiple of the {} "
                             "pipeline stages (as Megatron-LM does), got {}",
                             plan.stage_count(), plan.micro_batches));
  }
}

void check_optimizer(const OptimizerConfig& o, std::string_view source) {
  const auto require = [&](bool ok, std::string_view field, double value, std::string_view rule) {
    if (!ok) fail(source, fmt::format("optimizer.{}: must be {}, got {}", field, rule, value));
  };
  // Finite and within reason: an update of 1e300 x a gradient would overflow on the first step.
  require(o.learning_rate > 0 && o.learning_rate <= 1e6, "learning_rate", o.learning_rate, "in (0, 1e6]");
  require(o.weight_decay >= 0 && o.weight_decay <= 1e6, "weight_decay", o.weight_decay, "in [0, 1e6]");
  if (o.kind == OptimizerKind::sgd_momentum) {
    require(o.momentum >= 0 && o.momentum < 1, "momentum", o.momentum, "in [0, 1)");
  } else {
    require(o.beta1 >= 0 && o.beta1 < 1, "beta1", o.beta1, "in [0, 1)");
    require(o.beta2 >= 0 && o.beta2 < 1, "beta2", o.beta2, "in [0, 1)");
    require(o.epsilon > 0 && o.epsilon <= 1, "epsilon", o.epsilon, "in (0, 1]");
  }
}

}  // namespace

std::string chunk_hand_over_problem(const Plan& plan) {
  if (plan.virtual_stages <= 1 || plan.stage_of_layer.size() != static_cast<size_t>(plan.model->size())) return "";
  const model::Model& model = *plan.model;
  for (int v = 0; v < model.size(); ++v) {
    const int chunk = plan.stage_of_layer[static_cast<size_t>(v)];
    for (int u : model.layer(v).inputs) {
      const int from = plan.stage_of_layer[static_cast<size_t>(u)];
      if (from == chunk || from == chunk - 1) continue;
      return fmt::format(
          "layer '{}' (chunk {}, stage {}) reads '{}' of chunk {}; an interleaved pipeline hands a "
          "tensor only from a chunk to the next, so start the chunks where no tensor skips one",
          model.layer(v).name, chunk, plan.stage_of_chunk(chunk), model.layer(u).name, from);
    }
  }
  return "";
}

void validate_plan(const Plan& plan, std::string_view source) {
  if (plan.model == nullptr) fail(source, "model: no model is set");
  const model::Model& model = *plan.model;
  const size_t layer_count = static_cast<size_t>(model.size());
  if (plan.global_batch <= 0) fail(source, fmt::format("batch: must be >= 1, got {}", plan.global_batch));
  if (plan.layers.size() != layer_count) {
    fail(source, fmt::format("layers: {} shardings for the {} layers of model '{}'", plan.layers.size(), layer_count,
                             model.name()));
  }
  if (plan.stage_of_layer.size() != layer_count) {
    fail(source, fmt::format("pipeline: {} stage numbers for the {} layers of model '{}'", plan.stage_of_layer.size(),
                             layer_count, model.name()));
  }
  if (plan.pipe_axis < -1 || plan.pipe_axis >= plan.mesh.axis_count()) {
    fail(source,
         fmt::format("pipeline.axis: mesh axis {} does not exist in {}", plan.pipe_axis, plan.mesh.to_string()));
  }
  if (plan.micro_batches < 1)
    fail(source, fmt::format("pipeline.micro_batches: must be >= 1, got {}", plan.micro_batches));
  if (plan.global_batch % plan.micro_batches != 0) {
    fail(source, fmt::format("pipeline.micro_batches: {} micro-batches do not divide the batch of {}",
                             plan.micro_batches, plan.global_batch));
  }
  if (plan.zero_stage < 0 || plan.zero_stage > 3) {
    fail(source, fmt::format("options.zero_stage: must be 0, 1, 2 or 3, got {}", plan.zero_stage));
  }
  if (plan.gradient_bucket_bytes <= 0) {
    fail(source, fmt::format("options.gradient_bucket_bytes: must be >= 1, got {}", plan.gradient_bucket_bytes));
  }
  // Every byte count of the step is at most batch x elements x 8 B: if that fits in 64 bits,
  // no count of the plan wraps around.
  for (int i = 0; i < model.size(); ++i) {
    const model::Layer& layer = model.layer(i);
    try {
      model::checked_product(
          model::checked_product(plan.global_batch, model::num_elements(layer.output_shape), "elements"), 8, "bytes");
    } catch (const SizeOverflowError& e) {
      fail(source,
           fmt::format("batch: {} samples of layer '{}' ({} per sample) are more bytes than a 64-bit count holds ({})",
                       plan.global_batch, layer.name, model::shape_to_string(layer.output_shape), e.what()));
    }
  }
  check_optimizer(plan.optimizer, source);
  check_schedule(plan, source);
  check_stages(plan, source);
  if (const std::string problem = chunk_hand_over_problem(plan); !problem.empty()) {
    fail(source, "pipeline.stage_starts: " + problem);
  }
  for (int i = 0; i < model.size(); ++i) check_layer_axes(plan, i, source);
  // Last, because it is the most expensive and because its errors assume the axes are sane.
  for (int i = 0; i < model.size(); ++i) {
    try {
      (void)layer_layouts(model, i, plan.layers[static_cast<size_t>(i)], plan.mesh, plan.micro_batch_size(),
                          plan.dtype);
    } catch (const PlanError& e) {
      fail(source, e.what());
    }
  }
}

void check_device_count(const Plan& plan, int devices, std::string_view source) {
  if (plan.mesh.rank_count() == devices) return;
  fail(source, fmt::format("mesh {} has {} ranks but {} devices were given", plan.mesh.to_string(),
                           plan.mesh.rank_count(), devices));
}

}  // namespace splitbrain::plans
