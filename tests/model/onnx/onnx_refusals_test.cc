// What the ONNX importer refuses, on small graphs written here with ONNX's protobuf classes (no
// Python needed): every refusal is an InputError naming the file, and for a node its name and
// op type.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>

#include "model/errors.h"
#include "model/onnx/onnx_import.h"

namespace splitbrain::model {
namespace {

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / fmt::format("splitbrain-onnx-test-{}", name);
}

void set_float_tensor(onnx::ValueInfoProto& info, const std::string& name, std::initializer_list<int64_t> dims) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
}

// x [2, 8] -> Relu 'act' -> <op> named `name` -> y.
std::filesystem::path write_graph_with(const std::string& op, const std::string& name, const std::string& file) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("refusal");
  set_float_tensor(*graph->add_input(), "x", {2, 8});
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->set_name("act");
  relu->add_input("x");
  relu->add_output("h");
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name(name);
  node->add_input("h");
  node->add_output("y");
  set_float_tensor(*graph->add_output(), "y", {2, 8});
  const std::filesystem::path path = temp_path(file);
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
  return path;
}

std::string import_error(const std::filesystem::path& path) {
  try {
    import_onnx_model(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " was imported";
  return "";
}

TEST(OnnxRefusals, UnsupportedOpNamesTheFileTheNodeAndTheOp) {
  const std::filesystem::path path = write_graph_with("Sin", "weird_sin", "sin.onnx");
  const std::string error = import_error(path);
  EXPECT_NE(error.find(path.string()), std::string::npos) << error;
  EXPECT_NE(error.find("'weird_sin'"), std::string::npos) << error;
  EXPECT_NE(error.find("'Sin'"), std::string::npos) << error;
  std::filesystem::remove(path);
}

// The ops of a Llama block outside the patterns that make them one layer (RMSNorm's Sqrt,
// SwiGLU's Sigmoid) are refused by name like any op the importer does not map.
TEST(OnnxRefusals, LlamaPiecesOutsideTheirPatternsNameTheNode) {
  for (const auto& [op, name] : {std::pair{"Sigmoid", "lone_sigmoid"}, std::pair{"Sqrt", "lone_sqrt"}}) {
    const std::filesystem::path path = write_graph_with(op, name, std::string(name) + ".onnx");
    const std::string error = import_error(path);
    EXPECT_NE(error.find(fmt::format("'{}'", name)), std::string::npos) << error;
    EXPECT_NE(error.find(fmt::format("'{}'", op)), std::string::npos) << error;
    std::filesystem::remove(path);
  }
}

TEST(OnnxRefusals, SoftmaxOutsideAttentionAndNotAtTheOutput) {
  // A Softmax is imported as attention or as the loss at the output; here a Relu follows it.
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  set_float_tensor(*graph->add_input(), "x", {2, 8});
  onnx::NodeProto* softmax = graph->add_node();
  softmax->set_op_type("Softmax");
  softmax->set_name("probabilities");
  softmax->add_input("x");
  softmax->add_output("p");
  onnx::NodeProto* relu = graph->add_node();
  relu->set_op_type("Relu");
  relu->add_input("p");
  relu->add_output("y");
  set_float_tensor(*graph->add_output(), "y", {2, 8});
  const std::filesystem::path path = temp_path("softmax.onnx");
  {
    std::ofstream out(path, std::ios::binary);
    model.SerializeToOstream(&out);
  }
  const std::string error = import_error(path);
  EXPECT_NE(error.find("'probabilities' (Softmax)"), std::string::npos) << error;
  std::filesystem::remove(path);
}

TEST(OnnxRefusals, ASupportedGraphImportsWithALoss) {
  // The same writer with a supported op, so the refusals above are about the op alone.
  const std::filesystem::path path = write_graph_with("Relu", "act2", "relu.onnx");
  const Model net = import_onnx_model(path);
  ASSERT_EQ(net.size(), 4);  // x, act, act2, loss
  EXPECT_EQ(net.layer(3).kind, OpKind::softmax_cross_entropy);
  EXPECT_EQ(net.layer(0).output_shape, (Shape{8}));
  std::filesystem::remove(path);
}

TEST(OnnxRefusals, CorruptAndMissingFilesNameTheFile) {
  const std::filesystem::path corrupt = temp_path("corrupt.onnx");
  {
    std::ofstream out(corrupt);
    out << "this is not a protobuf \xff\xff\xff\xff";
  }
  const std::string error = import_error(corrupt);
  EXPECT_NE(error.find(corrupt.string()), std::string::npos) << error;
  EXPECT_NE(error.find("not an ONNX model"), std::string::npos) << error;
  std::filesystem::remove(corrupt);

  const std::string missing = import_error("/nonexistent/net.onnx");
  EXPECT_NE(missing.find("/nonexistent/net.onnx: cannot open"), std::string::npos) << missing;
}

}  // namespace
}  // namespace splitbrain::model
