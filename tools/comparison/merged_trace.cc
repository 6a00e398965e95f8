#include "tools/comparison/merged_trace.h"

#include <fmt/format.h>

#include "tools/comparison/trace_reader.h"

namespace splitbrain::tools {
namespace {

// Process ids of the measured trace are moved past every predicted one so the two never mix.
constexpr int kMeasuredPidOffset = kMostTraceRanks;

// Copies every event, renaming processes "<label> ..." and ordering rank r's predicted process
// just before its measured one.
void append(nlohmann::ordered_json& out, const nlohmann::json& events, const char* label, int pid_offset, int order) {
  for (const nlohmann::json& event : events) {
    nlohmann::ordered_json copy = event;
    const int pid = event.value("pid", 0);
    copy["pid"] = pid + pid_offset;
    if (event.value("ph", "") == "M" && event.value("name", "") == "process_name") {
      const std::string name = event.contains("args") ? event.at("args").value("name", "") : "";
      copy["args"]["name"] = fmt::format("{}: {}", label, name);
      out.push_back({{"name", "process_sort_index"},
                     {"ph", "M"},
                     {"pid", pid + pid_offset},
                     {"args", {{"sort_index", 2 * pid + order}}}});
    }
    out.push_back(std::move(copy));
  }
}

}  // namespace

nlohmann::ordered_json merge_traces(const nlohmann::json& predicted, const std::string& predicted_source,
                                    const nlohmann::json& measured, const std::string& measured_source) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  append(events, trace_events(predicted, predicted_source), "predicted", 0, 0);
  append(events, trace_events(measured, measured_source), "measured", kMeasuredPidOffset, 1);
  return {{"displayTimeUnit", "ms"}, {"traceEvents", std::move(events)}};
}

}  // namespace splitbrain::tools
