// Conv2dKernel against a naive float64 convolution: forward, input gradient, weight and bias
// gradients, over strides, padding (symmetric and asymmetric), dilation, groups and bias on/off.

#include "exec/cpu/conv2d.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::Conv2dShape;
using kernels::KernelArgumentError;
using testing::expect_close;
using testing::random_floats;

struct ConvReference {
  std::vector<double> y, dx, dw, db;
};

// One loop nest visits every (output, input, weight) triple; forward and both gradients use it.
ConvReference reference_conv(const Conv2dShape& s, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& b, const std::vector<float>& dy) {
  const int64_t oh_n = s.out_height(), ow_n = s.out_width();
  const int64_t cg = s.in_channels / s.groups, kg = s.out_channels / s.groups;
  ConvReference r;
  r.y.assign(static_cast<std::size_t>(s.batch * s.out_channels * oh_n * ow_n), 0.0);
  r.dx.assign(x.size(), 0.0);
  r.dw.assign(w.size(), 0.0);
  r.db.assign(static_cast<std::size_t>(s.out_channels), 0.0);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t k = 0; k < s.out_channels; ++k)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const auto yi = static_cast<std::size_t>(((n * s.out_channels + k) * oh_n + oh) * ow_n + ow);
          const double g = dy[yi];
          double acc = s.bias ? b[static_cast<std::size_t>(k)] : 0.0;
          r.db[static_cast<std::size_t>(k)] += g;
          const int64_t group = k / kg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t kh = 0; kh < s.kernel_h; ++kh)
              for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
                const int64_t ih = oh * s.stride_h - s.pad_top + kh * s.dilation_h;
                const int64_t iw = ow * s.stride_w - s.pad_left + kw * s.dilation_w;
                if (ih < 0 || ih >= s.height || iw < 0 || iw >= s.width) continue;
                const auto xi =
                    static_cast<std::size_t>(((n * s.in_channels + group * cg + c) * s.height + ih) * s.width + iw);
                const auto wi = static_cast<std::size_t>(((k * cg + c) * s.kernel_h + kh) * s.kernel_w + kw);
                acc += static_cast<double>(x[xi]) * w[wi];
                r.dx[xi] += g * w[wi];
                r.dw[wi] += g * x[xi];
              }
          r.y[yi] = acc;
        }
  return r;
}

Conv2dShape make(int64_t n, int64_t c, int64_t h, int64_t w, int64_t k, int64_t kh, int64_t kw) {
  Conv2dShape s;
  s.batch = n, s.in_channels = c, s.height = h, s.width = w, s.out_channels = k, s.kernel_h = kh, s.kernel_w = kw;
  return s;
}

class Conv2dCase : public ::testing::TestWithParam<Conv2dShape> {};

TEST_P(Conv2dCase, MatchesFloat64Reference) {
  const Conv2dShape s = GetParam();
  CpuContext context;
  Conv2dKernel kernel(context, s);
  const auto x = random_floats(static_cast<std::size_t>(s.batch * s.in_channels * s.height * s.width), 1);
  const auto w =
      random_floats(static_cast<std::size_t>(s.out_channels * (s.in_channels / s.groups) * s.kernel_h * s.kernel_w), 2);
  const auto b = random_floats(static_cast<std::size_t>(s.out_channels), 3);
  const auto y_size = static_cast<std::size_t>(s.batch * s.out_channels * s.out_height() * s.out_width());
  const auto dy = random_floats(y_size, 4);
  const ConvReference ref = reference_conv(s, x, w, b, dy);

  std::vector<float> y(y_size), dx(x.size()), dw(w.size()), db(b.size());
  kernel.forward(x.data(), w.data(), b.data(), y.data());
  kernel.backward_data(dy.data(), w.data(), dx.data());
  kernel.backward_weights(x.data(), dy.data(), dw.data(), db.data());
  expect_close(y, ref.y, 1e-5, "y");
  expect_close(dx, ref.dx, 1e-5, "dx");
  expect_close(dw, ref.dw, 1e-5, "dw");
  if (s.bias) expect_close(db, ref.db, 1e-5, "db");
  // A second call reuses the cached primitives and must give the same bits.
  std::vector<float> again(y_size);
  kernel.forward(x.data(), w.data(), b.data(), again.data());
  EXPECT_EQ(again, y);
  // Accumulation adds a second micro-batch's gradients to what is there.
  kernel.accumulate_weight_gradients(x.data(), dy.data(), dw.data(), s.bias ? db.data() : nullptr);
  std::vector<double> twice_dw(ref.dw), twice_db(ref.db);
  for (double& v : twice_dw) v *= 2;
  for (double& v : twice_db) v *= 2;
  expect_close(dw, twice_dw, 1e-5, "dw accumulated");
  if (s.bias) expect_close(db, twice_db, 1e-5, "db accumulated");
  // A rank holding a partial sum adds no bias.
  if (s.bias) {
    std::vector<float> no_bias(y_size), expected(y_size);
    kernel.forward(x.data(), w.data(), nullptr, no_bias.data());
    const auto plane = static_cast<std::size_t>(s.out_height() * s.out_width());
    for (std::size_t i = 0; i < y_size; ++i)
      expected[i] = y[i] - b[i / plane % static_cast<std::size_t>(s.out_channels)];
    expect_close(no_bias, std::vector<double>(expected.begin(), expected.end()), 1e-5, "y without bias");
  }
}

