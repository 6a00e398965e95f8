// Max, average and adaptive average pooling against float64 loops written the PyTorch way
// (average pooling divides by the whole window, padded zeros included).

#include "exec/cpu/pooling.h"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "exec/cpu/adaptive_avgpool.h"
#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::AdaptiveAvgPoolShape;
using kernels::KernelArgumentError;
using kernels::Pool2dShape;
using kernels::PoolKind;
using testing::expect_close;
using testing::random_floats;

struct PoolCase {
  PoolKind kind;
  Pool2dShape shape;
};

// Forward and backward in one nest: each output visits its window; max routes its gradient to
// the first maximum (oneDNN's and PyTorch's tie rule).
void reference_pool(const PoolCase& c, const std::vector<float>& x, const std::vector<float>& dy,
                    std::vector<double>& y, std::vector<double>& dx) {
  const Pool2dShape& s = c.shape;
  const int64_t oh_n = s.out_height(), ow_n = s.out_width();
  y.assign(dy.size(), 0.0);
  dx.assign(x.size(), 0.0);
  for (int64_t p = 0; p < s.batch * s.channels; ++p)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const auto yi = static_cast<std::size_t>((p * oh_n + oh) * ow_n + ow);
        double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
        std::size_t best_i = 0;
        std::vector<std::size_t> inside;
        for (int64_t kh = 0; kh < s.kernel_h; ++kh)
          for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
            const int64_t ih = oh * s.stride_h - s.pad_top + kh, iw = ow * s.stride_w - s.pad_left + kw;
            if (ih < 0 || ih >= s.height || iw < 0 || iw >= s.width) continue;
            const auto xi = static_cast<std::size_t>((p * s.height + ih) * s.width + iw);
            inside.push_back(xi);
            sum += x[xi];
            if (x[xi] > best) best = x[xi], best_i = xi;
          }
        if (c.kind == PoolKind::max) {
          y[yi] = best;
          dx[best_i] += dy[yi];
        } else {
          const double window = static_cast<double>(s.kernel_h * s.kernel_w);
          y[yi] = sum / window;
          for (std::size_t xi : inside) dx[xi] += dy[yi] / window;
        }
      }
}

class PoolingCase : public ::testing::TestWithParam<PoolCase> {};

TEST_P(PoolingCase, MatchesFloat64Reference) {
  const PoolCase c = GetParam();
  const Pool2dShape& s = c.shape;
  CpuContext context;
  Pool2dKernel kernel(context, c.kind, s);
  const auto x = random_floats(static_cast<std::size_t>(s.batch * s.channels * s.height * s.width), 21);
  const auto dy = random_floats(static_cast<std::size_t>(s.batch * s.channels * s.out_height() * s.out_width()), 22);
  std::vector<double> y_ref, dx_ref;
  reference_pool(c, x, dy, y_ref, dx_ref);
  std::vector<float> y(dy.size()), dx(x.size());
  std::vector<unsigned char> workspace(kernel.workspace_bytes());
  EXPECT_EQ(kernel.workspace_bytes() > 0, c.kind == PoolKind::max);
  kernel.forward(x.data(), y.data(), workspace.data());
  kernel.backward(dy.data(), workspace.data(), dx.data());
  expect_close(y, y_ref, 1e-5, "y");
  expect_close(dx, dx_ref, 1e-5, "dx");
}

Pool2dShape pool(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t stride, int64_t pad) {
  Pool2dShape s;
  s.batch = n, s.channels = c, s.height = h, s.width = w, s.kernel_h = s.kernel_w = k;
  s.stride_h = s.stride_w = stride;
  s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = pad;
  return s;
}

Pool2dShape asymmetric(Pool2dShape s) {
  s.pad_top = 0;  // a height-split layer: halo rows instead of padding on top
  s.pad_bottom = 1;
  return s;
}

Pool2dShape ceil_mode(Pool2dShape s) {
  s.ceil_mode = true;
  return s;
}

INSTANTIATE_TEST_SUITE_P(Shapes, PoolingCase,
                         ::testing::Values(PoolCase{PoolKind::max, pool(2, 3, 8, 8, 2, 2, 0)},
                                           PoolCase{PoolKind::max, pool(1, 4, 7, 9, 3, 2, 1)},
                                           PoolCase{PoolKind::max, ceil_mode(pool(2, 2, 7, 7, 2, 2, 0))},
                                           PoolCase{PoolKind::max, asymmetric(pool(1, 3, 6, 5, 3, 1, 1))},
                                           PoolCase{PoolKind::average, pool(2, 3, 8, 8, 2, 2, 0)},
                                           PoolCase{PoolKind::average, pool(1, 4, 7, 9, 3, 2, 1)},
                                           PoolCase{PoolKind::average, asymmetric(pool(2, 2, 5, 6, 3, 2, 1))},
                                           PoolCase{PoolKind::average, pool(3, 5, 11, 5, 3, 3, 1)}));

TEST(Pooling, AverageRejectsOverhangingCeilWindow) {
  CpuContext context;
  EXPECT_THROW(Pool2dKernel(context, PoolKind::average, ceil_mode(pool(1, 1, 7, 7, 2, 2, 0))), KernelArgumentError);
}

// Adaptive average pooling with PyTorch's bins [floor(i H / o), ceil((i + 1) H / o)).
TEST(AdaptiveAvgPool, MatchesFloat64ReferenceIncludingUnevenBins) {
  for (const AdaptiveAvgPoolShape s :
       {AdaptiveAvgPoolShape{2, 3, 7, 5, 1, 1}, AdaptiveAvgPoolShape{1, 2, 7, 10, 3, 4},
        AdaptiveAvgPoolShape{2, 2, 4, 4, 4, 4}, AdaptiveAvgPoolShape{1, 1, 5, 3, 7, 6}}) {
    const auto x = random_floats(static_cast<std::size_t>(s.batch * s.channels * s.height * s.width), 31);
    const auto dy = random_floats(static_cast<std::size_t>(s.batch * s.channels * s.out_height * s.out_width), 32);
    std::vector<double> y_ref(dy.size(), 0.0), dx_ref(x.size(), 0.0);
    for (int64_t p = 0; p < s.batch * s.channels; ++p)
      for (int64_t oh = 0; oh < s.out_height; ++oh)
        for (int64_t ow = 0; ow < s.out_width; ++ow) {
          const int64_t h0 = oh * s.height / s.out_height, h1 = ((oh + 1) * s.height + s.out_height - 1) / s.out_height;
          const int64_t w0 = ow * s.width / s.out_width, w1 = ((ow + 1) * s.width + s.out_width - 1) / s.out_width;
          const auto yi = static_cast<std::size_t>((p * s.out_height + oh) * s.out_width + ow);
          const double count = static_cast<double>((h1 - h0) * (w1 - w0));
          for (int64_t h = h0; h < h1; ++h)
            for (int64_t w = w0; w < w1; ++w) {
              const auto xi = static_cast<std::size_t>((p * s.height + h) * s.width + w);
              y_ref[yi] += x[xi] / count;
              dx_ref[xi] += dy[yi] / count;
            }
        }
    std::vector<float> y(dy.size()), dx(x.size());
    AdaptiveAvgPoolKernel(s).forward(x.data(), y.data());
    AdaptiveAvgPoolKernel(s).backward(dy.data(), dx.data());
    expect_close(y, y_ref, 1e-5, "y");
    expect_close(dx, dx_ref, 1e-5, "dx");
  }
}

}  // namespace
}  // namespace splitbrain::exec::cpu
