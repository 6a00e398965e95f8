// Models past the limits the model code can take, refused with exit 2 before anything uses them:
// ONNX window attributes that ONNX's own shape inference divides by, zoo options out of their
// range or given twice, and batches or weights whose byte counts do not fit in 64 bits.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

void expect_rejected(const CommandResult& r, const std::vector<std::string>& expected_parts) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  for (const std::string& part : expected_parts) {
    EXPECT_NE(r.err.find(part), std::string::npos) << "expected '" << part << "' in stderr: " << r.err;
  }
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << "stderr: " << r.err;
}

std::string scratch_path(const std::string& name) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("splitbrain-limits-" + name);
  std::filesystem::remove(path);
  return path.string();
}

// --- ONNX window attributes -------------------------------------------------------------------

struct WindowCase {
  std::string op;         // Conv, MaxPool or AveragePool
  std::string attribute;  // the one attribute set to `values`
  std::vector<int64_t> values;
};

void set_ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
    if (attribute.name() == name) {
      attribute.clear_ints();
      for (int64_t v : values) attribute.add_ints(v);
      return;
    }
  }
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attribute->add_ints(v);
}

void set_int(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* attribute = node.add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void set_float_tensor(onnx::ValueInfoProto& info, const std::string& name, std::initializer_list<int64_t> dims) {
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) tensor->mutable_shape()->add_dim()->set_dim_value(dim);
}

// x [1, 1, 8, 8] -> one node `op` named 'window' (a 3x3 conv into 2 channels, or a 2x2 pool with
// stride 2) -> y, with `change` applied to the node before the file is written.
template <class Change>
std::string write_window_net(const std::string& op, const std::string& file, const Change& change) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("window");
  set_float_tensor(*graph->add_input(), "x", {1, 1, 8, 8});
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(op);
  node->set_name("window");
  node->add_input("x");
  node->add_output("y");
  if (op == "Conv") {
    onnx::TensorProto* weight = graph->add_initializer();
    weight->set_name("w");
    weight->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : {2, 1, 3, 3}) weight->add_dims(dim);
    weight->set_raw_data(std::string(2 * 9 * sizeof(float), '\0'));
    node->add_input("w");
    set_ints(*node, "kernel_shape", {3, 3});
    set_ints(*node, "strides", {1, 1});
    set_ints(*node, "pads", {1, 1, 1, 1});
  } else {
    set_ints(*node, "kernel_shape", {2, 2});
    set_ints(*node, "strides", {2, 2});
  }
  change(*node);
  onnx::ValueInfoProto* output = graph->add_output();
  output->set_name("y");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return write_temp_file(file, model.SerializeAsString());
}

std::string write_window_net(const WindowCase& c, const std::string& file) {
  return write_window_net(c.op, file, [&](onnx::NodeProto& node) { set_ints(node, c.attribute, c.values); });
}

TEST(CliModelLimits, OnnxWindowsAsTheImporterWritesThemAreImported) {
  // The writer's own nets import, so each refusal below is about its one attribute.
  for (const std::string op : {"Conv", "MaxPool", "AveragePool"}) {
    const std::string path = write_window_net(op, op + "-good.onnx", [](onnx::NodeProto&) {});
    const CommandResult r = run_splitbrain("inspect --model " + path);
    EXPECT_EQ(r.exit_code, 0) << op << ": " << r.err;
  }
}

