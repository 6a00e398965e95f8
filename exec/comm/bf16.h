#pragma once
// bfloat16 as the executor emulates it on the CPU: an fp32 value rounded to the nearest bf16
// (ties to even, the rounding of PyTorch's and the GPUs' fp32 -> bf16 conversion), kept in fp32
// storage for the kernels, and packed to its 16 bits where it crosses MPI, so a bf16 plan's
// messages carry the 2-byte elements the plan counts. NaN stays NaN (quiet), infinities stay
// infinite, values past bf16's largest finite round to infinity, subnormals round like any
// other value (bf16 has fp32's exponent range).

#include <cstdint>
#include <span>

namespace splitbrain::exec::comm {

// The bits of `value` rounded to the nearest bf16 (the high half of its fp32 bits, rounded).
uint16_t bf16_bits(float value);
// The fp32 value of bf16 bits (exact).
float bf16_value(uint16_t bits);
// `value` rounded to the nearest bf16, as an fp32.
float round_to_bf16(float value);
// Every element of `values` rounded to the nearest bf16, in place.
void round_to_bf16(std::span<float> values);

// `values` rounded and packed, one 16-bit word per element; `bits` holds values.size() words.
void pack_bf16(std::span<const float> values, std::span<uint16_t> bits);
// The inverse (exact): `values` holds bits.size() elements.
void unpack_bf16(std::span<const uint16_t> bits, std::span<float> values);

}  // namespace splitbrain::exec::comm
