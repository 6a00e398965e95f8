#include "tools/splitbrain/comparison.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace splitbrain::tools {
namespace {

const nlohmann::json& field(const nlohmann::json& doc, const std::string& source, const char* key) {
  if (!doc.contains(key)) throw InputError(fmt::format("{}: field '{}' is missing (is this a splitbrain report?)", source, key));
  return doc.at(key);
}

void require_same(const nlohmann::json& a, const std::string& a_source, const nlohmann::json& b,
                  const std::string& b_source, const char* key) {
  if (field(a, a_source, key) != field(b, b_source, key)) {
    throw InputError(fmt::format("the reports are of different plans: {} has {} {}, {} has {} {}", a_source, key,
                                 a.at(key).dump(), b_source, key, b.at(key).dump()));
  }
}

}  // namespace

double ComparedValue::error() const {
  if (measured == 0.0) return predicted == 0.0 ? 0.0 : 1.0;
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
  const auto& predicted_ranks = field(predicted, predicted_source, "ranks");
  const auto& measured_ranks = field(measured, measured_source, "ranks");
  if (predicted_ranks.size() != measured_ranks.size()) {
    throw InputError(fmt::format("the reports have different rank counts: {} has {}, {} has {}", predicted_source,
                                 predicted_ranks.size(), measured_source, measured_ranks.size()));
  }

  Comparison c;
  c.model = predicted.at("model").get<std::string>();
  c.family = predicted.value("family", std::string("plan"));
  c.mesh = predicted.at("mesh").dump();
  auto seconds = [](const nlohmann::json& doc, const char* key) { return doc.at(key).get<double>(); };
  c.time.push_back({"iteration", seconds(predicted, "iteration_seconds"), seconds(measured, "iteration_seconds")});
  for (const char* phase : {"compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"}) {
    c.time.push_back({phase, seconds(predicted.at("phases"), phase), seconds(measured.at("phases"), phase)});
  }
  for (size_t r = 0; r < predicted_ranks.size(); ++r) {
    const auto& p = predicted_ranks[r];
    const auto& m = measured_ranks[r];
    std::vector<ComparedValue> memory;
    for (const char* category : {"params", "grads", "optimizer", "activations", "buffers"}) {
      memory.push_back({category, p.at("memory").at(category).get<double>(), m.at("memory").at(category).get<double>()});
    }
    memory.push_back({"peak", p.at("peak_memory_bytes").get<double>(), m.at("peak_memory_bytes").get<double>()});
    c.memory.push_back(memory);
    const ComparedValue sent{fmt::format("rank {}", r), p.at("comm_bytes_sent").get<double>(),
                             m.at("comm_bytes_sent").get<double>()};
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
