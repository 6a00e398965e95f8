#include "exec/cpu/adaptive_avgpool.h"

#include <algorithm>

#include "exec/cpu/dnnl_check.h"

namespace splitbrain::exec::cpu {

namespace {

int64_t bin_begin(int64_t i, int64_t in, int64_t out) { return i * in / out; }
int64_t bin_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

void check(const AdaptiveAvgPoolShape& s) {
  if (s.batch <= 0 || s.channels <= 0 || s.height <= 0 || s.width <= 0 || s.out_height <= 0 || s.out_width <= 0)
    throw KernelArgumentError("adaptive_avgpool: every dim must be positive");
}

// Calls f(output index in the plane, bin rows [h0, h1), bin columns [w0, w1), 1 / bin size) per bin.
template <typename F>
void for_each_bin(const AdaptiveAvgPoolShape& s, F&& f) {
  for (int64_t oh = 0; oh < s.out_height; ++oh) {
    const int64_t h0 = bin_begin(oh, s.height, s.out_height), h1 = bin_end(oh, s.height, s.out_height);
    for (int64_t ow = 0; ow < s.out_width; ++ow) {
      const int64_t w0 = bin_begin(ow, s.width, s.out_width), w1 = bin_end(ow, s.width, s.out_width);
      const float inv = 1.0f / static_cast<float>((h1 - h0) * (w1 - w0));
      f(oh * s.out_width + ow, h0, h1, w0, w1, inv);
    }
  }
}

}  // namespace

void adaptive_avgpool_forward(const AdaptiveAvgPoolShape& s, const float* x, float* y) {
  check(s);
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

void adaptive_avgpool_backward(const AdaptiveAvgPoolShape& s, const float* dy, float* dx) {
  check(s);
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

}  // namespace splitbrain::exec::cpu
