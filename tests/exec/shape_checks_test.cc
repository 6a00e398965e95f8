// The arguments every backend's kernels refuse (exec/kernels/shape_checks.h, concat.h,
// attention.h): each bad field is refused with the kernel's name and the field's words, a good
// shape passes, and the concatenation's geometry tiles its output.

#include <gtest/gtest.h>

#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "exec/kernels/attention.h"
#include "exec/kernels/concat.h"
#include "exec/kernels/kernel_argument_error.h"
#include "exec/kernels/shape_checks.h"

namespace splitbrain::exec::kernels {
namespace {

void expect_refused(const std::function<void()>& call, const std::string& message) {
  try {
    call();
    ADD_FAILURE() << "not refused; expected: " << message;
  } catch (const KernelArgumentError& e) {
    EXPECT_EQ(std::string(e.what()), message);
  }
}

TEST(ShapeChecks, ConvRefusesEachBadField) {
  Conv2dShape good;
  good.in_channels = good.out_channels = 4;
  good.height = good.width = 5;
  good.kernel_h = good.kernel_w = 3;
  EXPECT_NO_THROW(checked(good));
  Conv2dShape s = good;
  s.width = 0;
  expect_refused([&] { checked(s); }, "Conv2dKernel: input dims must be positive");
  s = good;
  s.dilation_h = 0;
  expect_refused([&] { checked(s); }, "Conv2dKernel: stride and dilation must be positive");
  s = good;
  s.pad_left = -1;
  expect_refused([&] { checked(s); }, "Conv2dKernel: padding must be >= 0");
  s = good;
  s.groups = 3;
  expect_refused([&] { checked(s); }, "Conv2dKernel: groups (3) must divide in_channels and out_channels");
  s = good;
  s.kernel_h = 6;
  expect_refused([&] { checked(s); }, "Conv2dKernel: the kernel does not fit the padded input");
}

TEST(ShapeChecks, AveragePoolingRefusesAWindowPastThePadding) {
  // Height 6, kernel 2, stride 3, ceil_mode: windows at 0, 3 and (ceil) 6, whose rows 6-7 lie
  // past the input; a bottom padding of 2 holds them.
  Pool2dShape s;
  s.height = 6;
  s.width = 2;
  s.kernel_h = 2;
  s.stride_h = 3;
  s.ceil_mode = true;
  ASSERT_EQ(s.out_height(), 2);
  s.pad_top = 1;
  ASSERT_EQ(s.out_height(), 3);  // rows -1..6 padded: windows at -1, 2, 5; the last reaches row 6
  expect_refused(
      [&] { checked(PoolKind::average, s); },
      "Pool2dKernel: average pooling with ceil_mode whose last window overhangs the padding is not supported");
  EXPECT_NO_THROW(checked(PoolKind::max, s));  // max pooling ignores what lies past the input
  s.pad_bottom = 1;
  EXPECT_NO_THROW(checked(PoolKind::average, s));
  s.kernel_w = 3;
  expect_refused([&] { checked(PoolKind::max, s); }, "Pool2dKernel: the window does not fit the padded input");
}

TEST(ShapeChecks, TheOtherShapesNameTheirKernel) {
  expect_refused([] { checked(LinearShape{.rows = 0}); },
                 "LinearKernel: rows, in_features and out_features must be positive");
  expect_refused([] { checked(BatchedMatmulShape{.n = -1}); },
                 "BatchedMatmulKernel: batch, m, k and n must be positive");
  expect_refused([] { checked(BatchNormShape{.spatial = 0}); },
                 "batchnorm: batch, channels and spatial must be positive");
  expect_refused([] { checked(LayerNormShape{.epsilon = -1e-5}); },
                 "LayerNormKernel: rows and features must be positive, epsilon >= 0");
  expect_refused([] { checked(SoftmaxCrossEntropyShape{.classes = 0}); },
                 "softmax_cross_entropy: rows and classes must be positive");
  expect_refused([] { checked(AdaptiveAvgPoolShape{.out_width = 0}); }, "adaptive_avgpool: every dim must be positive");
  expect_refused([] { checked(AttentionShape{.head_dim = 0}); },
                 "SelfAttentionKernel: batch, seq, heads and head_dim must be positive");
  expect_refused([] { checked(EmbeddingShape{.num_embeddings = 4, .row_begin = 2, .row_end = 5}); },
                 "embedding: rows [2, 5) are not inside the table of 4");
  EXPECT_NO_THROW(checked(EmbeddingShape{.count = 0, .num_embeddings = 4, .row_begin = 2, .row_end = 4}));
  expect_refused([] { checked_activation_elements(0); }, "ActivationKernel: elements must be positive");
  expect_refused([] { checked_add_elements(0, 8); }, "AddKernel: needs at least 1 input and elements > 0");
  expect_refused([] { check_add_inputs(2, 3); }, "AddKernel::forward: got 2 inputs, built for 3");
}

TEST(ShapeChecks, ConcatGeometryTilesTheOutput) {
  const std::vector<Dims> inputs{{2, 3, 4}, {2, 1, 4}, {2, 5, 4}};
  for (int axis : {1}) {
    const ConcatGeometry g = concat_geometry(inputs, axis);
    EXPECT_EQ(g.output_dims, (Dims{2, 9, 4}));
    EXPECT_EQ(g.outer, 2);
    EXPECT_EQ(g.output_run, 36);
    EXPECT_EQ(g.runs, (std::vector<int64_t>{12, 4, 20}));
    EXPECT_EQ(g.starts, (std::vector<int64_t>{0, 12, 16}));
  }
  // Along every axis of equal inputs, the pieces of a run follow one another and fill it.
  const std::vector<Dims> equal{{3, 2, 5}, {3, 2, 5}};
  for (int axis = 0; axis < 3; ++axis) {
    const ConcatGeometry g = concat_geometry(equal, axis);
    EXPECT_EQ(std::accumulate(g.runs.begin(), g.runs.end(), int64_t{0}), g.output_run);
    EXPECT_EQ(g.starts.back() + g.runs.back(), g.output_run);
    EXPECT_EQ(g.outer * g.output_run, 2 * 3 * 2 * 5);
  }
  expect_refused([] { concat_geometry(std::vector<Dims>{}, 0); }, "ConcatKernel: needs at least one input");
  expect_refused([&] { concat_geometry(inputs, 3); }, "ConcatKernel: axis 3 is out of range");
  expect_refused([&] { concat_geometry(inputs, 2); }, "ConcatKernel: inputs differ in dimension 1 besides the axis");
  expect_refused(
      [] {
        concat_geometry(std::vector<Dims>{{2, 3}, {2}}, 0);
      },
      "ConcatKernel: inputs must have the same rank");
  expect_refused([] { check_concat_gradients(1, 2); }, "ConcatKernel: backward got 1 gradients, built for 2");
}

TEST(ShapeChecks, AttentionProductsScaleTheScoresAndTheirGradients) {
  const AttentionShape s{.batch = 2, .seq = 5, .heads = 3, .head_dim = 16};
  const AttentionProducts p = attention_products(s);
  for (const BatchedMatmulShape& product : {p.scores, p.context, p.grad_v, p.grad_p, p.grad_q, p.grad_k})
    EXPECT_EQ(product.batch, 6);
  EXPECT_FLOAT_EQ(p.scores.alpha, 0.25f);
  EXPECT_FLOAT_EQ(p.grad_q.alpha, 0.25f);
  EXPECT_FLOAT_EQ(p.grad_k.alpha, 0.25f);
  EXPECT_FLOAT_EQ(p.context.alpha, 1.0f);
  // S [T, T] = Q [T, D] K^T; dK [T, D] = dS^T [T, T] Q.
  EXPECT_EQ((std::vector<int64_t>{p.scores.m, p.scores.k, p.scores.n}), (std::vector<int64_t>{5, 16, 5}));
  EXPECT_TRUE(p.scores.transpose_b && !p.scores.transpose_a);
  EXPECT_TRUE(p.grad_k.transpose_a && !p.grad_k.transpose_b);
  EXPECT_EQ(attention_probs_elements(s), 2 * 3 * 5 * 5);
}

}  // namespace
}  // namespace splitbrain::exec::kernels
