#include "exec/comm/bf16.h"

#include <bit>
#include <stdexcept>

namespace splitbrain::exec::comm {

uint16_t bf16_bits(float value) {
  const auto bits = std::bit_cast<uint32_t>(value);
  // NaN: keep the sign and the top of the payload and set the quiet bit, so rounding cannot
  // carry a NaN's payload into the exponent and make it an infinity.
  if ((bits & 0x7f80'0000U) == 0x7f80'0000U && (bits & 0x007f'ffffU) != 0) {
    return static_cast<uint16_t>((bits >> 16) | 0x0040U);
  }
  // Round to nearest, ties to even: add 0x7fff plus the lowest kept bit, then truncate. A carry
  // out of the mantissa raises the exponent, which is right (and gives infinity past the largest
  // finite bf16).
  const uint32_t lowest_kept = (bits >> 16) & 1U;
  return static_cast<uint16_t>((bits + 0x7fffU + lowest_kept) >> 16);
}

float bf16_value(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

float round_to_bf16(float value) { return bf16_value(bf16_bits(value)); }

void round_to_bf16(std::span<float> values) {
  for (float& v : values) v = round_to_bf16(v);
}

void pack_bf16(std::span<const float> values, std::span<uint16_t> bits) {
  if (bits.size() != values.size()) throw std::invalid_argument("pack_bf16: the two spans differ in length");
  for (size_t i = 0; i < values.size(); ++i) bits[i] = bf16_bits(values[i]);
}

void unpack_bf16(std::span<const uint16_t> bits, std::span<float> values) {
  if (bits.size() != values.size()) throw std::invalid_argument("unpack_bf16: the two spans differ in length");
  for (size_t i = 0; i < bits.size(); ++i) values[i] = bf16_value(bits[i]);
}

}  // namespace splitbrain::exec::comm
