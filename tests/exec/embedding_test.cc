// Embedding gather and scatter-add, whole table and vocabulary-split (the two halves' outputs
// sum to the whole output; their gradients are the whole gradient's row ranges).

#include "exec/cpu/embedding.h"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "exec/kernels/kernel_argument_error.h"
#include "tests/exec/kernel_test_util.h"

namespace splitbrain::exec::cpu {
namespace {

using kernels::embedding_positions;
using kernels::EmbeddingShape;
using kernels::KernelArgumentError;
using testing::random_floats;

TEST(Embedding, WholeAndVocabularySplitTables) {
  const int64_t vocab = 10, dim = 3, count = 12;
  const std::vector<float> ids{3, 0, 9, 3, 5, 5, 5, 1, 8, 9, 2, 3};
  const auto table = random_floats(static_cast<std::size_t>(vocab * dim), 91);
  const auto dy = random_floats(static_cast<std::size_t>(count * dim), 92);
  std::vector<float> y(static_cast<std::size_t>(count * dim));
  std::vector<float> dtable(table.size(), 0.0f);
  const EmbeddingShape whole{count, dim, vocab, 0, vocab};
  EmbeddingKernel(whole).forward(ids.data(), table.data(), y.data());
  EmbeddingKernel(whole).backward(ids.data(), dy.data(), dtable.data());
  std::vector<double> dtable_ref(table.size(), 0.0);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < dim; ++j) {
      const auto yi = static_cast<std::size_t>(i * dim + j),
                 ti = static_cast<std::size_t>(ids[static_cast<std::size_t>(i)]) * dim + j;
      EXPECT_EQ(y[yi], table[ti]);
      dtable_ref[ti] += dy[yi];
    }
  testing::expect_close(dtable, dtable_ref, 1e-6, "dtable");

  // Two ranks holding rows [0, 4) and [4, 10).
  std::vector<float> summed(y.size(), 0.0f);
  for (const auto& [begin, end] : {std::pair<int64_t, int64_t>{0, 4}, {4, 10}}) {
    const EmbeddingShape part{count, dim, vocab, begin, end};
    const auto offset = static_cast<std::ptrdiff_t>(begin * dim);
    std::vector<float> yp(y.size()), dpart(static_cast<std::size_t>((end - begin) * dim), 0.0f);
    EmbeddingKernel(part).forward(ids.data(), table.data() + offset, yp.data());
    EmbeddingKernel(part).backward(ids.data(), dy.data(), dpart.data());
    for (std::size_t i = 0; i < y.size(); ++i) summed[i] += yp[i];
    for (std::size_t i = 0; i < dpart.size(); ++i) EXPECT_EQ(dpart[i], dtable[static_cast<std::size_t>(offset) + i]);
  }
  EXPECT_EQ(summed, y);
}

TEST(Embedding, BackwardAccumulatesAndPositionsAreOffset) {
  const std::vector<float> ids{1};
  const std::vector<float> dy{1.0f, 2.0f};
  std::vector<float> dtable{0.0f, 0.0f, 5.0f, 5.0f};  // already holds the tied head's gradient
  EmbeddingKernel({1, 2, 2, 0, 2}).backward(ids.data(), dy.data(), dtable.data());
  EXPECT_EQ(dtable, (std::vector<float>{0.0f, 0.0f, 6.0f, 7.0f}));

  std::vector<float> positions(6);
  embedding_positions(2, 3, 4, positions.data());  // a rank holding positions 4..6 of each sample
  EXPECT_EQ(positions, (std::vector<float>{4, 5, 6, 4, 5, 6}));
}

TEST(Embedding, IdsThatAreNotRowsOfTheTableAreRefusedByValueAndPosition) {
  std::vector<float> table(20), y(4);
  for (const float bad : {10.0f, -1.0f, 2.5f, std::nanf("")}) {
    const std::vector<float> ids{0.0f, bad};
    try {
      EmbeddingKernel({2, 2, 10, 0, 10}).forward(ids.data(), table.data(), y.data());
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const KernelArgumentError& error) {
      EXPECT_NE(std::string(error.what()).find("at local position 1"), std::string::npos) << error.what();
    }
  }
}

}  // namespace
}  // namespace splitbrain::exec::cpu
