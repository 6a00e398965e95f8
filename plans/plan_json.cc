#include "plans/plan_json.h"

#include <fmt/format.h>

#include <array>
#include <climits>
#include <limits>
#include <memory>

#include "model/file_io.h"
#include "model/json_object_reader.h"
#include "model/model_json.h"
#include "model/zoo.h"
#include "plans/op_sharding.h"
#include "plans/plan_error.h"
#include "plans/plan_validation.h"

namespace splitbrain::plans {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr std::array kRoles = {ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial};
constexpr std::array<std::string_view, 14> kTopLevelKeys = {
    "format", "version", "family", "description", "model",     "batch",   "dtype",
    "mesh",   "default", "layers", "pipeline",    "optimizer", "options", "micro_batches"};

// A relative model path means "next to the plan file", so a plan and its model can move together.
std::shared_ptr<const model::Model> read_model(JsonObjectReader& top, const std::filesystem::path& base_dir,
                                               std::string& spec) {
  spec = top.required_string("model");
  if (!model::is_zoo_spec(spec)) {
    const std::filesystem::path path(spec);
    if (path.is_relative() && !base_dir.empty()) spec = (base_dir / path).lexically_normal().string();
  }
  try {
    return std::make_shared<const model::Model>(model::resolve_model(spec));
  } catch (const InputError& e) {
    top.fail("model", e.what());
  }
}

// The axes in the order written: that order is the rank layout, so it must not be sorted.
Mesh read_mesh(JsonObjectReader& top, const ordered_json& document) {
  JsonObjectReader fields = top.object("mesh");
  std::vector<MeshAxis> axes;
  for (const auto& item : document.at("mesh").items()) {
    const int size = fields.required_int32(item.key());
    if (size < 1) fields.fail(item.key(), fmt::format("an axis needs at least 1 rank, got {}", size));
    axes.push_back({item.key(), size});
  }
  if (axes.empty()) top.fail("mesh", "needs at least one axis, e.g. {\"data\": 2}");
  try {
    return Mesh(std::move(axes));
  } catch (const PlanError& e) {
    top.fail("mesh", e.what());
  }
}

// The micro-batches a step's batch runs in (`fields` holds "micro_batches", default 1): each
// runs forward and backward and the gradients add up before the update.
int read_micro_batches(JsonObjectReader& fields, const Plan& plan) {
  const int64_t micro_batches = fields.optional_int("micro_batches", 1);
  if (micro_batches < 1 || micro_batches > INT_MAX) {
    fields.fail("micro_batches", fmt::format("must be between 1 and {}, got {}", INT_MAX, micro_batches));
  }
  if (plan.global_batch % micro_batches != 0) {
    fields.fail("micro_batches",
                fmt::format("{} micro-batches do not divide the batch of {}", micro_batches, plan.global_batch));
  }
  return static_cast<int>(micro_batches);
}

// Stage s (s >= 1) starts at the layer stage_starts[s - 1] and runs to the next start; under the
// interleaved schedule the list names the start of every model chunk after the first (chunk c
// runs on stage c % stages). Without a pipeline, a top-level "micro_batches" accumulates
// gradients over that many micro-batches.
void read_pipeline(JsonObjectReader& top, Plan& plan) {
  const model::Model& model = *plan.model;
  plan.stage_of_layer.assign(static_cast<size_t>(model.size()), 0);
  if (!top.has("pipeline")) {
    plan.micro_batches = read_micro_batches(top, plan);
    return;
  }
  if (top.has("micro_batches")) {
    top.fail("micro_batches", "a pipelined plan gives its micro-batches in \"pipeline\": {\"micro_batches\": N}");
  }
  JsonObjectReader fields = top.object("pipeline");
  const std::string axis = fields.required_string("axis");
  plan.pipe_axis = plan.mesh.axis_index(axis);
  if (plan.pipe_axis < 0) {
    fields.fail("axis", fmt::format("'{}' is not a mesh axis (the mesh is {})", axis, plan.mesh.to_string()));
  }
  plan.micro_batches = read_micro_batches(fields, plan);
  const std::string schedule = fields.optional_string("schedule", "1f1b");
  if (schedule == "gpipe") {
    plan.schedule = PipelineSchedule::gpipe;
  } else if (schedule == "1f1b") {
    plan.schedule = PipelineSchedule::one_f_one_b;
  } else if (schedule == "interleaved_1f1b") {
    plan.schedule = PipelineSchedule::interleaved_one_f_one_b;
  } else {
    fields.fail("schedule", fmt::format("unknown schedule '{}' (known: gpipe, 1f1b, interleaved_1f1b)", schedule));
  }

  const int stages = plan.mesh.axis(plan.pipe_axis).size;
  const bool interleaved = plan.schedule == PipelineSchedule::interleaved_one_f_one_b;
  const int64_t virtual_stages = fields.optional_int("virtual_stages", 1);
  if (virtual_stages < 1 || virtual_stages > 1024) {
    fields.fail("virtual_stages",
                fmt::format("must be between 1 and 1024 (model chunks per stage), got {}", virtual_stages));
  }
  if (virtual_stages > 1 && !interleaved) {
    fields.fail("virtual_stages", fmt::format("{} model chunks per stage need \"schedule\": \"interleaved_1f1b\" "
                                              "(the '{}' schedule runs one chunk per stage)",
                                              virtual_stages, schedule));
  }
  if (interleaved && virtual_stages < 2) {
    fields.fail("virtual_stages",
                "the interleaved_1f1b schedule needs at least 2 model chunks per stage (with one "
                "it is \"1f1b\")");
  }
  if (interleaved && stages < 2) {
    fields.fail("schedule", fmt::format("the interleaved_1f1b schedule needs a pipeline of at least 2 stages; axis "
                                        "'{}' has {}",
                                        axis, stages));
  }
  if (interleaved && plan.micro_batches % stages != 0) {
    fields.fail("micro_batches", fmt::format("the interleaved_1f1b schedule needs a multiple of the {} pipeline stages "
                                             "(as Megatron-LM does), got {}",
                                             stages, plan.micro_batches));
  }
  if (stages * virtual_stages > INT_MAX) {
    fields.fail("virtual_stages",
                fmt::format("{} stages x {} chunks are more chunks than fit in an int", stages, virtual_stages));
  }
  plan.virtual_stages = static_cast<int>(virtual_stages);
  const int chunks = plan.chunk_count();
  const std::vector<std::string> starts = fields.optional_string_list("stage_starts");
  if (starts.size() != static_cast<size_t>(chunks - 1)) {
    if (plan.virtual_stages > 1) {
      fields.fail("stage_starts",
                  fmt::format("lists {} layers, but {} stages x {} virtual stages make {} model chunks, "
                              "so it needs {}: the first layer of each chunk after chunk 0",
                              starts.size(), stages, plan.virtual_stages, chunks, chunks - 1));
    }
    fields.fail("stage_starts", fmt::format("lists {} layers, but axis '{}' has {} stages, so it needs {}: the first "
                                            "layer of each stage after stage 0",
                                            starts.size(), axis, stages, stages - 1));
  }
  int previous = 0;  // stage 0 starts at the first layer
  for (size_t s = 0; s < starts.size(); ++s) {
    const std::string where = fmt::format("stage_starts[{}]", s);
    const int index = model.find(starts[s]);
    if (index < 0) fields.fail(where, fmt::format("no layer '{}' in model '{}'", starts[s], model.name()));
    if (index <= previous) {
      fields.fail(where, fmt::format("'{}' does not come after '{}' in model order; stages are contiguous runs of "
                                     "layers, listed in order",
                                     starts[s], model.layer(previous).name));
    }
    for (int i = index; i < model.size(); ++i) plan.stage_of_layer[static_cast<size_t>(i)] = static_cast<int>(s) + 1;
    previous = index;
  }
  if (plan.virtual_stages > 1) {
    // A chunk hands its tensors to the next chunk only (Megatron-LM's transformer chunks do).
    if (const std::string problem = chunk_hand_over_problem(plan); !problem.empty())
      fields.fail("stage_starts", problem);
  }
  fields.reject_unknown_keys();
}

// {"batch": ["data"], "out": ["model"]}: each role lists mesh axis names, outermost first.
LayerSharding read_sharding(JsonObjectReader& fields, const Plan& plan) {
  LayerSharding sharding;
  for (ShardRole role : kRoles) {
    const std::string key(role_name(role));
    for (const std::string& name : fields.optional_string_list(key)) {
      const int axis = plan.mesh.axis_index(name);
      if (axis < 0)
        fields.fail(key, fmt::format("'{}' is not a mesh axis (the mesh is {})", name, plan.mesh.to_string()));
      if (sharding.uses(axis)) {
        fields.fail(key, fmt::format("axis '{}' is used twice in this layer (an axis splits one role once)", name));
      }
      if (axis == plan.pipe_axis) {
        fields.fail(key,
                    fmt::format("axis '{}' is the pipeline axis; it splits the layers into stages, not a layer", name));
      }
      sharding.axes(role).push_back(axis);
    }
  }
  fields.reject_unknown_keys();
  return sharding;
}

std::vector<std::optional<LayerSharding>> read_listed(JsonObjectReader& top, const Plan& plan,
                                                      const std::string& source) {
  std::vector<std::optional<LayerSharding>> listed(static_cast<size_t>(plan.model->size()));
  if (!top.has("layers")) return listed;
  JsonObjectReader layers = top.object("layers");
  for (const auto& item : top.required("layers").items()) {
    (void)layers.optional(item.key());
    const int index = plan.model->find(item.key());
    if (index < 0) {
      layers.fail(item.key(), fmt::format("no such layer in model '{}' (`splitbrain inspect --model {}` lists them)",
                                          plan.model->name(), plan.model_spec));
    }
    // Each layer is its own `where`, as in model files: users know their layers by name, and
    // dotted names ("h0.attn.c_attn") would make a dotted path ambiguous.
    JsonObjectReader fields(item.value(), fmt::format("{}: layer '{}'", source, item.key()), throwing<PlanError>);
    listed[static_cast<size_t>(index)] = read_sharding(fields, plan);
  }
  return listed;
}

OptimizerConfig read_optimizer(JsonObjectReader& top) {
  OptimizerConfig o;
  if (!top.has("optimizer")) return o;
  JsonObjectReader fields = top.object("optimizer");
  const std::string kind = fields.required_string("kind");
  if (kind == "sgd_momentum") {
    o.kind = OptimizerKind::sgd_momentum;
  } else if (kind == "adam") {
    o.kind = OptimizerKind::adam;
  } else {
    fields.fail("kind", fmt::format("unknown optimizer '{}' (known: sgd_momentum, adam)", kind));
  }
  o.learning_rate = fields.optional_number("learning_rate", o.learning_rate);
  o.weight_decay = fields.optional_number("weight_decay", o.weight_decay);
  // Only the kind's own settings are asked for, so e.g. "momentum" under adam is an unknown key.
  if (o.kind == OptimizerKind::sgd_momentum) {
    o.momentum = fields.optional_number("momentum", o.momentum);
  } else {
    o.beta1 = fields.optional_number("beta1", o.beta1);
    o.beta2 = fields.optional_number("beta2", o.beta2);
    o.epsilon = fields.optional_number("epsilon", o.epsilon);
  }
  fields.reject_unknown_keys();
  return o;
}

void read_options(JsonObjectReader& top, Plan& plan) {
  if (!top.has("options")) return;
  JsonObjectReader fields = top.object("options");
  // "recompute": false, true (every activation of a stage but its inputs) or "selective".
  if (const nlohmann::json* recompute = fields.optional("recompute")) {
    if (recompute->is_boolean()) {
      plan.recompute_activations = recompute->get<bool>();
    } else if (recompute->is_string() && recompute->get<std::string>() == "selective") {
      plan.recompute_attention = true;
    } else {
      fields.fail("recompute", fmt::format("must be false, true or \"selective\", got {}", recompute->dump()));
    }
  }
  if (fields.has("gradient_dtype")) {
    try {
      plan.gradient_dtype = model::parse_dtype(fields.required_string("gradient_dtype"));
    } catch (const InputError& e) {
      fields.fail("gradient_dtype", e.what());
    }
  }
  if (fields.has("recompute_blocks")) {
    const int64_t blocks = fields.optional_int("recompute_blocks", 0);
    if (blocks < 0 || blocks > std::numeric_limits<int>::max()) {
      fields.fail("recompute_blocks", fmt::format("must be 0 (every block) or a positive count, got {}", blocks));
    }
    if (!plan.recompute_activations) {
      fields.fail("recompute_blocks",
                  "recomputes the first blocks of each chunk under \"recompute\": true, which this "
                  "plan does not set");
    }
    plan.recompute_blocks = static_cast<int>(blocks);
  }
  plan.regather_saved_inputs = fields.optional_bool("regather_saved_inputs", plan.regather_saved_inputs);
  const int64_t zero_stage = fields.optional_int("zero_stage", plan.zero_stage);
  if (zero_stage < 0 || zero_stage > 3) {
    fields.fail("zero_stage", fmt::format("must be 0 (off), 1 (optimizer state), 2 (+ gradients) or 3 (+ parameters), "
                                          "got {}",
                                          zero_stage));
  }
  plan.zero_stage = static_cast<int>(zero_stage);
  plan.overlap_gradient_sync = fields.optional_bool("overlap_gradient_sync", plan.overlap_gradient_sync);
  plan.gradient_bucket_bytes = fields.optional_int("gradient_bucket_bytes", plan.gradient_bucket_bytes);
  if (plan.gradient_bucket_bytes < 1) {
    fields.fail("gradient_bucket_bytes", fmt::format("must be >= 1, got {}", plan.gradient_bucket_bytes));
  }
  fields.reject_unknown_keys();
}

ordered_json sharding_to_json(const LayerSharding& sharding, const Mesh& mesh) {
  ordered_json out = ordered_json::object();
  for (ShardRole role : kRoles) {
    if (sharding.axes(role).empty()) continue;
    ordered_json names = ordered_json::array();
    for (int axis : sharding.axes(role)) names.push_back(mesh.axis(axis).name);
    out[std::string(role_name(role))] = std::move(names);
  }
  return out;
}

}  // namespace

