#pragma once
// Element types of activations, weights and gradients.

#include <cstdint>
#include <string>
#include <string_view>

namespace splitbrain::model {

enum class DType { fp32, fp16, bf16 };

// Bytes of one element: 4 for fp32, 2 for fp16 and bf16.
int64_t bytes_per_element(DType dtype);
std::string_view dtype_name(DType dtype);
// Parses "fp32", "fp16", "bf16"; throws InputError naming the accepted values otherwise.
DType parse_dtype(std::string_view text);

}  // namespace splitbrain::model
