#include "tools/comparison/comparison.h"

#include <fmt/format.h>

#include <initializer_list>
#include <limits>
#include <utility>

#include "model/errors.h"
#include "model/json_object_reader.h"

namespace splitbrain::tools {
namespace {

const nlohmann::json& field(const nlohmann::json& doc, const std::string& source, const char* key) {
  if (!doc.contains(key))
    throw InputError(fmt::format("{}: field '{}' is missing (is this a splitbrain report?)", source, key));
  return doc.at(key);
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

// A value as a message shows it: whole when short, cut off when long (a fuzzed mesh can be huge).
std::string shown(const nlohmann::json& value) {
  constexpr size_t kMostShown = 80;
  std::string text = value.dump();
  if (text.size() > kMostShown) text = text.substr(0, kMostShown) + "...";
  return text;
}

// The report's kind and version, or an InputError naming the file and the field.
void require_format(const nlohmann::json& doc, const std::string& source, const char* format, const char* what) {
  if (!doc.is_object()) {
    throw InputError(
        fmt::format("{}: expected a JSON object (a splitbrain report), got {}", source, describe_json(doc)));
  }
  if (field(doc, source, "format") != format) throw InputError(fmt::format("{}: format: expected {}", source, what));
  const nlohmann::json& version = field(doc, source, "version");
  if (!version.is_number_integer() || version.get<int64_t>() != kReportFormatVersion) {
    throw InputError(fmt::format("{}: version: this splitbrain reads reports of version {}, not {}", source,
                                 kReportFormatVersion, shown(version)));
  }
}

// How many ranks the report's mesh ({axis: size}) has, or an InputError naming the field.
int64_t mesh_rank_count(const nlohmann::json& doc, const std::string& source) {
  const nlohmann::json& mesh = field(doc, source, "mesh");
  if (!mesh.is_object() || mesh.empty()) {
    throw InputError(fmt::format("{}: mesh: expected an object of axis sizes such as {{\"data\": 2}}", source));
  }
  constexpr int64_t kMostRanks = std::numeric_limits<int>::max();  // plans::Mesh's limit
  int64_t ranks = 1;
  for (const auto& [axis, size] : mesh.items()) {
    if (!size.is_number_integer() || size.get<int64_t>() < 1 || size.get<int64_t>() > kMostRanks / ranks) {
      throw InputError(fmt::format("{}: mesh.{}: expected a positive integer (at most {} ranks in all), got {}", source,
                                   axis, kMostRanks, shown(size)));
    }
    ranks *= size.get<int64_t>();
  }
  return ranks;
}

// One entry per rank of the report's mesh, each naming its rank, in order.
const nlohmann::json& report_ranks(const nlohmann::json& doc, const std::string& source) {
  const nlohmann::json& ranks = report_array(doc, source, "ranks");
  const int64_t world = mesh_rank_count(doc, source);
  if (static_cast<int64_t>(ranks.size()) != world) {
    throw InputError(fmt::format("{}: ranks: has {} entries, but the mesh {} has {} ranks", source, ranks.size(),
                                 shown(doc.at("mesh")), world));
  }
  for (size_t r = 0; r < ranks.size(); ++r) {
    if (!ranks[r].is_object())
      throw InputError(fmt::format("{}: ranks[{}]: expected an object, got {}", source, r, describe_json(ranks[r])));
    const auto rank = ranks[r].find("rank");
    if (rank == ranks[r].end() || !rank->is_number_integer() || rank->get<int64_t>() != static_cast<int64_t>(r)) {
      throw InputError(fmt::format("{}: ranks[{}].rank: expected {} (one entry per rank of the mesh, in order), got {}",
                                   source, r, r, rank == ranks[r].end() ? "nothing" : shown(*rank)));
    }
  }
  return ranks;
}

// A run report's step count: a measurement of no step measured nothing.
void require_steps(const nlohmann::json& measured, const std::string& source) {
  const nlohmann::json& steps = field(measured, source, "steps");
  if (!steps.is_number_integer() || steps.get<int64_t>() < 1) {
    throw InputError(fmt::format("{}: steps: expected the number of steps the run took (an integer >= 1), got {}",
                                 source, shown(steps)));
  }
}

}  // namespace

void require_same_plan(const nlohmann::json& a, const std::string& a_source, const nlohmann::json& b,
                       const std::string& b_source) {
  for (const char* key : kPlanIdentityKeys) {
    if (field(a, a_source, key) != field(b, b_source, key)) {
      throw InputError(fmt::format("{} and {} are of different plans: {} has {} {}, {} has {} {}", a_source, b_source,
                                   a_source, key, shown(a.at(key)), b_source, key, shown(b.at(key))));
    }
  }
}

double report_number(const nlohmann::json& doc, const std::string& source, const std::string& where,
                     std::initializer_list<const char*> path, double most) {
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
  if (!(number >= 0.0 && number <= most)) {  // NaN too
    throw InputError(
        fmt::format("{}: {}: expected a number from 0 to {:g}, got {}", source, name, most, value->dump()));
  }
  return number;
}

double ComparedValue::error() const {
  if (measured < kNegligible) return predicted < kNegligible ? 0.0 : 1.0;
  return (predicted - measured) / measured;
}

Comparison compare_reports(const nlohmann::json& predicted, const std::string& predicted_source,
                           const nlohmann::json& measured, const std::string& measured_source) {
  require_format(predicted, predicted_source, "splitbrain-prediction", "a prediction (splitbrain simulate --json)");
  require_format(measured, measured_source, "splitbrain-measurement", "a measurement (splitbrain run --report)");
  require_same_plan(predicted, predicted_source, measured, measured_source);
  const auto& predicted_ranks = report_ranks(predicted, predicted_source);
  const auto& measured_ranks = report_ranks(measured, measured_source);
  require_steps(measured, measured_source);

  Comparison c;
  if (!predicted.at("model").is_string())
    throw InputError(fmt::format("{}: model: expected a string", predicted_source));
  c.model = predicted.at("model").get<std::string>();
  c.family = predicted.contains("family") && predicted.at("family").is_string()
                 ? predicted.at("family").get<std::string>()
                 : std::string("plan");
  c.mesh = predicted.at("mesh").dump();
  auto both = [&](const nlohmann::json& p, const nlohmann::json& m, const std::string& where,
                  std::initializer_list<const char*> path, double most) {
    return std::pair{report_number(p, predicted_source, where, path, most),
                     report_number(m, measured_source, where, path, most)};
  };
  const auto [predicted_seconds, measured_seconds] =
      both(predicted, measured, "", {"iteration_seconds"}, kMostReportSeconds);
  c.time.push_back({"iteration", predicted_seconds, measured_seconds});
  for (const char* phase : {"compute_forward", "compute_backward", "comm_exposed", "bubble", "optimizer"}) {
    const auto [p, m] = both(predicted, measured, "", {"phases", phase}, kMostReportSeconds);
    c.time.push_back({phase, p, m});
  }
  for (size_t r = 0; r < predicted_ranks.size(); ++r) {
    const auto& p = predicted_ranks[r];
    const auto& m = measured_ranks[r];
    const std::string where = fmt::format("ranks[{}]", r);
    std::vector<ComparedValue> memory;
    for (const char* category : {"params", "grads", "optimizer", "activations", "buffers"}) {
      const auto [predicted_bytes, measured_bytes] = both(p, m, where, {"memory", category}, kMostReportBytes);
      memory.push_back({category, predicted_bytes, measured_bytes});
    }
    const auto [predicted_peak, measured_peak] = both(p, m, where, {"peak_memory_bytes"}, kMostReportBytes);
    memory.push_back({"peak", predicted_peak, measured_peak});
    c.memory.push_back(memory);
    const auto [predicted_sent, measured_sent] = both(p, m, where, {"comm_bytes_sent"}, kMostReportBytes);
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
