#include "plans/plan_builder.h"

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

}  // namespace splitbrain::plans