TEST(CliModelLimits, OnnxWindowAttributesAreCheckedBeforeShapeInference) {
  const std::vector<WindowCase> cases = {
      {"Conv", "strides", {0, 0}},        {"Conv", "strides", {1, 0}},      {"MaxPool", "strides", {0, 0}},
      {"AveragePool", "strides", {1, 0}}, {"Conv", "kernel_shape", {0, 3}}, {"MaxPool", "kernel_shape", {-2, 2}},
      {"Conv", "pads", {-1, -1, -1, -1}}, {"Conv", "dilations", {0, 1}},    {"MaxPool", "dilations", {1, -1}},
      {"Conv", "strides", {1, 1, 1}},     {"AveragePool", "pads", {0, 0}},  {"Conv", "strides", {1, 4294967296}},
      {"MaxPool", "kernel_shape", {2}},
  };
  for (const WindowCase& c : cases) {
    const std::string path = write_window_net(c, c.op + "-" + c.attribute + ".onnx");
    SCOPED_TRACE(c.op + " " + c.attribute);
    expect_rejected(run_splitbrain("inspect --model " + path),
                    {path + ": node 'window' (" + c.op + "): " + c.attribute + ": "});
  }
  const std::string conv =
      write_window_net("Conv", "conv-group.onnx", [](onnx::NodeProto& node) { set_int(node, "group", 0); });
  expect_rejected(run_splitbrain("inspect --model " + conv),
                  {conv + ": node 'window' (Conv): group: must be from 1 to 2147483647, got 0"});
  const std::string pool =
      write_window_net("MaxPool", "pool-ceil.onnx", [](onnx::NodeProto& node) { set_int(node, "ceil_mode", 2); });
  expect_rejected(run_splitbrain("inspect --model " + pool),
                  {pool + ": node 'window' (MaxPool): ceil_mode: must be from 0 to 1, got 2"});
}

TEST(CliModelLimits, OnnxZeroStrideIsRefusedByEveryCommandThatReadsModels) {
  const std::string path = write_window_net({"Conv", "strides", {0, 0}}, "conv-zero-stride.onnx");
  const std::string expected = path + ": node 'window' (Conv): strides: [0, 0]: every value must be from 1 to";
  const std::string out = scratch_path("zero-stride.json");
  expect_rejected(run_splitbrain("import " + path + " -o " + out), {expected});
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused import left " << out;
  expect_rejected(run_splitbrain("plan --model " + path + " --devices 2 --batch 8"), {expected});
  expect_rejected(run_splitbrain("inspect --model " + path + " --json -"), {expected});
}

// An If whose branches each run a 3x3 conv named `branch` + "_conv" of x; the then-branch's
// conv has `then_strides`.
std::string write_branching_net(const std::vector<int64_t>& then_strides, const std::string& file) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto* graph = model.mutable_graph();
  graph->set_name("branching");
  set_float_tensor(*graph->add_input(), "x", {1, 1, 8, 8});
  onnx::ValueInfoProto* condition = graph->add_input();
  condition->set_name("c");
  condition->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  condition->mutable_type()->mutable_tensor_type()->mutable_shape();
  onnx::TensorProto* weight = graph->add_initializer();
  weight->set_name("w");
  weight->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : {2, 1, 3, 3}) weight->add_dims(dim);
  weight->set_raw_data(std::string(2 * 9 * sizeof(float), '\0'));
  onnx::NodeProto* branch = graph->add_node();
  branch->set_op_type("If");
  branch->set_name("branch");
  branch->add_input("c");
  branch->add_output("y");
  for (const std::string name : {"then", "else"}) {
    onnx::AttributeProto* attribute = branch->add_attribute();
    attribute->set_name(name + "_branch");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* body = attribute->mutable_g();
    body->set_name(name);
    onnx::NodeProto* conv = body->add_node();
    conv->set_op_type("Conv");
    conv->set_name(name + "_conv");
    conv->add_input("x");
    conv->add_input("w");
    conv->add_output(name + "_y");
    if (name == "then") set_ints(*conv, "strides", then_strides);
    body->add_output()->set_name(name + "_y");
    body->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  onnx::ValueInfoProto* output = graph->add_output();
  output->set_name("y");
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  return write_temp_file(file, model.SerializeAsString());
}

