// libFuzzer target: the reports `compare` reads (tools/comparison/comparison.h). The input is
// the measurement; the prediction is the same document with the prediction's format, so the
// fields compare reads are the fuzzer's on both sides.
#include "model/json_object_reader.h"
#include "tests/fuzz/fuzz_input.h"
#include "tools/comparison/comparison.h"
#include "tools/comparison/host_wait_comparison.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse([&] {
    const nlohmann::json measured = parse_json_strict(fuzz::as_text(data, size), "measured.json");
    nlohmann::json predicted = measured;
    if (predicted.is_object()) predicted["format"] = "splitbrain-prediction";
    const tools::Comparison comparison = tools::compare_reports(predicted, "predicted.json", measured, "measured.json");
    (void)tools::comparison_to_json(comparison).dump();
    const tools::HostWaitComparison waits =
        tools::compare_host_waits(predicted, "predicted.json", measured, "measured.json");
    (void)tools::host_wait_comparison_to_json(waits).dump();
  });
}
