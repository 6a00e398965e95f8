// libFuzzer target: a plan file (plans/plan_json.h); its model is a zoo name or a file next to it.
#include "plans/plan_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse([&] { plans::plan_from_text(fuzz::as_text(data, size), "fuzz.json", "/nonexistent"); });
}
