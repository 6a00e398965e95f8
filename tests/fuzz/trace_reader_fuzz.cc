// libFuzzer target: the Chrome traces `compare` reads (tools/comparison/trace_reader.h), and what
// it makes of them: the instruction differences (trace_differences.h) and the merged trace
// (merged_trace.h). The input is the measured trace; the predicted one is the same document named
// a predicted trace, and the prediction both must belong to has the input's own plan identity and
// two ranks, so the fuzzer gets past the identity check to the events.
#include <cmath>
#include <cstdlib>

#include "model/json_object_reader.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/comparison/comparison.h"
#include "tools/comparison/merged_trace.h"
#include "tools/comparison/trace_differences.h"
#include "tools/comparison/trace_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  using tools::TraceKind;
  return fuzz::read_or_refuse([&] {
    const nlohmann::json measured = parse_json_strict(fuzz::as_text(data, size), "measured-trace.json");
    nlohmann::json predicted = measured;
    nlohmann::json prediction = {{"ranks", nlohmann::json::array({{{"rank", 0}}, {{"rank", 1}}})}};
    if (measured.is_object()) {
      predicted["format"] = tools::trace_format_name(TraceKind::predicted);
      predicted.erase(tools::kInstructionMediansKey);
      for (const char* key : tools::kPlanIdentityKeys) {
        if (measured.contains(key)) prediction[key] = measured.at(key);
      }
    }
    tools::check_trace_of_plan(predicted, "predicted-trace.json", TraceKind::predicted, prediction, "predicted.json");
    tools::check_trace_of_plan(measured, "measured-trace.json", TraceKind::measured, prediction, "predicted.json");
    const auto differences =
        tools::instruction_differences(predicted, "predicted-trace.json", measured, "measured-trace.json");
    for (const tools::InstructionDifference& d : differences) {
      // A difference that is not a finite number of seconds is a finding too: compare prints it.
      if (!std::isfinite(d.difference_seconds())) std::abort();
    }
    (void)tools::instruction_differences_to_json(differences).dump();
    (void)tools::median_steps_of(measured, "measured-trace.json");
    (void)tools::merge_traces(predicted, "predicted-trace.json", measured, "measured-trace.json").dump();
  });
}