std::vector<LayerSharding> resolve_layer_shardings(const model::Model& model,
                                                   const std::vector<std::optional<LayerSharding>>& listed,
                                                   const std::optional<LayerSharding>& default_sharding,
                                                   std::string_view source) {
  if (listed.size() != static_cast<size_t>(model.size())) {
    throw PlanError(fmt::format("{}: layers: {} entries for the {} layers of model '{}'", source, listed.size(),
                                model.size(), model.name()));
  }
  std::vector<LayerSharding> result;
  result.reserve(listed.size());
  for (int i = 0; i < model.size(); ++i) {
    const model::Layer& layer = model.layer(i);
    if (const auto& own = listed[static_cast<size_t>(i)]) {
      result.push_back(*own);
    } else if (chooses_own_sharding(layer)) {
      if (!default_sharding) {
        throw PlanError(
            fmt::format("{}: layer '{}': it has parameters (or is an input) but is not listed in "
                        "\"layers\", and the plan has no \"default\" sharding",
                        source, layer.name));
      }
      result.push_back(*default_sharding);
    } else {
      // Parameter-free layers follow their producer, so a plan only has to talk about the layers
      // that own weights.
      result.push_back(inherited_sharding(layer, result[static_cast<size_t>(layer.inputs.front())]));
    }
  }
  return result;
}

