// The embedding op checks its token ids on the host, from the data source's values of the
// micro-batch (OpContext::input_values), cut to this rank's positions where the sequence is split:
// not the ids it is handed in the backend's memory, which a GPU's host could read only by waiting
// for the device. A bad id in the data fails the rank whose positions hold it, and only that one,
// even where the ids handed to the kernel are good.

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "exec/cpu/cpu_kernel_factory.h"
#include "exec/ops/op_factories.h"
#include "model/errors.h"
#include "model/zoo.h"
#include "plans/op_sharding.h"
#include "plans/tensor_layout.h"

namespace splitbrain::exec {
namespace {

constexpr int64_t kSamples = 2;
constexpr int64_t kPositions = 8;
constexpr int64_t kVocab = 32;

// One forward of the token embedding on `rank` of a sequence split in two, its data holding
// `data_ids` ([kSamples, kPositions]) and its kernel handed good ids whatever the data says.
void forward_on(int rank, const std::vector<float>& data_ids) {
  const model::Model net = model::build_zoo_model("gpt:layers=1,hidden=16,heads=2,seq=8,vocab=32,positions=8");
  int v = 0;
  while (net.layer(v).kind != model::OpKind::embedding || net.layer(v).attr<model::EmbeddingAttrs>().positional) ++v;
  const plans::Mesh mesh({{"space", 2}});
  plans::LayerSharding sharding;
  sharding.spatial = {0};
  const plans::LayerLayouts layouts = plans::layer_layouts(net, v, sharding, mesh, kSamples, model::DType::fp32, false);

  OpContext op;
  op.model = &net;
  op.layer = v;
  op.layouts = &layouts;
  op.mesh = &mesh;
  op.rank = rank;
  const std::vector<int64_t> ids_global = plans::activation_shape(net.layer(net.layer(v).inputs[0]), kSamples);
  op.input_shapes.push_back(plans::local_shape(layouts.inputs[0], mesh, ids_global));
  op.output_global_shape = plans::activation_shape(net.layer(v), kSamples);
  op.output_shape = plans::local_shape(layouts.output, mesh, op.output_global_shape);
  op.output_offset = plans::local_offset(layouts.output, mesh, op.output_global_shape, rank);
  const plans::ParameterShard& table = layouts.parameters.at(0);
  op.parameter_shapes.push_back(plans::local_shape(table.layout, mesh, table.global_shape));
  op.input_values = [&](int, int64_t first, int64_t count) {
    EXPECT_EQ(first, 0);
    EXPECT_EQ(count, kSamples);
    return data_ids;
  };
  ASSERT_EQ(op.input_shapes[0], (std::vector<int64_t>{kSamples, kPositions / 2}));

  cpu::CpuKernelFactory factory;
  const std::unique_ptr<LayerOp> embedding = ops::make_embedding_op(factory, op);
  const std::vector<float> good_ids(static_cast<size_t>(kSamples * kPositions / 2), 1.0f);
  std::vector<float> weights(static_cast<size_t>(op.parameter_shapes[0][0] * op.parameter_shapes[0][1]), 0.5f);
  std::vector<float> output(static_cast<size_t>(kSamples * kPositions / 2 * op.output_shape.back()));
  const std::vector<ConstTensorSpan> inputs{good_ids};
  const std::vector<ConstTensorSpan> params{weights};
  embedding->forward(0, 0, inputs, params, output);
}

TEST(EmbeddingOp, ChecksTheDataSourcesIdsOfItsOwnPositions) {
  std::vector<float> ids(static_cast<size_t>(kSamples * kPositions), 3.0f);
  ids[static_cast<size_t>(kPositions + 6)] = static_cast<float>(kVocab);  // sample 1, position 6: rank 1's half
  EXPECT_NO_THROW(forward_on(0, ids));
  EXPECT_THROW(forward_on(1, ids), InputError);
  ids[static_cast<size_t>(kPositions + 6)] = 3.0f;
  ids[1] = -1.0f;  // sample 0, position 1: rank 0's half
  EXPECT_THROW(forward_on(0, ids), InputError);
  EXPECT_NO_THROW(forward_on(1, ids));
}

}  // namespace
}  // namespace splitbrain::exec