Conv2dShape with(Conv2dShape s, auto&& edit) {
  edit(s);
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv2dCase,
    ::testing::Values(with(make(2, 3, 7, 6, 4, 3, 3),
                           [](Conv2dShape& s) { s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1; }),
                      with(make(1, 5, 9, 11, 3, 3, 3),
                           [](Conv2dShape& s) {
                             s.stride_h = s.stride_w = 2;
                             s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 1;
                             s.bias = false;
                           }),
                      with(make(2, 4, 8, 7, 6, 3, 2),
                           [](Conv2dShape& s) {
                             s.groups = 2;
                             s.dilation_h = 2;
                             s.pad_left = 1;
                           }),
                      // The halo case: no padding on top (rows arrive from the neighbour), one row at the bottom.
                      with(make(1, 3, 6, 5, 2, 3, 3),
                           [](Conv2dShape& s) { s.pad_bottom = s.pad_left = s.pad_right = 1; }),
                      with(make(2, 4, 5, 5, 4, 3, 3),
                           [](Conv2dShape& s) {
                             s.groups = 4;  // depthwise
                             s.pad_top = 2;
                             s.stride_w = 2;
                           }),
                      with(make(3, 5, 7, 7, 8, 1, 1), [](Conv2dShape& s) { s.stride_h = s.stride_w = 2; }),
                      // 16 channels: oneDNN picks blocked layouts (nChw16c), exercising the reorders.
                      with(make(2, 16, 8, 8, 32, 5, 5), [](Conv2dShape& s) {
                        s.stride_h = s.stride_w = 3;
                        s.pad_top = s.pad_bottom = s.pad_left = s.pad_right = 2;
                      })));

// A height-split convolution: each half extended by the halo row of its neighbour and padded
// only at the global edge gives exactly the rows of the whole convolution.
TEST(Conv2d, HaloSplitEqualsWhole) {
  Conv2dShape whole = make(2, 3, 8, 5, 4, 3, 3);
  whole.pad_top = whole.pad_bottom = whole.pad_left = whole.pad_right = 1;
  CpuContext context;
  const auto x = random_floats(static_cast<std::size_t>(2 * 3 * 8 * 5), 5);
  const auto w = random_floats(static_cast<std::size_t>(4 * 3 * 9), 6);
  const auto b = random_floats(4, 7);
  std::vector<float> y(static_cast<std::size_t>(2 * 4 * 8 * 5));
  Conv2dKernel(context, whole).forward(x.data(), w.data(), b.data(), y.data());

  for (int half = 0; half < 2; ++half) {
    Conv2dShape part = whole;
    part.height = 5;  // 4 own rows + 1 halo row
    part.pad_top = half == 0 ? 1 : 0;
    part.pad_bottom = half == 0 ? 0 : 1;
    const int64_t first_row = half == 0 ? 0 : 3;
    std::vector<float> xp(static_cast<std::size_t>(2 * 3 * 5 * 5));
    for (int64_t nc = 0; nc < 6; ++nc) std::copy_n(x.begin() + (nc * 8 + first_row) * 5, 25, xp.begin() + nc * 25);
    std::vector<float> yp(static_cast<std::size_t>(2 * 4 * 4 * 5));
    Conv2dKernel(context, part).forward(xp.data(), w.data(), b.data(), yp.data());
    for (int64_t nk = 0; nk < 8; ++nk)
      for (int64_t i = 0; i < 20; ++i)
        EXPECT_NEAR(yp[static_cast<std::size_t>(nk * 20 + i)], y[static_cast<std::size_t>(nk * 40 + half * 20 + i)],
                    1e-5);
  }
}

TEST(Conv2d, RejectsGroupsThatDoNotDivideChannels) {
  CpuContext context;
  Conv2dShape s = make(1, 3, 4, 4, 4, 3, 3);
  s.groups = 2;
  EXPECT_THROW(Conv2dKernel(context, s), KernelArgumentError);
}

}  // namespace
}  // namespace splitbrain::exec::cpu
