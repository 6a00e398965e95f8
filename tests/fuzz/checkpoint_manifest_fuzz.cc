// libFuzzer target: a checkpoint's manifest (exec/runtime/checkpoint_manifest.h).
#include "exec/runtime/checkpoint_manifest.h"
#include "model/json_object_reader.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse([&] {
    const exec::CheckpointManifest manifest =
        exec::manifest_from_json(parse_json_strict(fuzz::as_text(data, size), "checkpoint.json"), "checkpoint.json");
    // What a resume does with it: compare it with a run, rank by rank.
    for (size_t rank = 0; rank < manifest.ranks.size() && rank < 64; ++rank) {
      (void)exec::manifest_mismatch(manifest, manifest, static_cast<int>(rank));
    }
  });
}
