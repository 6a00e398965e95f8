#include "sim/cluster_json.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/cluster_error.h"
#include "sim/cluster_presets.h"
#include "test_clusters.h"

namespace splitbrain::sim {
namespace {
using nlohmann::json;

std::string write_text(const std::string& file_name, const std::string& text) {
  const std::filesystem::path path = testing::scratch_file(file_name);
  std::ofstream(path) << text;
  return path.string();
}

// A valid cluster document to break one field at a time.
json valid_document() { return json::parse(cluster_json_text(testing::two_level_cluster())); }

// Reads `document` from a file and expects a ClusterError naming the file and the field.
void expect_error(const json& document, const std::string& field_and_problem) {
  const std::string path = write_text("bad.json", document.dump(2));
  try {
    read_cluster_file(path);
    FAIL() << "expected ClusterError containing '" << field_and_problem << "'";
  } catch (const ClusterError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind(path + ": ", 0), 0u) << message;  // starts with the file
    EXPECT_NE(message.find(field_and_problem), std::string::npos) << message;
  }
}

TEST(ClusterJson, WriteThenReadGivesAnIdenticalClusterForEveryPreset) {
  for (const std::string& name : cluster_preset_names()) {
    SCOPED_TRACE(name);
    const Cluster preset = cluster_preset(name);
    const std::filesystem::path path = testing::scratch_file(name + ".json");
    write_cluster_file(preset, path);
    const Cluster read_back = read_cluster_file(path);
    EXPECT_EQ(read_back, preset);
    EXPECT_EQ(cluster_json_text(read_back), cluster_json_text(preset));  // and the text is stable
  }
}

TEST(ClusterJson, RoundTripKeepsPlacementAndAlgorithms) {
  Cluster cluster = testing::two_level_cluster();
  cluster.placement = {3, 7, 11, 15, 0};
  cluster.cpu_cores_per_node = 3;
  cluster.algorithms = {Algorithm::bruck, Algorithm::tree, Algorithm::hierarchical, Algorithm::bruck};
  cluster.sources = {"a", "b"};
  cluster.device.conv_efficiency.half_efficiency_size = 0.1 + 0.2;  // a double without a short form
  EXPECT_EQ(parse_cluster_json(cluster_json_text(cluster), "memory"), cluster);
}

TEST(ClusterJson, SourcesAndPlacementAreOptional) {
  json document = valid_document();
  document.erase("sources");
  EXPECT_TRUE(parse_cluster_json(document.dump(), "doc").sources.empty());
  EXPECT_FALSE(document.contains("placement"));           // the writer leaves an empty placement out
  EXPECT_FALSE(document.contains("cpu_cores_per_node"));  // and unknown cores
  EXPECT_EQ(parse_cluster_json(document.dump(), "doc").cpu_cores_per_node, 0);
}

TEST(ClusterJson, IntegersMayBeWrittenInExponentForm) {
  json document = valid_document();
  document["device"]["memory_capacity_bytes"] = 8.589934592e10;
  EXPECT_EQ(parse_cluster_json(document.dump(), "doc").device.memory_capacity_bytes, 85'899'345'920);
  document["levels"][0]["fan_out"] = 2.5;
  EXPECT_THROW(parse_cluster_json(document.dump(), "doc"), ClusterError);
}

TEST(ClusterJsonErrors, MalformedJson) {
  const std::string path = write_text("malformed.json", R"({ "format": "splitbrain-cluster", "version": 1,)");
  try {
    read_cluster_file(path);
    FAIL() << "expected ClusterError";
  } catch (const ClusterError& error) {
    // The position, as editors take it: "<path>:<line>:<column>: not valid JSON: ...".
    EXPECT_EQ(std::string(error.what()).rfind(path + ":1:", 0), 0u) << error.what();
    EXPECT_NE(std::string(error.what()).find(": not valid JSON: "), std::string::npos) << error.what();
  }
}

TEST(ClusterJsonErrors, UnknownKey) {
  json document = valid_document();
  document["levels"][0]["link"]["bandwith_bytes_per_second"] = 1e9;
  expect_error(document, "levels[0].link.bandwith_bytes_per_second: unknown key");
}

TEST(ClusterJsonErrors, UnknownTopLevelKey) {
  json document = valid_document();
  document["algorithm"] = "ring";
  expect_error(document, ": algorithm: unknown key");
}

TEST(ClusterJson, RoundTripKeepsMeasuredKernels) {
  Cluster cluster = testing::two_level_cluster();
  cluster.device.measured_kernels["conv2d n8 c3 h34 w32 k16 r3x3 s1x1 p0,0,1,1 d1x1 g1 bias"] = {1.5e-3, 2.5e-3,
                                                                                                 3.5e-3};
  cluster.device.measured_kernels["conv2d n8 c16 h32 w32 k16 r3x3 s1x1 p1,1,1,1 d1x1 g1"] = {1e-3, 2e-3, 3e-3};
  // A GPU's: with the host's seconds to queue each pass.
  cluster.device.measured_kernels["linear m64 k512 n10 bias"] = {1e-5, 2e-5, 3e-5, 4e-5, 5e-5, 6e-5};
  cluster.device.last_level_cache_bytes = 32.0 * 1024 * 1024;
  EXPECT_EQ(parse_cluster_json(cluster_json_text(cluster), "memory"), cluster);
}

TEST(ClusterJson, RoundTripKeepsTheHostLink) {
  Cluster cluster = testing::two_level_cluster();
  cluster.device.host_transfer_latency_seconds = 1.5e-5;
  cluster.device.host_to_device_bytes_per_second = 1.2e10;
  cluster.device.launch_host_seconds = 4e-6;
  cluster.device.instruction_host_seconds = 6e-6;
  cluster.device.optimizer_tensors_per_kernel = 64;
  const Cluster back = parse_cluster_json(cluster_json_text(cluster), "memory");
  EXPECT_EQ(back, cluster);
  EXPECT_DOUBLE_EQ(back.device.host_to_device_bytes_per_second, 1.2e10);
}

TEST(ClusterJson, RoundTripKeepsTheGemmTable) {
  Cluster cluster = testing::two_level_cluster();
  GemmEfficiencyTable table;
  table.m = {1, 64};
  table.n = {512};
  table.k = {64, 4096};
  table.of(KernelPass::forward) = {0.1, 0.2, 0.3, 0.4};
  table.of(KernelPass::backward) = {0.15, 0.25, 0.35, 0.45};
  table.of(KernelPass::weight_gradient) = {0.1 + 0.2, 0.5, 0.6, 0.7};  // a double without a short form
  cluster.device.gemm_table = table;
  EXPECT_EQ(parse_cluster_json(cluster_json_text(cluster), "memory"), cluster);
}

// A document with a 2 x 1 x 1 gemm table to break one field at a time.
json document_with_gemm_table() {
  json document = valid_document();
  document["device"]["gemm_table"] = {{"m", {1, 64}},
                                      {"n", {512}},
                                      {"k", {1024}},
                                      {"forward", {0.1, 0.5}},
                                      {"backward_input", {0.1, 0.5}},
                                      {"weight_gradient", {0.1, 0.5}}};
  return document;
}

TEST(ClusterJsonErrors, GemmTableFields) {
  json document = document_with_gemm_table();
  document["device"]["gemm_table"]["forward"] = {0.1};
  expect_error(document, "device.gemm_table.forward: must hold 2 values (one per grid point: 2 m x 1 n x 1 k), got 1");
  document = document_with_gemm_table();
  document["device"]["gemm_table"]["weight_gradient"][1] = 0.0;
  expect_error(document, "device.gemm_table.weight_gradient[1]: must be between 1e-06 and 1, got 0");
  document = document_with_gemm_table();
  document["device"]["gemm_table"]["m"] = {64, 1};
  expect_error(document, "device.gemm_table.m[1]: sizes must ascend, got 1 after 64");
  document = document_with_gemm_table();
  document["device"]["gemm_table"]["k"] = {0.5};
  expect_error(document, "device.gemm_table.k[0]");
  document = document_with_gemm_table();
  document["device"]["gemm_table"].erase("backward_input");
  expect_error(document, "device.gemm_table.backward_input: missing required field");
  document = document_with_gemm_table();
  document["device"]["gemm_table"]["backward"] = {0.1, 0.5};
  expect_error(document, "device.gemm_table.backward: unknown key");
}

TEST(ClusterJsonErrors, MeasuredKernelSecondsMustNotBeNegative) {
  json document = valid_document();
  document["device"]["measured_kernels"] = json::array({{{"problem", "conv2d n1"},
                                                         {"forward_seconds", 1e-3},
                                                         {"backward_input_seconds", -1e-3},
                                                         {"backward_weight_seconds", 1e-3}}});
  expect_error(document,
               "device.measured_kernels['conv2d n1'].backward_input_seconds: must be between 0 and 1e+06, got -0.001");
}

TEST(ClusterJsonErrors, LastLevelCacheMustNotBeNegative) {
  json document = valid_document();
  document["device"]["last_level_cache_bytes"] = -1.0;
  expect_error(document, "device.last_level_cache_bytes: must be between 0 and");
}

TEST(ClusterJsonErrors, HostLinkNeedsABandwidth) {
  json document = valid_document();
  document["device"]["host_transfer"] = {{"latency_seconds", 1e-5}, {"host_to_device_bytes_per_second", 0.0}};
  expect_error(document, "device.host_transfer.host_to_device_bytes_per_second: must be positive");
  document["device"]["host_transfer"] = {{"latency_seconds", 1e-5}};
  expect_error(document, "device.host_transfer");
}

TEST(ClusterJsonErrors, AnOptimizerKernelTakesAtLeastOneTensor) {
  json document = valid_document();
  document["device"]["optimizer_tensors_per_kernel"] = 0;
  expect_error(document, "device.optimizer_tensors_per_kernel: must be 1 to 1048576");
  document["device"]["optimizer_tensors_per_kernel"] = 2.5;
  expect_error(document, "device.optimizer_tensors_per_kernel");
  document["device"]["optimizer_tensors_per_kernel"] = 64;
  EXPECT_EQ(parse_cluster_json(document.dump(), "x.json").device.optimizer_tensors_per_kernel, 64);
}

TEST(ClusterJsonErrors, HostQueuingTimesMustNotBeNegative) {
  json document = valid_document();
  document["device"]["launch_host_seconds"] = -1e-6;
  expect_error(document, "device.launch_host_seconds: must be zero or positive");
  document["device"]["launch_host_seconds"] = 1e-6;
  document["device"]["instruction_host_seconds"] = -1e-6;
  expect_error(document, "device.instruction_host_seconds: must be zero or positive");
  document = valid_document();
  document["device"]["measured_kernels"] = json::array({{{"problem", "relu 1024"},
                                                         {"forward_seconds", 1e-5},
                                                         {"backward_input_seconds", 1e-5},
                                                         {"backward_weight_seconds", 0.0},
                                                         {"forward_host_seconds", -1e-6}}});
  expect_error(document, "device.measured_kernels['relu 1024'].forward_host_seconds");
}

TEST(ClusterJsonErrors, MeasuredKernelListedTwice) {
  json document = valid_document();
  const json entry = {{"problem", "conv2d n1"},
                      {"forward_seconds", 1e-3},
                      {"backward_input_seconds", 1e-3},
                      {"backward_weight_seconds", 1e-3}};
  document["device"]["measured_kernels"] = json::array({entry, entry});
  expect_error(document, "device.measured_kernels[1].problem: listed twice");
}

TEST(ClusterJsonErrors, MissingField) {
  json document = valid_document();
  document["device"].erase("memory_bandwidth_bytes_per_second");
  expect_error(document, "device.memory_bandwidth_bytes_per_second: missing required field");
}

TEST(ClusterJsonErrors, NegativeBandwidth) {
  json document = valid_document();
  document["levels"][1]["link"]["bandwidth_bytes_per_second"] = -25e9;
  expect_error(document, "levels[1].link.bandwidth_bytes_per_second: must be between 1 and 1e+21, got -2.5e+10");
}

TEST(ClusterJsonErrors, UnknownAlgorithm) {
  json document = valid_document();
  document["algorithms"]["all_reduce"] = "butterfly";
  expect_error(document, "algorithms.all_reduce: unknown algorithm 'butterfly'");
}

TEST(ClusterJsonErrors, AlgorithmThatDoesNotImplementItsKind) {
  json document = valid_document();
  document["algorithms"]["all_to_all"] = "ring";
  expect_error(document, "algorithms.all_to_all: algorithm 'ring' does not implement all_to_all");
}

TEST(ClusterJsonErrors, ZeroDevices) {
  json document = valid_document();
  document["levels"][0]["fan_out"] = 0;
  expect_error(document, "levels[0].fan_out: must be at least 1");
}

TEST(ClusterJsonErrors, NoLevels) {
  json document = valid_document();
  document["levels"] = json::array();
  expect_error(document, "levels: must list at least one level");
}

TEST(ClusterJsonErrors, WrongType) {
  json document = valid_document();
  document["levels"][0]["fan_out"] = "4";
  expect_error(document, "levels[0].fan_out: expected an integer, got string");
}

TEST(ClusterJsonErrors, ZeroPeakFlops) {
  json document = valid_document();
  document["device"]["peak_flops_per_second"]["bf16"] = 0;
  expect_error(document, "device.peak_flops_per_second.bf16: must be between 1 and 1e+21, got 0");
}

// Finite values whose costs would not be: a latency summed over thousands of collectives, a
// bandwidth or rate that divides a byte or flop count to infinity, a subnormal efficiency.
TEST(ClusterJsonErrors, ValuesThatMakeACostNonFiniteAreRefused) {
  json document = valid_document();
  document["levels"][0]["link"]["latency_seconds"] = 1e308;
  expect_error(document, "levels[0].link.latency_seconds: must be between 0 and 1e+06, got 1e+308");
  document = valid_document();
  document["levels"][0]["link"]["bandwidth_bytes_per_second"] = 1e-300;
  expect_error(document, "levels[0].link.bandwidth_bytes_per_second: must be between 1 and 1e+21, got 1e-300");
  document = valid_document();
  document["device"]["peak_flops_per_second"]["fp32"] = 5e-324;
  expect_error(document, "device.peak_flops_per_second.fp32: must be between 1 and 1e+21");
  document = valid_document();
  document["device"]["efficiency"]["gemm"]["max_efficiency"] = 5e-324;
  expect_error(document, "device.efficiency.gemm.max_efficiency: must be between 1e-06 and 1");
}

TEST(ClusterJsonErrors, EfficiencyAboveOne) {
  json document = valid_document();
  document["device"]["efficiency"]["conv"]["max_efficiency"] = 1.2;
  expect_error(document, "device.efficiency.conv.max_efficiency: must be between 1e-06 and 1, got 1.2");
}

TEST(ClusterJsonErrors, PlacementOutOfRange) {
  json document = valid_document();
  document["placement"] = {0, 1, 16};
  expect_error(document, "placement[2]: device 16 does not exist");
}

TEST(ClusterJsonErrors, WrongFormatOrVersion) {
  json document = valid_document();
  document["format"] = "splitbrain-plan";
  expect_error(document, "format: expected \"splitbrain-cluster\"");
  document = valid_document();
  document["version"] = 2;
  expect_error(document, "version: unsupported version 2");
}

TEST(ClusterJsonErrors, DuplicateKey) {
  std::string text = cluster_json_text(testing::two_level_cluster());
  text.replace(text.find("\"name\""), 6, "\"name\": \"x\", \"name\"");
  const std::string path = write_text("duplicate.json", text);
  try {
    read_cluster_file(path);
    FAIL() << "expected ClusterError";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()), path + ": duplicate key 'name'");
  }
}

