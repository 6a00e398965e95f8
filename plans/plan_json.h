#pragma once
// The plan file (plans/README.md documents it field by field):
//   {"format": "splitbrain-plan", "version": 1, "model": "vgg11-cifar10", "batch": 128,
//    "mesh": {"data": 2, "model": 2}, "default": {"batch": ["data", "model"]},
//    "layers": {"fc1": {"batch": ["data"], "out": ["model"]}}, ...}
// Reading is strict (unknown keys, wrong types and bad values are PlanErrors naming the file and
// the field, layer or role) and ends with validate_plan(). Writing lists every layer's sharding,
// so a written plan is self-contained and loads back to an identical Plan.
//
// Documents are nlohmann::ordered_json, not nlohmann::json: the order of the mesh axes is the
// rank layout (first axis slowest), and nlohmann::json would sort the keys alphabetically.

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "plans/plan.h"

namespace splitbrain::plans {

constexpr std::string_view kPlanFormatName = "splitbrain-plan";
constexpr int kPlanFormatVersion = 1;

// `source` names the document in errors (usually its path). A relative model path is taken
// relative to `base_dir` (the plan file's folder) and kept in Plan::model_spec as that joined
// path, so the Plan is usable from the current directory.
Plan plan_from_json(const nlohmann::ordered_json& document, const std::string& source,
                    const std::filesystem::path& base_dir);
// Parses `text` strictly (syntax errors with line and column, duplicate keys), then reads it.
Plan plan_from_text(std::string_view text, const std::string& source, const std::filesystem::path& base_dir);
nlohmann::ordered_json plan_to_json(const Plan& plan);

Plan load_plan_file(const std::filesystem::path& path);
// Written to a temporary file and renamed. A model file path is written relative to the new
// file's folder (from the current directory's view of Plan::model_spec), so the saved plan finds
// its model wherever it was saved.
void save_plan_file(const Plan& plan, const std::filesystem::path& path);

// The plan file's resolution rule, one sharding per layer in model order:
//   a layer in `listed` gets its listing;
//   else a layer with parameters (or a linear tied to an embedding's weight) or an input layer
//     gets `default_sharding`;
//   else the layer inherits the sharding of its first input's producer, keeping only the roles
//     role_allowed() permits (a dropped role's axes replicate the layer instead).
// Throws PlanError("<source>: layer '...': ...") when a layer needs the default and there is none.
std::vector<LayerSharding> resolve_layer_shardings(const model::Model& model,
                                                   const std::vector<std::optional<LayerSharding>>& listed,
                                                   const std::optional<LayerSharding>& default_sharding,
                                                   std::string_view source);

}  // namespace splitbrain::plans
