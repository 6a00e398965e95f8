// Classes of alike layers: what the planner and compile_plan work out once per class must not
// depend on anything a class lets differ.

#include "model/alike_layers.h"

#include <gtest/gtest.h>

#include "model/zoo.h"

namespace splitbrain::model {
namespace {

TEST(AlikeLayers, TheBlocksOfAGptAreAlikeLayerByLayer) {
  const Model net = build_zoo_model("gpt:layers=3,hidden=64,heads=4,seq=16,vocab=96,positions=16");
  const std::vector<int> classes = alike_layer_classes(net);
  auto class_of = [&](const std::string& name) {
    const int index = net.find(name);
    EXPECT_GE(index, 0) << name;
    return classes.at(static_cast<size_t>(index));
  };
  for (const char* part : {"ln_1", "attn.c_attn", "attn.core", "attn.c_proj", "attn.residual", "ln_2", "mlp.c_fc",
                           "mlp.gelu", "mlp.c_proj", "mlp.residual"}) {
    SCOPED_TRACE(part);
    // h0 reads the embeddings and h1, h2 read a block: only shapes count, not which layer.
    EXPECT_EQ(class_of(std::string("h0.") + part), class_of(std::string("h1.") + part));
    EXPECT_EQ(class_of(std::string("h1.") + part), class_of(std::string("h2.") + part));
  }
  // Same op and shapes but other widths or roles' attributes: different classes.
  EXPECT_NE(class_of("h0.attn.c_attn"), class_of("h0.mlp.c_fc"));
  EXPECT_NE(class_of("h0.attn.c_proj"), class_of("h0.mlp.c_proj"));
  EXPECT_NE(class_of("wte"), class_of("wpe"));
  // The final layernorm is alike the blocks' by op, attributes and shapes, whatever its name.
  EXPECT_EQ(class_of("ln_f"), class_of("h0.ln_1"));
}

TEST(AlikeLayers, ClassesAreNumberedByTheirFirstLayerAndTheModelKeepsThem) {
  const Model net = build_zoo_model("gpt:layers=2,hidden=64,heads=4,seq=16,vocab=96,positions=16");
  const std::vector<int> classes = alike_layer_classes(net);
  int next = 0;
  for (int c : classes) {
    ASSERT_LE(c, next);
    if (c == next) ++next;
  }
  EXPECT_LT(next, net.size());  // the second block added no class
  const std::span<const int> kept = net.alike_classes();
  EXPECT_EQ(std::vector<int>(kept.begin(), kept.end()), classes);
  EXPECT_EQ(net.alike_classes().data(), kept.data());  // worked out once
}

}  // namespace
}  // namespace splitbrain::model
