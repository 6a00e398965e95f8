#pragma once
// Helpers for the CUDA kernel tests: each runs the CUDA kernel and its CPU twin on the same seeded
// random inputs and compares the results elementwise (tests/exec/kernel_test_util.h's tolerance,
// relative to the CPU result's scale). The CPU kernels are themselves checked against float64
// loops in tests/exec/, so agreement here carries that check over to the GPU.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cuda::testing {

using cpu::testing::random_floats;

// fp32 on both sides, different summation orders: 1e-4 of the result's scale.
constexpr double kRelativeTolerance = 1e-4;

inline void expect_matches_cpu(const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what) {
  cpu::testing::expect_close(gpu, cpu::testing::to_double(cpu), kRelativeTolerance, what);
}

inline std::size_t count(int64_t elements) { return static_cast<std::size_t>(elements); }

}  // namespace splitbrain::exec::cuda::testing
