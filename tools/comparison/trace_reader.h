#pragma once
// The Chrome traces `compare` reads: the predicted one (`simulate --trace`) and the measured one
// (`run --trace`). Each names what it is ("format": splitbrain-predicted-trace or
// splitbrain-measured-trace, "version") and the plan it is of (the reports' kPlanIdentityKeys,
// comparison.h), so a trace of another plan, or the two given the wrong way round, is refused
// rather than compared. Every field of an event that compare reads is checked here, in
// trace_events, which the readers of events (trace_differences.h, merged_trace.h) go through.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace splitbrain::tools {

enum class TraceKind { predicted, measured };

inline constexpr int64_t kTraceFormatVersion = 1;
// Process ids (ranks) a trace may hold: the merged trace moves the measured ones past them.
inline constexpr int64_t kMostTraceRanks = 100000;
// The longest time an event may start at or last: about 31 years, as kMostReportSeconds.
inline constexpr double kMostTraceMicroseconds = 1e15;

std::string_view trace_format_name(TraceKind kind);  // "splitbrain-predicted-trace", ...

// `trace` named as a trace of `kind` of the plan `report` (the prediction or the measurement the
// same command writes) is of: format, version and the report's kPlanIdentityKeys.
nlohmann::json named_trace(nlohmann::json trace, TraceKind kind, const nlohmann::ordered_json& report);

// The trace's traceEvents, every event checked: an object with a string `ph` and `name`, an
// integer `pid` (a rank below kMostTraceRanks), an integer `tid` >= 0 where present, `ts` and
// `dur` numbers of microseconds from 0 to kMostTraceMicroseconds where present (`dur` always on a
// complete event, ph "X"), `args` an object with a string `name` where present. Throws InputError
// naming `source` and the event's field.
const nlohmann::json& trace_events(const nlohmann::json& trace, const std::string& source);

// Checks that `trace` (of `source`) is a trace of `kind` of the plan of the prediction report
// `prediction` (which compare_reports read first): its format names the kind (a trace of the
// other kind is named as swapped; one without a format as unnamed, to be written again), its
// version is kTraceFormatVersion, its plan identity is the prediction's, each event is well formed
// (trace_events) and of one of the prediction's ranks, and a measured trace's medians (trace_
// differences.h) are one object per rank over a count of steps. Throws InputError naming the
// file and the field.
void check_trace_of_plan(const nlohmann::json& trace, const std::string& source, TraceKind kind,
                         const nlohmann::json& prediction, const std::string& prediction_source);

}  // namespace splitbrain::tools
