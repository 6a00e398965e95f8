#include "tools/splitbrain/comparison.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <utility>

#include "model/errors.h"

namespace splitbrain::tools {
namespace {

const nlohmann::json& field(const nlohmann::json& doc, const std::string& source, const char* key) {
  if (!doc.contains(key))
    throw InputError(fmt::format("{}: field '{}' is missing (is this a splitbrain report?)", source, key));
  return doc.at(key);
}

void require_same(const nlohmann::json& a, const std::string& a_source, const nlohmann::json& b,
                  const std::string& b_source, const char* key) {
  if (field(a, a_source, key) != field(b, b_source, key)) {
    throw InputError(fmt::format("the reports are of different plans: {} has {} {}, {} has {} {}", a_source, key,
                                 a.at(key).dump(), b_source, key, b.at(key).dump()));
  }
}

const nlohmann::json& report_array(const nlohmann::json& doc, const std::string& source, const char* key) {
  const nlohmann::json& value = field(doc, source, key);
  if (!value.is_array())
    throw InputError(fmt::format("{}: {}: expected an array, got {}", source, key, value.type_name()));
  return value;
}

// Values below this (a femtosecond, a femtobyte) are zero for a relative error: dividing by them
// would report an error of 1e300%.
constexpr double kNegligible = 1e-15;

}  // namespace

double report_number(const nlohmann::json& doc, const std::string& source, const std::string& where,
                     std::initializer_list<const char*> path) {
  const nlohmann::json* value = &doc;
  std::string name = where;
  for (const char* key : path) {
    name += name.empty() ? key : fmt::format(".{}", key);
    if (!value->is_object() || !value->contains(key)) {
      throw InputError(fmt::format("{}: {}: missing (is this a splitbrain report?)", source, name));
    }
    value = &value->at(key);
  }
  if (!value->is_number())
    throw InputError(fmt::format("{}: {}: expected a number, got {}", source, name, value->type_name()));
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < 0.0) {
    throw InputError(fmt::format("{}: {}: expected a finite number >= 0, got {}", source, name, value->dump()));
  }
  return number;
}

double ComparedValue::error() const {
  if (measured < kNegligible) return predicted < kNegligible ? 0.0 : 1.0;
  return (predicted - measured) / measured;
}

Comparison compare_reports(const nlohmann::json& predicted, const std::string& predicted_source,
                           const nlohmann::json& measured, const std::string& measured_source) {
  if (field(predicted, predicted_source, "format") != "splitbrain-prediction") {
    throw InputError(fmt::format("{}: format: expected a prediction (splitbrain simulate --json)", predicted_source));
  }
  if (field(measured, measured_source, "format") != "splitbrain-measurement") {
    throw InputError(fmt::format("{}: format: expected a measurement (splitbrain run --report)", measured_source));
  }
  for (const char* key : {"model", "batch", "mesh", "micro_batches", "dtype"}) {
    require_same(predicted, predicted_source, measured, measured_source, key);
  }
  const auto& predicted_ranks = report_array(predicted, predicted_source, "ranks");
  const auto& measured_ranks = report_array(measured, measured_source, "ranks");
  if (predicted_ranks.size() != measured_ranks.size()) {
    throw InputError(fmt::format("the reports have different rank counts: {} has {}, {} has {}", predicted_source,
                                 predicted_ranks.size(), measured_source, measured_ranks.size()));
  }

  Comparison c;
  if (!predicted.at("model").is_string())
    throw InputError(fmt::format("{}: model: expected a string", predicted_source));
  c.model = predicted.at("model").get<std::string>();
  c.family = predicted.contains("family") && predicted.at("family").is_string()
                 ? predicted.at("family").get<std::string>()
                 : std::string("plan");
  c.mesh = predicted.at("mesh").dump();
  auto both = [&](const nlohmann::json& p, const nlohmann::json& m, const std::string& where,
                  std::initializer_list<const char*> path) {
    return std::pair{report_number(p, predicted_source, where, path), report_number(m, measured_source, where, path)};
  };
  const auto [predicted_seconds, measured_seconds] = both(predicted, measured, "", {"iteration_seconds"});
  c.time.push_back({"iteration", predicted_seconds, measured_seconds});
  for (const char* phase : {"compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"}) {
    const auto [p, m] = both(predicted, measured, "", {"phases", phase});
    c.time.push_back({phase, p, m});
  }
  for (size_t r = 0; r < predicted_ranks.size(); ++r) {
    const auto& p = predicted_ranks[r];
    const auto& m = measured_ranks[r];
    const std::string where = fmt::format("ranks[{}]", r);
    std::vector<ComparedValue> memory;
    for (const char* category : {"params", "grads", "optimizer", "activations", "buffers"}) {
      const auto [predicted_bytes, measured_bytes] = both(p, m, where, {"memory", category});
      memory.push_back({category, predicted_bytes, measured_bytes});
    }
    const auto [predicted_peak, measured_peak] = both(p, m, where, {"peak_memory_bytes"});
    memory.push_back({"peak", predicted_peak, measured_peak});
    c.memory.push_back(memory);
    const auto [predicted_sent, measured_sent] = both(p, m, where, {"comm_bytes_sent"});
    const ComparedValue sent{fmt::format("rank {}", r), predicted_sent, measured_sent};
    c.bytes_equal = c.bytes_equal && sent.predicted == sent.measured;
    c.bytes.push_back(sent);
  }
  return c;
}

nlohmann::ordered_json comparison_to_json(const Comparison& comparison) {
  auto values = [](const std::vector<ComparedValue>& list) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const ComparedValue& v : list) {
      out.push_back({{"name", v.name}, {"predicted", v.predicted}, {"measured", v.measured}, {"error", v.error()}});
    }
    return out;
  };
  nlohmann::ordered_json memory = nlohmann::ordered_json::array();
  for (const auto& rank : comparison.memory) memory.push_back(values(rank));
  return {{"model", comparison.model},
          {"family", comparison.family},
          {"mesh", comparison.mesh},
          {"time", values(comparison.time)},
          {"memory", memory},
          {"bytes", values(comparison.bytes)},
          {"bytes_equal", comparison.bytes_equal}};
}

}  // namespace splitbrain::tools
