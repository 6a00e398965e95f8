#pragma once
// Predicted against measured: the two JSON reports share their vocabulary (iteration_seconds,
// phases, ranks with memory categories and comm_bytes_sent), so the comparison is key by key.

#include <initializer_list>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace splitbrain::tools {

struct ComparedValue {
  std::string name;
  double predicted = 0.0;
  double measured = 0.0;
  double error() const;  // (predicted - measured) / measured; 0 when both are 0
};

struct Comparison {
  std::string model;                               // what was compared, from the prediction
  std::string family;                              // the plan's family label
  std::string mesh;                                // e.g. {"data":2}
  std::vector<ComparedValue> time;                 // iteration and phases, seconds
  std::vector<std::vector<ComparedValue>> memory;  // per rank: categories and peak, bytes
  std::vector<ComparedValue> bytes;                // per rank, bytes sent per step
  bool bytes_equal = true;
};

// The number at `path` under `doc` (a report of `source`, `where` the path's prefix such as
// "ranks[3]"): present, a number, finite and not negative, or an InputError naming the file and
// the field.
double report_number(const nlohmann::json& doc, const std::string& source, const std::string& where,
                     std::initializer_list<const char*> path);

// Throws InputError (naming both files and the field) when the reports describe different
// plans, models or rank counts, or are not prediction and measurement reports.
Comparison compare_reports(const nlohmann::json& predicted, const std::string& predicted_source,
                           const nlohmann::json& measured, const std::string& measured_source);

nlohmann::ordered_json comparison_to_json(const Comparison& comparison);

}  // namespace splitbrain::tools