Plan plan_from_json(const ordered_json& document, const std::string& source, const std::filesystem::path& base_dir) {
  // The shared strict reader works on nlohmann::json; the ordered document is consulted only
  // where order carries meaning (the mesh).
  const json plain(document);
  JsonObjectReader top(plain, source, throwing<PlanError>);
  const std::string format = top.required_string("format");
  if (format != kPlanFormatName) {
    top.fail("format", fmt::format("expected \"{}\", got \"{}\" (is this a plan file?)", kPlanFormatName, format));
  }
  const int64_t version = top.required_int("version");
  if (version != kPlanFormatVersion) {
    top.fail("version",
             fmt::format("this splitbrain reads version {}, the file is version {}", kPlanFormatVersion, version));
  }
  // Unknown top-level keys first: a misspelt "layers" would otherwise surface later as a
  // puzzling complaint about the layers it was meant to list.
  for (std::string_view key : kTopLevelKeys) (void)top.optional(key);
  top.reject_unknown_keys();
  Plan plan;
  plan.family = top.optional_string("family", "");
  plan.description = top.optional_string("description", "");
  plan.model = read_model(top, base_dir, plan.model_spec);
  plan.global_batch = top.required_int("batch");
  if (plan.global_batch < 1) {
    top.fail("batch",
             fmt::format("must be >= 1 (samples per optimizer step, over all ranks), got {}", plan.global_batch));
  }
  const std::string dtype = top.optional_string("dtype", "fp32");
  try {
    plan.dtype = model::parse_dtype(dtype);
  } catch (const InputError& e) {
    top.fail("dtype", e.what());
  }
  plan.mesh = read_mesh(top, document);
  read_pipeline(top, plan);  // before the layers: they may not use the pipeline axis
  std::optional<LayerSharding> default_sharding;
  if (top.has("default")) {
    JsonObjectReader fields = top.object("default");
    default_sharding = read_sharding(fields, plan);
  }
  plan.layers = resolve_layer_shardings(*plan.model, read_listed(top, plan, source), default_sharding, source);
  plan.optimizer = read_optimizer(top);
  read_options(top, plan);
  validate_plan(plan, source);
  return plan;
}

