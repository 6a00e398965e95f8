// libFuzzer target: a cluster file (sim/cluster_json.h).
#include "sim/cluster_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse([&] { sim::parse_cluster_json(fuzz::as_text(data, size), "fuzz.json"); });
}
