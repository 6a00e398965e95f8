// libFuzzer target: an ONNX model file (model/onnx/onnx_import.h), parsed, shape-inferred by ONNX
// and imported.
#include <string>

#include "model/onnx/onnx_import.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitbrain;
  return fuzz::read_or_refuse(
      [&] { model::import_onnx_model(std::string(fuzz::as_text(data, size)), "fuzz", "fuzz.onnx"); });
}