Plan plan_from_text(std::string_view text, const std::string& source, const std::filesystem::path& base_dir) {
  // The strict parse reports syntax errors with line and column and refuses duplicate keys
  // (a repeated mesh axis); the second parse keeps the keys in the order written.
  (void)parse_json_strict(text, source, throwing<PlanError>);
  return plan_from_json(ordered_json::parse(text), source, base_dir);
}

ordered_json plan_to_json(const Plan& plan) {
  ordered_json doc;
  doc["format"] = std::string(kPlanFormatName);
  doc["version"] = kPlanFormatVersion;
  if (!plan.family.empty()) doc["family"] = plan.family;
  if (!plan.description.empty()) doc["description"] = plan.description;
  doc["model"] = plan.model_spec;
  doc["batch"] = plan.global_batch;
  doc["dtype"] = std::string(model::dtype_name(plan.dtype));
  ordered_json mesh = ordered_json::object();
  for (const MeshAxis& axis : plan.mesh.axes()) mesh[axis.name] = axis.size;
  doc["mesh"] = std::move(mesh);
  if (plan.pipe_axis >= 0) {
    ordered_json starts = ordered_json::array();
    for (size_t i = 1; i < plan.stage_of_layer.size(); ++i) {
      if (plan.stage_of_layer[i] != plan.stage_of_layer[i - 1])
        starts.push_back(plan.model->layer(static_cast<int>(i)).name);
    }
    doc["pipeline"] = {{"axis", plan.mesh.axis(plan.pipe_axis).name},
                       {"stage_starts", std::move(starts)},
                       {"micro_batches", plan.micro_batches},
                       {"schedule", std::string(schedule_name(plan.schedule))}};
    if (plan.virtual_stages > 1) doc["pipeline"]["virtual_stages"] = plan.virtual_stages;
  } else if (plan.micro_batches > 1) {
    doc["micro_batches"] = plan.micro_batches;
  }
  const OptimizerConfig& o = plan.optimizer;
  ordered_json optimizer = {{"kind", std::string(optimizer_kind_name(o.kind))}, {"learning_rate", o.learning_rate}};
  if (o.kind == OptimizerKind::sgd_momentum) {
    optimizer["momentum"] = o.momentum;
  } else {
    optimizer["beta1"] = o.beta1;
    optimizer["beta2"] = o.beta2;
    optimizer["epsilon"] = o.epsilon;
  }
  optimizer["weight_decay"] = o.weight_decay;
  doc["optimizer"] = std::move(optimizer);
  doc["options"] = {
      {"recompute", plan.recompute_attention ? ordered_json("selective") : ordered_json(plan.recompute_activations)},
      {"zero_stage", plan.zero_stage},
      {"overlap_gradient_sync", plan.overlap_gradient_sync},
      {"gradient_bucket_bytes", plan.gradient_bucket_bytes}};
  if (plan.gradient_dtype) doc["options"]["gradient_dtype"] = std::string(model::dtype_name(*plan.gradient_dtype));
  if (plan.regather_saved_inputs) doc["options"]["regather_saved_inputs"] = true;
  if (plan.recompute_blocks > 0) doc["options"]["recompute_blocks"] = plan.recompute_blocks;
  // Every layer, resolved: the written plan depends on no default and no inheritance rule.
  ordered_json layers = ordered_json::object();
  for (int i = 0; i < plan.model->size(); ++i) {
    layers[plan.model->layer(i).name] = sharding_to_json(plan.layers[static_cast<size_t>(i)], plan.mesh);
  }
  doc["layers"] = std::move(layers);
  return doc;
}

Plan load_plan_file(const std::filesystem::path& path) {
  return plan_from_text(read_text_file(path), path.string(), path.parent_path());
}

void save_plan_file(const Plan& plan, const std::filesystem::path& path) {
  ordered_json doc = plan_to_json(plan);
  // Always relative, even when the plan was read with an absolute folder: a plan and its model
  // then move together, which is what "relative to the plan file's folder" promises.
  if (!model::is_zoo_spec(plan.model_spec)) {
    const std::filesystem::path folder = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    std::error_code error;
    const std::filesystem::path relative = std::filesystem::proximate(plan.model_spec, folder, error);
    if (!error) doc["model"] = relative.generic_string();
  }
  write_file_atomically(path, doc.dump(2) + "\n");
}

}  // namespace splitbrain::plans