TEST(ClusterJsonErrors, MissingFile) {
  const std::string path = (testing::scratch_file("none") / "absent.json").string();
  try {
    read_cluster_file(path);
    FAIL() << "expected ClusterError";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path + ": cannot open cluster file", 0), 0u) << error.what();
  }
}

TEST(ClusterJson, CalibratedFieldsRoundTrip) {
  // What `splitbrain calibrate` adds: backward curves, links per collective kind, the overlap.
  Cluster cluster = testing::two_level_cluster();
  cluster.device.backward.conv = EfficiencyCurve{0.4, 3e9};
  cluster.device.backward.memory = EfficiencyCurve{0.5, 2e6};
  cluster.levels[0].collective_links[plans::CollectiveKind::all_to_all] = {20e9, 2e-6};
  cluster.levels[0].collective_links[plans::CollectiveKind::send_recv] = {40e9, 3e-6};
  cluster.levels[1].uplink_shared = true;
  cluster.levels[1].send_overhead = {48e-6, 1e-10};
  cluster.levels[1].receive_overhead = {190e-6, 0.0};
  cluster.levels[1].link.bandwidth_factors = {{8192.0, 131072.0, 1048576.0}, {1.5, 2.75, 1.0}};
  cluster.communication_overlap = 0.25;
  const std::filesystem::path path = testing::scratch_file("calibrated.json");
  write_cluster_file(cluster, path);
  const Cluster read_back = read_cluster_file(path);
  EXPECT_EQ(read_back, cluster);
  // Absent backward curves fall back to the forward ones.
  EXPECT_EQ(read_back.device.efficiency(OpClass::gemm, KernelPass::backward), cluster.device.gemm_efficiency);
  EXPECT_EQ(read_back.device.efficiency(OpClass::conv, KernelPass::backward), (EfficiencyCurve{0.4, 3e9}));
}

