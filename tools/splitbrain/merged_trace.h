#pragma once
// One Chrome trace (chrome://tracing, Perfetto) with the predicted timeline (`simulate --trace`)
// and the measured one (`run --trace`) side by side: for every rank, its predicted process and
// then its measured process, each keeping its compute and communication threads.

#include <string>

#include <nlohmann/json.hpp>

namespace splitbrain::tools {

// A trace's traceEvents array. Throws InputError naming the source when there is none.
const nlohmann::json& trace_events(const nlohmann::json& trace, const std::string& source);

// Throws InputError naming the source when a trace has no traceEvents array.
nlohmann::ordered_json merge_traces(const nlohmann::json& predicted, const std::string& predicted_source,
                                    const nlohmann::json& measured, const std::string& measured_source);

}  // namespace splitbrain::tools
