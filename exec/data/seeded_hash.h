#pragma once
// Counter-based randomness for the data pipeline: every value is a pure function of (seed, keys),
// so any rank computes any sample or any epoch's order alone, in any order, with the same result
// on every platform (the <random> distributions are implementation-defined, so they are avoided).

#include <cstdint>
#include <initializer_list>

namespace splitbrain::exec::data {

// SplitMix64's finaliser (Steele, Lea, Flood 2014): a bijection on 64 bits with full avalanche.
constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Hash of a seed and a list of keys; folding each key through mix64 keeps (a, b) and (b, a) apart.
constexpr uint64_t hash_keys(uint64_t seed, std::initializer_list<uint64_t> keys) {
  uint64_t h = mix64(seed);
  for (const uint64_t key : keys) h = mix64(h ^ key);
  return h;
}

// Uniform float in [-1, 1) from the top 24 bits of a hash (exactly representable in float).
constexpr float unit_symmetric(uint64_t h) { return static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f; }

}  // namespace splitbrain::exec::data
