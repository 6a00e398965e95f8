#pragma once
// Helpers for the CUDA kernel tests: each runs the CUDA kernel and its CPU twin on the same seeded
// random inputs and compares the results elementwise (tests/exec/kernel_test_util.h's tolerance,
// relative to the CPU result's scale). The CPU kernels are themselves checked against float64
// loops in tests/exec/, so agreement here carries that check over to the GPU.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "exec/cuda/cuda_check.h"
#include "exec/cuda/device_buffer.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cuda::testing {

using cpu::testing::random_floats;

// fp32 on both sides, different summation orders: 1e-4 of the result's scale.
constexpr double kRelativeTolerance = 1e-4;

inline void expect_matches_cpu(const std::vector<float>& gpu, const std::vector<float>& cpu, const std::string& what) {
  cpu::testing::expect_close(gpu, cpu::testing::to_double(cpu), kRelativeTolerance, what);
}

inline std::size_t count(int64_t elements) { return static_cast<std::size_t>(elements); }

// A copy of host values in GPU memory: the CUDA kernels read and write device memory only (as the
// runtime's arrays are), so a test puts its inputs and outputs here. The copies are synchronous
// and wait for the whole device, since the kernels return before their work on the context's
// (non-blocking) stream is done.
template <typename T>
class OnDevice {
 public:
  explicit OnDevice(const std::vector<T>& values) : buffer_(values.size() * sizeof(T)), elements_(values.size()) {
    SB_CUDA_CHECK(cudaDeviceSynchronize());
    if (!values.empty())
      SB_CUDA_CHECK(cudaMemcpy(buffer_.data(), values.data(), buffer_.bytes(), cudaMemcpyHostToDevice));
  }
  // `elements` zeros: an output the kernel overwrites or accumulates into.
  explicit OnDevice(std::size_t elements) : OnDevice(std::vector<T>(elements)) {}

  T* get() const { return buffer_.as<T>(); }
  // Waits for every kernel queued so far, then copies the values back.
  std::vector<T> host() const {
    std::vector<T> values(elements_);
    SB_CUDA_CHECK(cudaDeviceSynchronize());
    if (!values.empty())
      SB_CUDA_CHECK(cudaMemcpy(values.data(), buffer_.data(), buffer_.bytes(), cudaMemcpyDeviceToHost));
    return values;
  }

 private:
  DeviceBuffer buffer_;
  std::size_t elements_;
};

}  // namespace splitbrain::exec::cuda::testing
