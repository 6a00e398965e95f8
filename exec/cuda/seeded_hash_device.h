#pragma once
// exec/data/seeded_hash.h's mix64 (SplitMix64's finaliser) callable from device code, bit for
// bit the same, so a GPU dropout mask equals the CPU one. The (seed, step, layer) key is hashed
// on the host with data::hash_keys; only the per-element mix runs on the device. Compiles as
// plain C++ too (the qualifiers vanish), so a host test can compare it with data::mix64.

#include <cstdint>

#if defined(__CUDACC__)
#define SB_HOST_DEVICE __host__ __device__
#else
#define SB_HOST_DEVICE
#endif

namespace splitbrain::exec::cuda {

SB_HOST_DEVICE constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// cpu::dropout_keeps's test: keep iff the top 32 bits of mix64(stream ^ index) reach the
// threshold p * 2^32.
SB_HOST_DEVICE constexpr bool dropout_keeps(uint64_t stream, uint64_t threshold, uint64_t index) {
  return (mix64(stream ^ index) >> 32) >= threshold;
}

}  // namespace splitbrain::exec::cuda
