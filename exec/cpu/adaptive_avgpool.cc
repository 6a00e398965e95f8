#include "exec/cpu/adaptive_avgpool.h"

#include <algorithm>

#include "exec/kernels/shape_checks.h"
#include "exec/cpu/cpu_kernel_factory.h"

namespace splitbrain::exec::cpu {

namespace {

// Calls f(output index in the plane, bin rows [h0, h1), bin columns [w0, w1), 1 / bin size) per bin.
template <typename F>
void for_each_bin(const kernels::AdaptiveAvgPoolShape& s, F&& f) {
  using kernels::adaptive_bin_begin;
  using kernels::adaptive_bin_end;
  for (int64_t oh = 0; oh < s.out_height; ++oh) {
    const int64_t h0 = adaptive_bin_begin(oh, s.height, s.out_height),
                  h1 = adaptive_bin_end(oh, s.height, s.out_height);
    for (int64_t ow = 0; ow < s.out_width; ++ow) {
      const int64_t w0 = adaptive_bin_begin(ow, s.width, s.out_width), w1 = adaptive_bin_end(ow, s.width, s.out_width);
      const float inv = 1.0f / static_cast<float>((h1 - h0) * (w1 - w0));
      f(oh * s.out_width + ow, h0, h1, w0, w1, inv);
    }
  }
}

}  // namespace

AdaptiveAvgPoolKernel::AdaptiveAvgPoolKernel(const kernels::AdaptiveAvgPoolShape& shape)
    : shape_(kernels::checked(shape)) {}

void AdaptiveAvgPoolKernel::forward(const float* x, float* y) {
  const auto& s = shape_;
  const int64_t in_plane = s.height * s.width, out_plane = s.out_height * s.out_width;
  for (int64_t p = 0; p < s.batch * s.channels; ++p) {
    const float* xp = x + p * in_plane;
    float* yp = y + p * out_plane;
    for_each_bin(s, [&](int64_t o, int64_t h0, int64_t h1, int64_t w0, int64_t w1, float inv) {
      float sum = 0.0f;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) sum += xp[h * s.width + w];
      yp[o] = sum * inv;
    });
  }
}

void AdaptiveAvgPoolKernel::backward(const float* dy, float* dx) {
  const auto& s = shape_;
  const int64_t in_plane = s.height * s.width, out_plane = s.out_height * s.out_width;
  std::fill(dx, dx + s.batch * s.channels * in_plane, 0.0f);
  for (int64_t p = 0; p < s.batch * s.channels; ++p) {
    float* dxp = dx + p * in_plane;
    const float* dyp = dy + p * out_plane;
    for_each_bin(s, [&](int64_t o, int64_t h0, int64_t h1, int64_t w0, int64_t w1, float inv) {
      const float g = dyp[o] * inv;
      for (int64_t h = h0; h < h1; ++h)
        for (int64_t w = w0; w < w1; ++w) dxp[h * s.width + w] += g;
    });
  }
}

std::unique_ptr<kernels::AdaptiveAvgPoolKernel> make_adaptive_avgpool(CpuContext& /*context*/,
                                                                      const kernels::AdaptiveAvgPoolShape& shape) {
  return std::make_unique<AdaptiveAvgPoolKernel>(shape);
}

}  // namespace splitbrain::exec::cpu
