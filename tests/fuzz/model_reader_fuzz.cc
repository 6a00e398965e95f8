// libFuzzer target: a model file (model/model_json.h).
#include "model/json_object_reader.h"
#include "model/model_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse([&] {
    model::model_from_json(parse_json_strict(fuzz::as_text(data, size), "fuzz.json", throwing<ModelError>),
                           "fuzz.json");
  });
}