TEST(CliModelLimits, OnnxAttributesInsideABranchAreCheckedToo) {
  // ONNX infers the shapes inside an If's branches too, so its conv is checked before that.
  const std::string path = write_branching_net({0, 0}, "branch-zero-stride.onnx");
  expect_rejected(run_splitbrain("inspect --model " + path), {path + ": node 'then_conv' (Conv): strides: [0, 0]"});
  // With a stride of 1 the same file gets as far as the importer, which maps no If.
  const std::string good = write_branching_net({1, 1}, "branch.onnx");
  expect_rejected(run_splitbrain("inspect --model " + good), {good + ": node 'branch' (If): ONNX op 'If'"});
}

TEST(CliModelLimits, OnnxNodesAreCheckedAgainstTheirSchemaBeforeAnythingReadsThem) {
  // The importer and ONNX's inference read an Add's second input by position: one it lacks was
  // read past the end of the list (found by tests/fuzz/onnx_reader_fuzz).
  const std::string one_input = write_window_net("Relu", "add-one-input.onnx", [](onnx::NodeProto& node) {
    node.clear_attribute();
    node.set_op_type("Add");
  });
  expect_rejected(run_splitbrain("inspect --model " + one_input),
                  {one_input + ": node 'window' (Add): does not match the op's ONNX schema: "});
  // An op of a domain the model does not import has no schema, and ONNX's meaning is not its.
  const std::string custom = write_window_net("Relu", "custom-domain.onnx", [](onnx::NodeProto& node) {
    node.clear_attribute();
    node.set_domain("com.example");
  });
  expect_rejected(run_splitbrain("inspect --model " + custom),
                  {custom + ": node 'window' (Relu): ONNX op 'Relu' of domain 'com.example' is not in the opsets"});
  // A mistyped attribute: strides as one integer, not a list.
  const std::string typed = write_window_net("Conv", "conv-int-strides.onnx", [](onnx::NodeProto& node) {
    for (onnx::AttributeProto& attribute : *node.mutable_attribute()) {
      if (attribute.name() == "strides") {
        attribute.clear_ints();
        attribute.set_type(onnx::AttributeProto::INT);
        attribute.set_i(0);
      }
    }
  });
  expect_rejected(run_splitbrain("inspect --model " + typed),
                  {typed + ": node 'window' (Conv): does not match the op's ONNX schema: "});
}

// --- zoo options ------------------------------------------------------------------------------

TEST(CliModelLimits, EveryZooOptionValueThatModelsPrintsIsAccepted) {
  const CommandResult listed = run_splitbrain("models --json -");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const nlohmann::json models = nlohmann::json::parse(listed.out).at("models");
  ASSERT_FALSE(models.empty());
  for (const nlohmann::json& entry : models) {
    std::string spec = entry.at("name").get<std::string>();
    for (const nlohmann::json& option : entry.at("options")) {
      spec += (spec.find(':') == std::string::npos ? ":" : ",") + option.at("name").get<std::string>() + "=" +
              std::to_string(option.at("default").get<int64_t>());
      EXPECT_LE(option.at("min").get<int64_t>(), option.at("default").get<int64_t>()) << spec;
      EXPECT_GE(option.at("max").get<int64_t>(), option.at("default").get<int64_t>()) << spec;
    }
    const CommandResult r = run_splitbrain("inspect --model '" + spec + "' --json -");
    EXPECT_EQ(r.exit_code, 0) << spec << ": " << r.err;
  }
}