TEST(ClusterJson, BadCalibratedFieldsAreNamed) {
  json document = valid_document();
  document["device"]["backward_efficiency"] = {{"conv", {{"max_efficiency", 1.5}, {"half_efficiency_flops", 1e9}}}};
  expect_error(document, "device.backward_efficiency.conv.max_efficiency: must be between 1e-06 and 1, got 1.5");
  document = valid_document();
  document["levels"][0]["collective_links"] = {
      {"all_gatherr", {{"bandwidth_bytes_per_second", 1e9}, {"latency_seconds", 0}}}};
  expect_error(document, "levels[0].collective_links.all_gatherr: unknown key");
  document = valid_document();
  document["levels"][0]["collective_links"] = {
      {"all_gather", {{"bandwidth_bytes_per_second", -1}, {"latency_seconds", 0}}}};
  expect_error(document,
               "levels[0].collective_links.all_gather.bandwidth_bytes_per_second: must be between 1 and 1e+21, got -1");
  document = valid_document();
  document["levels"][1]["link"]["bandwidth_factors"] = {{"buffer_bytes", {1e3, 1e4}}, {"factors", {2.0}}};
  expect_error(document, "levels[1].link.bandwidth_factors: buffer_bytes and factors must have the same length");
  document["levels"][1]["link"]["bandwidth_factors"] = {{"buffer_bytes", {1e4, 1e3}}, {"factors", {2.0, 1.0}}};
  expect_error(document, "levels[1].link.bandwidth_factors.buffer_bytes[1]: must be positive and increasing");
  document["levels"][1]["link"]["bandwidth_factors"] = {{"buffer_bytes", {1e3, 1e4}}, {"factors", {0.0, 1.0}}};
  expect_error(document, "levels[1].link.bandwidth_factors.factors[0]: must be between 0.001 and 1000, got 0");
  document = valid_document();
  document["levels"][1]["uplink_shared"] = "yes";
  expect_error(document, "levels[1].uplink_shared: expected true or false, got string \"yes\"");
  document = valid_document();
  document["levels"][1]["send_overhead"] = {{"seconds", -1e-6}, {"seconds_per_byte", 0}};
  expect_error(document, "levels[1].send_overhead.seconds: must be between 0 and 1e+06, got -1e-06");
  document["levels"][1]["send_overhead"] = {{"seconds", 0}, {"seconds_per_byte", 0}, {"per_message", 1}};
  expect_error(document, "levels[1].send_overhead.per_message: unknown key");
  document = valid_document();
  document["levels"][1]["receive_overhead"] = {{"seconds", 0}, {"seconds_per_byte", 1e-3}};
  expect_error(document, "levels[1].receive_overhead.seconds_per_byte: must be between 0 and 1e-06, got 0.001");
  document = valid_document();
  document["communication_overlap"] = 1.5;
  expect_error(document, "communication_overlap: must be in [-1, 1]");
  document["communication_overlap"] = -1.5;
  expect_error(document, "communication_overlap: must be in [-1, 1]");
  document = valid_document();
  document["cpu_cores_per_node"] = -1;
  expect_error(document, "cpu_cores_per_node: must be 0 (not known) to 1048576");
  document["cpu_cores_per_node"] = 1e12;
  expect_error(document, "cpu_cores_per_node: must be 0 (not known) to 1048576");
}

}  // namespace
}  // namespace splitbrain::sim
