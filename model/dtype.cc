#include "model/dtype.h"

#include <fmt/format.h>

#include "model/errors.h"

namespace splitbrain::model {

int64_t bytes_per_element(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return 4;
    case DType::fp16:
      return 2;
    case DType::bf16:
      return 2;
  }
  throw std::logic_error("unhandled DType");
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return "fp32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
  }
  throw std::logic_error("unhandled DType");
}

DType parse_dtype(std::string_view text) {
  if (text == "fp32") return DType::fp32;
  if (text == "fp16") return DType::fp16;
  if (text == "bf16") return DType::bf16;
  throw InputError(fmt::format("unknown dtype '{}': expected fp32, fp16 or bf16", text));
}

}  // namespace splitbrain::model
