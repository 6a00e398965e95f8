#include "tools/comparison/trace_reader.h"

#include <fmt/format.h>

#include <limits>

#include "model/errors.h"
#include "model/json_object_reader.h"
#include "tools/comparison/comparison.h"
#include "tools/comparison/trace_differences.h"

namespace splitbrain::tools {
namespace {

constexpr const char* kEventsKey = "traceEvents";

std::string event_field(const std::string& source, size_t index, std::string_view field) {
  return fmt::format("{}: {}[{}].{}", source, kEventsKey, index, field);
}

// An integer field of an event from 0 to `most`, where present (or always when `required`).
void check_integer(const nlohmann::json& event, const std::string& source, size_t index, const char* field,
                   int64_t most, bool required) {
  const auto value = event.find(field);
  if (value == event.end()) {
    if (required) throw InputError(fmt::format("{}: missing", event_field(source, index, field)));
    return;
  }
  if (!value->is_number_integer() || value->get<int64_t>() < 0 || value->get<int64_t>() > most) {
    throw InputError(fmt::format("{}: expected an integer from 0 to {}, got {}", event_field(source, index, field),
                                 most, describe_json(*value)));
  }
}

// A time field of an event in microseconds, where present (or always when `required`).
void check_microseconds(const nlohmann::json& event, const std::string& source, size_t index, const char* field,
                        bool required) {
  const auto value = event.find(field);
  if (value == event.end()) {
    if (required) {
      throw InputError(fmt::format("{}: missing (a complete event, ph X, needs how long it lasts)",
                                   event_field(source, index, field)));
    }
    return;
  }
  const double microseconds = value->is_number() ? value->get<double>() : -1.0;
  if (!(microseconds >= 0.0 && microseconds <= kMostTraceMicroseconds)) {  // NaN too
    throw InputError(fmt::format("{}: expected microseconds from 0 to {:g}, got {}", event_field(source, index, field),
                                 kMostTraceMicroseconds, describe_json(*value)));
  }
}

void check_string(const nlohmann::json& event, const std::string& source, size_t index, const char* field) {
  const auto value = event.find(field);
  if (value == event.end() || !value->is_string()) {
    throw InputError(fmt::format("{}: expected a string, got {}", event_field(source, index, field),
                                 value == event.end() ? "nothing" : describe_json(*value)));
  }
}

void check_event(const nlohmann::json& event, const std::string& source, size_t index) {
  if (!event.is_object()) {
    throw InputError(
        fmt::format("{}: {}[{}]: must be an object, got {}", source, kEventsKey, index, describe_json(event)));
  }
  check_string(event, source, index, "ph");
  check_string(event, source, index, "name");
  check_integer(event, source, index, "pid", kMostTraceRanks - 1, true);
  check_integer(event, source, index, "tid", std::numeric_limits<int>::max(), false);
  check_microseconds(event, source, index, "ts", false);
  check_microseconds(event, source, index, "dur", event.at("ph") == "X");
  if (const auto args = event.find("args"); args != event.end()) {
    if (!args->is_object()) {
      throw InputError(
          fmt::format("{}: expected an object, got {}", event_field(source, index, "args"), describe_json(*args)));
    }
    if (const auto name = args->find("name"); name != args->end() && !name->is_string()) {
      throw InputError(
          fmt::format("{}: expected a string, got {}", event_field(source, index, "args.name"), describe_json(*name)));
    }
  }
}

// The trace's own name for what it is, checked against the kind it is given as.
void check_format(const nlohmann::json& trace, const std::string& source, TraceKind kind) {
  const TraceKind other = kind == TraceKind::predicted ? TraceKind::measured : TraceKind::predicted;
  const auto format = trace.find("format");
  if (format == trace.end()) {
    throw InputError(fmt::format(
        "{}: format: missing, so nothing says which plan the trace is of (a trace from before splitbrain named its "
        "traces, or not one of its traces): write it again with {}",
        source, kind == TraceKind::predicted ? "simulate --trace" : "run --trace"));
  }
  if (*format == trace_format_name(other)) {
    throw InputError(
        fmt::format("{}: format: {} is a {} trace, given as the {} one: are --predicted-trace and "
                    "--measured-trace the wrong way round?",
                    source, trace_format_name(other), other == TraceKind::predicted ? "predicted" : "measured",
                    kind == TraceKind::predicted ? "predicted" : "measured"));
  }
  if (*format != trace_format_name(kind)) {
    throw InputError(
        fmt::format("{}: format: expected {}, got {}", source, trace_format_name(kind), describe_json(*format)));
  }
  const auto version = trace.find("version");
  if (version == trace.end() || !version->is_number_integer() || version->get<int64_t>() != kTraceFormatVersion) {
    throw InputError(fmt::format("{}: version: this splitbrain reads traces of version {}, not {}", source,
                                 kTraceFormatVersion, version == trace.end() ? "none" : describe_json(*version)));
  }
}

}  // namespace

std::string_view trace_format_name(TraceKind kind) {
  return kind == TraceKind::predicted ? "splitbrain-predicted-trace" : "splitbrain-measured-trace";
}

nlohmann::json named_trace(nlohmann::json trace, TraceKind kind, const nlohmann::ordered_json& report) {
  trace["format"] = trace_format_name(kind);
  trace["version"] = kTraceFormatVersion;
  for (const char* key : kPlanIdentityKeys) trace[key] = nlohmann::json(report.at(key));
  return trace;
}

const nlohmann::json& trace_events(const nlohmann::json& trace, const std::string& source) {
  if (!trace.is_object() || !trace.contains(kEventsKey) || !trace.at(kEventsKey).is_array()) {
    throw InputError(
        fmt::format("{}: {}: missing or not an array (is this a Chrome trace from splitbrain?)", source, kEventsKey));
  }
  const nlohmann::json& events = trace.at(kEventsKey);
  for (size_t i = 0; i < events.size(); ++i) check_event(events[i], source, i);
  return events;
}

void check_trace_of_plan(const nlohmann::json& trace, const std::string& source, TraceKind kind,
                         const nlohmann::json& prediction, const std::string& prediction_source) {
  if (!trace.is_object()) {
    throw InputError(fmt::format("{}: expected a JSON object (a Chrome trace from splitbrain), got {}", source,
                                 describe_json(trace)));
  }
  check_format(trace, source, kind);
  for (const char* key : kPlanIdentityKeys) {
    if (!trace.contains(key))
      throw InputError(fmt::format("{}: {}: missing, so the trace does not say which plan it is of", source, key));
  }
  require_same_plan(trace, source, prediction, prediction_source);
  const nlohmann::json& events = trace_events(trace, source);
  const auto ranks = prediction.find("ranks");
  if (ranks == prediction.end() || !ranks->is_array()) {
    throw InputError(fmt::format("{}: ranks: expected an array", prediction_source));
  }
  for (size_t i = 0; i < events.size(); ++i) {
    if (const auto pid = events[i].at("pid").get<int64_t>(); pid >= static_cast<int64_t>(ranks->size())) {
      throw InputError(fmt::format("{}: rank {} is not one of the plan's {} ranks", event_field(source, i, "pid"), pid,
                                   ranks->size()));
    }
  }
  if (median_steps_of(trace, source)) {
    const nlohmann::json& medians = trace.at(kInstructionMediansKey);
    if (!medians.is_array() || medians.size() != ranks->size()) {
      throw InputError(fmt::format("{}: {}: expected one object per rank of the plan ({})", source,
                                   kInstructionMediansKey, ranks->size()));
    }
  }
}

}  // namespace splitbrain::tools
