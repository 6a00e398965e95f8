// The sharding rules: one per op kind, and the roles each allows (what plan files may ask).

#include "plans/op_rules.h"

#include <gtest/gtest.h>

namespace splitbrain::plans {
namespace {

using model::OpKind;

TEST(OpRules, EveryKindHasRulesNamingIt) {
  for (OpKind kind : model::all_op_kinds()) {
    const OpRules& rules = op_rules(kind);
    EXPECT_EQ(rules.kind, kind) << model::op_name(kind);
    EXPECT_NE(rules.role_allowed, nullptr);
    EXPECT_NE(rules.layouts, nullptr);
    EXPECT_TRUE(rules.role_allowed(ShardRole::batch)) << model::op_name(kind);  // every op splits its samples
  }
}

TEST(OpRules, RolesFollowWhatEachOpComputes) {
  // Ops with a weight split all four ways; a partial sum survives only a linear weighted op.
  for (OpKind kind : {OpKind::conv2d, OpKind::linear, OpKind::embedding}) {
    for (ShardRole role : {ShardRole::batch, ShardRole::out, ShardRole::in, ShardRole::spatial})
      EXPECT_TRUE(op_rules(kind).role_allowed(role)) << model::op_name(kind);
  }
  EXPECT_FALSE(op_rules(OpKind::relu).role_allowed(ShardRole::in));
  EXPECT_TRUE(op_rules(OpKind::relu).role_allowed(ShardRole::spatial));
  EXPECT_FALSE(op_rules(OpKind::layernorm).role_allowed(ShardRole::out));  // it normalises the features
  EXPECT_TRUE(op_rules(OpKind::layernorm).role_allowed(ShardRole::spatial));
  EXPECT_TRUE(op_rules(OpKind::self_attention).role_allowed(ShardRole::out));      // heads
  EXPECT_TRUE(op_rules(OpKind::self_attention).role_allowed(ShardRole::spatial));  // context parallelism
  EXPECT_FALSE(op_rules(OpKind::self_attention).role_allowed(ShardRole::in));
  EXPECT_FALSE(op_rules(OpKind::matmul).role_allowed(ShardRole::out));
}

}  // namespace
}  // namespace splitbrain::plans
