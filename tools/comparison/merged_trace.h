#pragma once
// One Chrome trace (chrome://tracing, Perfetto) with the predicted timeline (`simulate --trace`)
// and the measured one (`run --trace`) side by side: for every rank, its predicted process and
// then its measured process, each keeping its compute and communication threads.

#include <string>

#include <nlohmann/json.hpp>

namespace splitbrain::tools {

// Throws InputError naming the source and the event when a trace's events are not well formed
// (trace_reader.h's trace_events).
nlohmann::ordered_json merge_traces(const nlohmann::json& predicted, const std::string& predicted_source,
                                    const nlohmann::json& measured, const std::string& measured_source);

}  // namespace splitbrain::tools
