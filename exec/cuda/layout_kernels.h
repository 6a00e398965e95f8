#pragma once
// Own kernels that move NCHW planes between a tensor and a padded copy of it: explicit padding
// where cuDNN's symmetric padding cannot express the CPU kernels' per-side padding (height-split
// layers pad only at the global image's edges). Device pointers; queued on `stream`.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace splitbrain::exec::cuda {

// Geometry of `planes` planes of height x width placed at (top, left) inside padded_h x padded_w
// planes; the placed plane must fit.
struct PlanePadding {
  int64_t planes = 1;
  int64_t height = 1;
  int64_t width = 1;
  int64_t top = 0;
  int64_t left = 0;
  int64_t padded_h = 1;
  int64_t padded_w = 1;
};

// padded = x inside a border of `fill` (every element of `padded` is written).
void pad_planes(cudaStream_t stream, const PlanePadding& geometry, const float* x, float fill, float* padded);
// x = the placed window of padded (the border is dropped).
void crop_planes(cudaStream_t stream, const PlanePadding& geometry, const float* padded, float* x);

}  // namespace splitbrain::exec::cuda
