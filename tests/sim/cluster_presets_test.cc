#include "sim/cluster_presets.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/cluster_error.h"
#include "sim/cluster_json.h"
#include "test_clusters.h"

namespace splitbrain::sim {
namespace {

const std::filesystem::path kPresetDir = std::filesystem::path(SPLITBRAIN_SOURCE_DIR) / "sim" / "clusters";

TEST(ClusterPresets, TheShippedSet) {
  EXPECT_EQ(cluster_preset_names(),
            (std::vector<std::string>{"cori-knl", "dgx-a100-80g", "dgx-h100", "local-cpu", "v100-pcie-10gbe"}));
}

TEST(ClusterPresets, EveryPresetLoadsAndDocumentsItself) {
  for (const std::string& name : cluster_preset_names()) {
    SCOPED_TRACE(name);
    const Cluster cluster = cluster_preset(name);
    EXPECT_EQ(cluster.name, name);
    EXPECT_FALSE(cluster.description.empty());
    EXPECT_FALSE(cluster.sources.empty());
    EXPECT_GE(device_count(cluster), 2);
  }
}

TEST(ClusterPresets, CompiledInCopiesEqualTheFilesInTheSourceTree) {
  std::vector<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kPresetDir)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    on_disk.push_back(name);
    EXPECT_EQ(read_cluster_file(entry.path()), cluster_preset(name)) << name;
  }
  std::sort(on_disk.begin(), on_disk.end());
  EXPECT_EQ(on_disk, cluster_preset_names());  // every file is compiled in, and nothing else
}

TEST(ClusterPresets, VendorNumbers) {
  const Cluster a100 = cluster_preset("dgx-a100-80g");
  EXPECT_EQ(a100.device.peak_fp32_flops_per_second, 19.5e12);
  EXPECT_EQ(a100.device.peak_bf16_flops_per_second, 312e12);
  EXPECT_EQ(a100.device.memory_bandwidth_bytes_per_second, 2039e9);
  EXPECT_EQ(a100.levels[0].fan_out, 8);
  EXPECT_EQ(a100.levels[0].link.bandwidth_bytes_per_second, 300e9);
  EXPECT_EQ(a100.levels[1].link.bandwidth_bytes_per_second, 200e9 / 8);  // HDR 200 Gb/s per GPU

  const Cluster h100 = cluster_preset("dgx-h100");
  EXPECT_EQ(h100.device.peak_fp16_flops_per_second, 989e12);
  EXPECT_EQ(h100.levels[1].link.bandwidth_bytes_per_second, 400e9 / 8);  // NDR 400 Gb/s per GPU

  const Cluster v100 = cluster_preset("v100-pcie-10gbe");
  EXPECT_EQ(v100.levels[0].fan_out, 4);
  EXPECT_EQ(v100.levels[1].link.bandwidth_bytes_per_second, 10e9 / 8);  // 10 GbE

  const Cluster cori = cluster_preset("cori-knl");
  EXPECT_EQ(cori.levels.size(), 1u);  // flat: every pair alike
  EXPECT_GE(device_count(cori), 1024);
  EXPECT_EQ(cori.levels[0].link, (Link{6e9, 2e-6}));
  EXPECT_EQ(cori.algorithms.all_gather, Algorithm::bruck);
  EXPECT_EQ(cori.algorithms.all_reduce, Algorithm::bruck);

  const Cluster local = cluster_preset("local-cpu");
  EXPECT_EQ(device_count(local), 2);
  EXPECT_NE(local.description.find("splitbrain calibrate"), std::string::npos);
}

TEST(ClusterPresets, ResolveTakesAPresetNameOrAPath) {
  EXPECT_EQ(resolve_cluster("dgx-h100"), cluster_preset("dgx-h100"));
  Cluster custom = testing::two_level_cluster();
  const std::filesystem::path path = testing::scratch_file("custom.json");
  write_cluster_file(custom, path);
  EXPECT_EQ(resolve_cluster(path.string()), custom);
}

TEST(ClusterPresets, ANodeCountResizesTheOuterNetwork) {
  const Cluster selene = resolve_cluster("dgx-a100-80g:nodes=384");
  EXPECT_EQ(device_count(selene), 3072);
  EXPECT_EQ(selene.name, "dgx-a100-80g:nodes=384");
  Cluster expected = cluster_preset("dgx-a100-80g");
  expected.levels.back().fan_out = 384;
  expected.name = selene.name;
  EXPECT_EQ(selene, expected);
  for (const char* wrong : {"dgx-a100-80g:nodes=0", "dgx-a100-80g:nodes=", "dgx-a100-80g:gpus=8",
                            "dgx-a100-80g:nodes=12x", "dgx-a100-80g:nodes=99999999999"}) {
    try {
      resolve_cluster(wrong);
      ADD_FAILURE() << wrong << ": expected ClusterError";
    } catch (const ClusterError& error) {
      EXPECT_NE(std::string(error.what()).find("nodes=N"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(resolve_cluster("local-cpu:nodes=2"), ClusterError);  // one level: no network above nodes
  EXPECT_THROW(resolve_cluster("dgx-a200:nodes=2"), ClusterError);
}

TEST(ClusterPresets, UnknownNameListsThePresets) {
  try {
    resolve_cluster("dgx-a200");
    FAIL() << "expected ClusterError";
  } catch (const ClusterError& error) {
    EXPECT_EQ(std::string(error.what()),
              "'dgx-a200' is neither a cluster preset (cori-knl, dgx-a100-80g, dgx-h100, local-cpu, "
              "v100-pcie-10gbe) nor a cluster file");
  }
  EXPECT_THROW(cluster_preset("nope"), ClusterError);
}

}  // namespace
}  // namespace splitbrain::sim
