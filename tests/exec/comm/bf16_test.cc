// The bf16 rounding the CPU backend emulates (exec/comm/bf16.h) against known values. The expected
// bits are PyTorch 1.13's (torch.tensor([x]).to(torch.bfloat16) on the CPU) for the same fp32 bits.

#include "exec/comm/bf16.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

namespace splitbrain::exec::comm {
namespace {

float from_bits(uint32_t bits) { return std::bit_cast<float>(bits); }

TEST(Bf16, RoundsToNearestWithTiesToEven) {
  EXPECT_EQ(bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(bf16_bits(from_bits(0x3f808000)), 0x3f80);  // halfway, the even neighbour below
  EXPECT_EQ(bf16_bits(from_bits(0x3f818000)), 0x3f82);  // halfway, the even neighbour above
  EXPECT_EQ(bf16_bits(from_bits(0x3f808001)), 0x3f81);  // just past halfway
  EXPECT_EQ(bf16_bits(from_bits(0x3f807fff)), 0x3f80);  // just short of it
  EXPECT_EQ(bf16_bits(0.1f), 0x3dcd);
  EXPECT_EQ(bf16_bits(-0.1f), 0xbdcd);
  EXPECT_EQ(bf16_bits(from_bits(0x80018000)), 0x8002);  // the sign is kept
}

TEST(Bf16, KeepsInfinitiesAndOverflowsToThem) {
  EXPECT_EQ(bf16_bits(INFINITY), 0x7f80);
  EXPECT_EQ(bf16_bits(-INFINITY), 0xff80);
  EXPECT_EQ(bf16_bits(from_bits(0x7f7fffff)), 0x7f80);  // fp32's largest rounds past bf16's
  EXPECT_EQ(bf16_bits(from_bits(0x7f7f0000)), 0x7f7f);  // bf16's largest finite stays
  EXPECT_EQ(bf16_bits(from_bits(0x7f7f7fff)), 0x7f7f);
}

TEST(Bf16, KeepsNanANan) {
  // Whatever the payload (a signalling NaN, the largest payload): rounding must not carry it into
  // an infinity.
  for (const uint32_t bits : {0x7fc00000U, 0x7f800001U, 0x7fffffffU, 0xffc00000U}) {
    const float rounded = round_to_bf16(from_bits(bits));
    EXPECT_TRUE(std::isnan(rounded)) << std::hex << bits;
    EXPECT_EQ(std::signbit(rounded), std::signbit(from_bits(bits))) << std::hex << bits;
  }
}

TEST(Bf16, RoundsSubnormals) {
  EXPECT_EQ(bf16_bits(from_bits(0x00000001)), 0x0000);  // fp32's smallest rounds to zero
  EXPECT_EQ(bf16_bits(from_bits(0x00008000)), 0x0000);  // halfway to bf16's smallest: even is 0
  EXPECT_EQ(bf16_bits(from_bits(0x00008001)), 0x0001);  // bf16's smallest subnormal, 2^-133
  EXPECT_EQ(bf16_bits(from_bits(0x00018000)), 0x0002);
  EXPECT_EQ(bf16_value(0x0001), std::ldexp(1.0f, -133));
  EXPECT_EQ(bf16_bits(from_bits(0x007fffff)), 0x0080);  // the largest subnormal rounds to the smallest normal
}

TEST(Bf16, RoundingIsIdempotentAndPackingExact) {
  std::vector<float> values{1.0f, 0.1f, -3.14159f, 1e-30f, 6.5e4f, 1e38f, -0.0f};
  round_to_bf16(values);
  std::vector<float> again = values;
  round_to_bf16(again);
  EXPECT_EQ(again, values);
  std::vector<uint16_t> bits(values.size());
  pack_bf16(values, bits);
  std::vector<float> unpacked(values.size());
  unpack_bf16(bits, unpacked);
  EXPECT_EQ(unpacked, values);
  EXPECT_EQ(values[0], 1.0f);
  EXPECT_EQ(values[1], from_bits(0x3dcd0000));
  std::vector<uint16_t> short_bits(2);
  EXPECT_THROW(pack_bf16(values, short_bits), std::invalid_argument);
}

}  // namespace
}  // namespace splitbrain::exec::comm
