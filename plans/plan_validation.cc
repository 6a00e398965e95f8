#include "plans/plan_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
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
void check_stages(const Plan& plan, std::string_view source) {
  const int last = plan.stage_count() - 1;
  int previous = 0;
  for (size_t i = 0; i < plan.stage_of_layer.size(); ++i) {
    const int stage = plan.stage_of_layer[i];
    const std::string& name = plan.model->layer(static_cast<int>(i)).name;
    if (i == 0 && stage != 0) fail(source, fmt::format("layer '{}': the first layer must be in stage 0, not {}", name, stage));
    if (stage < previous || stage > previous + 1) {
      fail(source, fmt::format("layer '{}': stage {} follows stage {}; stages must be contiguous and in model order",
                               name, stage, previous));
    }
    previous = stage;
  }
  if (previous != last) {
    fail(source, fmt::format("pipeline: the layers fill stages 0..{} but the pipeline has {} stages", previous,
                             plan.stage_count()));
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
    fail(source, fmt::format("pipeline.axis: mesh axis {} does not exist in {}", plan.pipe_axis, plan.mesh.to_string()));
  }
  if (plan.micro_batches < 1) fail(source, fmt::format("pipeline.micro_batches: must be >= 1, got {}", plan.micro_batches));
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
      model::checked_product(model::checked_product(plan.global_batch, model::num_elements(layer.output_shape), "elements"), 8,
                             "bytes");
    } catch (const SizeOverflowError& e) {
      fail(source, fmt::format("batch: {} samples of layer '{}' ({} per sample) are more bytes than a 64-bit count holds ({})",
                               plan.global_batch, layer.name, model::shape_to_string(layer.output_shape), e.what()));
    }
  }
  check_optimizer(plan.optimizer, source);
  check_stages(plan, source);
  for (int i = 0; i < model.size(); ++i) check_layer_axes(plan, i, source);
  // Last, because it is the most expensive and because its errors assume the axes are sane.
  for (int i = 0; i < model.size(); ++i) {
    try {
      (void)layer_layouts(model, i, plan.layers[static_cast<size_t>(i)], plan.mesh, plan.micro_batch_size(), plan.dtype);
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
