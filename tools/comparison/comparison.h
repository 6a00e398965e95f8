#pragma once
// Predicted against measured: the two JSON reports share their vocabulary (iteration_seconds,
// phases, ranks with memory categories and comm_bytes_sent), so the comparison is key by key.

#include <array>
#include <cstdint>
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

// The version of both reports this compare reads (sim/prediction_json.h, exec/runtime/run_report.cc).
inline constexpr int64_t kReportFormatVersion = 1;

// The fields that name the plan a report (and a trace, trace_reader.h) is of: two documents of one
// plan have them equal.
inline constexpr std::array<const char*, 6> kPlanIdentityKeys = {"family", "model",         "batch",
                                                                 "mesh",   "micro_batches", "dtype"};

// The largest values a report may hold. Beyond them a value is no step of a training run, and the
// differences, ratios and sums compare makes of them (and their printing as 64-bit integers) would
// overflow to infinity.
inline constexpr double kMostReportSeconds = 1e9;               // about 31 years
inline constexpr double kMostReportBytes = 9007199254740992.0;  // 2^53: every byte count exact in a double
inline constexpr double kMostReportCount = 1e9;                 // instructions, stages

// The number at `path` under `doc` (a report of `source`, `where` the path's prefix such as
// "ranks[3]"): present, a number from 0 to `most`, or an InputError naming the file and the field.
double report_number(const nlohmann::json& doc, const std::string& source, const std::string& where,
                     std::initializer_list<const char*> path, double most);

// Throws InputError naming both documents and the first of kPlanIdentityKeys they differ in (or
// that one of them lacks).
void require_same_plan(const nlohmann::json& a, const std::string& a_source, const nlohmann::json& b,
                       const std::string& b_source);

// Throws InputError (naming the file and the field) when a report is not a prediction or a
// measurement of kReportFormatVersion, its ranks are not its mesh's (one per rank, in order), a
// measurement ran no step, or a value is out of range; and (naming both files) when the two
// describe different plans.
Comparison compare_reports(const nlohmann::json& predicted, const std::string& predicted_source,
                           const nlohmann::json& measured, const std::string& measured_source);

nlohmann::ordered_json comparison_to_json(const Comparison& comparison);

}  // namespace splitbrain::tools
