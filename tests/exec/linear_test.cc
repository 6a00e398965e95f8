// LinearKernel (y = x W^T + b) against float64 loops, with and without bias, odd sizes.

#include "exec/cpu/linear.h"

#include <gtest/gtest.h>

#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::LinearShape;
using testing::expect_close;
using testing::random_floats;

class LinearCase : public ::testing::TestWithParam<LinearShape> {};

TEST_P(LinearCase, MatchesFloat64Reference) {
  const LinearShape s = GetParam();
  const auto rows = static_cast<std::size_t>(s.rows), in = static_cast<std::size_t>(s.in_features),
             out = static_cast<std::size_t>(s.out_features);
  const auto x = random_floats(rows * in, 11), w = random_floats(out * in, 12), b = random_floats(out, 13),
             dy = random_floats(rows * out, 14);
  std::vector<double> y_ref(rows * out), dx_ref(rows * in, 0.0), dw_ref(out * in, 0.0), db_ref(out, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = 0; o < out; ++o) {
      double acc = s.bias ? b[o] : 0.0;
      const double g = dy[r * out + o];
      db_ref[o] += g;
      for (std::size_t i = 0; i < in; ++i) {
        acc += static_cast<double>(x[r * in + i]) * w[o * in + i];
        dx_ref[r * in + i] += g * w[o * in + i];
        dw_ref[o * in + i] += g * x[r * in + i];
      }
      y_ref[r * out + o] = acc;
    }

  CpuContext context;
  LinearKernel kernel(context, s);
  std::vector<float> y(rows * out), dx(rows * in), dw(out * in), db(out);
  kernel.forward(x.data(), w.data(), b.data(), y.data());
  kernel.backward_data(dy.data(), w.data(), dx.data());
  kernel.backward_weights(x.data(), dy.data(), dw.data(), db.data());
  expect_close(y, y_ref, 1e-5, "y");
  expect_close(dx, dx_ref, 1e-5, "dx");
  expect_close(dw, dw_ref, 1e-5, "dw");
  if (s.bias) expect_close(db, db_ref, 1e-5, "db");

  // Accumulating twice onto a gradient that starts at dW0 gives dW0 + 2 dW (and the same for db).
  std::vector<float> acc_w = random_floats(out * in, 15), acc_b = random_floats(out, 16);
  std::vector<double> acc_w_ref(acc_w.begin(), acc_w.end()), acc_b_ref(acc_b.begin(), acc_b.end());
  for (std::size_t k = 0; k < acc_w_ref.size(); ++k) acc_w_ref[k] += 2.0 * dw_ref[k];
  for (std::size_t k = 0; k < acc_b_ref.size(); ++k) acc_b_ref[k] += 2.0 * db_ref[k];
  for (int twice = 0; twice < 2; ++twice)
    kernel.accumulate_weight_gradients(x.data(), dy.data(), acc_w.data(), acc_b.data());
  expect_close(acc_w, acc_w_ref, 1e-5, "accumulated dw");
  expect_close(acc_b, acc_b_ref, 1e-5, "accumulated db");
}

INSTANTIATE_TEST_SUITE_P(Shapes, LinearCase,
                         ::testing::Values(LinearShape{4, 8, 16, true}, LinearShape{7, 13, 5, false},
                                           LinearShape{1, 1, 1, true}, LinearShape{33, 70, 19, true},
                                           LinearShape{12, 64, 48, false}));

}  // namespace
}  // namespace splitbrain::exec::cpu