TEST(CliModelLimits, ZooOptionsOutOfTheirRangeNameTheOptionAndTheRange) {
  expect_rejected(run_splitbrain("inspect --model gpt:layers=2147483648"),
                  {"zoo model 'gpt': option 'layers' must be an integer from 1 to 1024, got '2147483648'"});
  expect_rejected(run_splitbrain("inspect --model gpt:layers=0"),
                  {"option 'layers' must be an integer from 1 to 1024, got '0'"});
  expect_rejected(run_splitbrain("inspect --model gpt:attn_dropout=100"),
                  {"option 'attn_dropout' must be an integer from 0 to 99, got '100'"});
  expect_rejected(run_splitbrain("inspect --model gpt:untied=2"),
                  {"option 'untied' must be an integer from 0 to 1, got '2'"});
  expect_rejected(run_splitbrain("inspect --model mlp:hidden=1099511627776"),
                  {"zoo model 'mlp': option 'hidden' must be an integer from 1 to 1048576"});
  // The bounds themselves are taken.
  EXPECT_EQ(run_splitbrain("inspect --model gpt:layers=1024,hidden=64,heads=4,seq=16,vocab=96").exit_code, 0);
  EXPECT_EQ(run_splitbrain("inspect --model gpt:layers=1,hidden=64,heads=4,seq=16,vocab=96,attn_dropout=99").exit_code,
            0);
}

TEST(CliModelLimits, AZooOptionGivenTwiceIsRefused) {
  expect_rejected(run_splitbrain("inspect --model gpt:layers=2,layers=3"),
                  {"zoo model 'gpt': option 'layers' is given twice"});
  expect_rejected(run_splitbrain("inspect --model mlp:layers=2,hidden=8,layers=2"),
                  {"zoo model 'mlp': option 'layers' is given twice"});
}

// --- byte counts past 64 bits -----------------------------------------------------------------

TEST(CliModelLimits, InspectRefusesABatchWhoseBytesOverflow) {
  const std::string out = scratch_path("huge-batch-inspect.json");
  expect_rejected(run_splitbrain("inspect --model fashion-vgg --batch 36028797018963968 --json " + out),
                  {"model 'fashion-vgg' at a batch of 36028797018963968 (fp32): layer '", "_bytes: "});
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused inspect left " << out;
  const CommandResult printed = run_splitbrain("inspect --model fashion-vgg --batch 36028797018963968 --json -");
  expect_rejected(printed, {"at a batch of 36028797018963968"});
  EXPECT_TRUE(printed.out.empty()) << printed.out;
  // A batch 2^15 times smaller fits (under 1 MB a sample is kept): the check is about the sizes.
  EXPECT_EQ(run_splitbrain("inspect --model fashion-vgg --batch 1099511627776 --json -").exit_code, 0);
}

TEST(CliModelLimits, WeightsWhoseBytesOverflowAreRefusedNamingTheLayer) {
  // Each layer's parameters fit in 64 bits (2^62 + 2^31); their bytes do not.
  const std::string model =
      write_temp_file("wide-linears.json", R"({"format": "splitbrain-model", "version": 1, "name": "wide", "layers": [
        {"name": "data", "op": "input", "shape": [4]},
        {"name": "fc1", "op": "linear", "out_features": 2147483648},
        {"name": "fc2", "op": "linear", "out_features": 2147483648}]})");
  const std::string out = scratch_path("wide-linears-inspect.json");
  expect_rejected(run_splitbrain("inspect --model " + model + " --json " + out),
                  {model + ": layer 'fc2': size: parameter bytes: 4611686020574871552 x 8 does not fit in 64 bits"});
  EXPECT_FALSE(std::filesystem::exists(out)) << "a refused inspect left " << out;
  // Outputs of 2^20 are far inside the bound and inspected as before.
  const std::string narrow = write_temp_file(
      "narrow-linears.json", R"({"format": "splitbrain-model", "version": 1, "name": "narrow", "layers": [
        {"name": "data", "op": "input", "shape": [4]},
        {"name": "fc1", "op": "linear", "out_features": 1048576},
        {"name": "fc2", "op": "linear", "out_features": 1048576}]})");
  const CommandResult r = run_splitbrain("inspect --model " + narrow + " --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int64_t width = 1048576;
  const int64_t params = (4 * width + width) + (width * width + width);  // weights and biases
  EXPECT_EQ(nlohmann::json::parse(r.out).at("param_bytes").get<int64_t>(), 4 * params);
}

}  // namespace
}  // namespace splitbrain::testing_support
