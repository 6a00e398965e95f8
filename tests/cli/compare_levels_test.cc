// `compare` lines the prediction's bytes per cluster level up with the measured bytes within a
// host and across hosts, when the ranks' hosts are the prediction's nodes, and says why not
// otherwise.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {
namespace {

const std::string kSource = SPLITBRAIN_SOURCE_DIR;
// {data: 2, model: 2} on two nodes of two ranks: the model axis inside a node, data between.
const std::string kPlan = kSource + "/plans/examples/vgg11-cifar10-gholami-grid-4.json";
const std::string kCluster = kSource + "/results/emulated-nodes/clusters/emulated-2x2.json";

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Reports {
  std::string predicted_path;
  nlohmann::json measured;  // the prediction's numbers, placed on the prediction's nodes
};

Reports reports(const std::string& name) {
  Reports r{write_temp_file(name + "-predicted.json", ""), {}};
  const CommandResult simulated =
      run_splitbrain("simulate --plan " + kPlan + " --cluster " + kCluster + " --json " + r.predicted_path);
  EXPECT_EQ(simulated.exit_code, 0) << simulated.err;
  r.measured = nlohmann::json::parse(read_file(r.predicted_path));
  r.measured["format"] = "splitbrain-measurement";
  r.measured["steps"] = 10;  // a run report says how many steps it took
  for (nlohmann::json& rank : r.measured["ranks"]) {
    rank["placement"] = {{"host", "node" + std::to_string(rank["node"].get<int>())}, {"cpus", {0}}, {"by", "none"}};
    rank["comm_bytes_sent_per_host_level"] = {{"within_host", rank["comm_bytes_sent_per_level"]["node"]},
                                              {"across_hosts", rank["comm_bytes_sent_per_level"]["cluster"]}};
    rank.erase("comm_bytes_sent_per_level");
    rank.erase("node");
  }
  return r;
}

CommandResult compare(const Reports& r, const nlohmann::json& measured, const std::string& name,
                      const std::string& out_dir = "") {
  const std::string path = write_temp_file(name + "-measured.json", measured.dump());
  const std::string out = out_dir.empty() ? "" : " --out " + out_dir;
  return run_splitbrain("compare --no-figures" + out + " " + r.predicted_path + " " + path);
}

TEST(CliCompareLevels, EqualBytesPerLevelArePrintedSideBySide) {
  const Reports r = reports("levels-equal");
  const std::string out = (std::filesystem::temp_directory_path() / "compare-levels").string();
  std::filesystem::remove_all(out);
  const CommandResult c = compare(r, r.measured, "levels-equal", out);
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("bytes per level: within a host = the prediction's node, across hosts = cluster"),
            std::string::npos)
      << c.out;
  // vgg11's grid: 16,909,568 bytes a step over the model axis inside a node, 56,288,020 over data.
  EXPECT_NE(c.out.find("within_host   16,909,568  16,909,568  yes"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("across_hosts  56,288,020  56,288,020  yes"), std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("NO"), std::string::npos) << c.out;
  const nlohmann::json written = nlohmann::json::parse(read_file(out + "/comparison.json"));
  EXPECT_TRUE(written["bytes_per_host_level"]["mapped"].get<bool>());
  EXPECT_TRUE(written["bytes_per_host_level"]["equal"].get<bool>());
  EXPECT_EQ(written["bytes_per_host_level"]["ranks"].size(), 4u);
}

TEST(CliCompareLevels, ADifferenceAtOneLevelIsFlagged) {
  const Reports r = reports("levels-differ");
  nlohmann::json measured = r.measured;
  // The same total, one message counted at the wrong level.
  measured["ranks"][2]["comm_bytes_sent_per_host_level"]["within_host"] = 16909568 - 1024;
  measured["ranks"][2]["comm_bytes_sent_per_host_level"]["across_hosts"] = 56288020 + 1024;
  const CommandResult c = compare(r, measured, "levels-differ");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("2  within_host   16,909,568  16,908,544  NO"), std::string::npos) << c.out;
}

TEST(CliCompareLevels, SaysWhyWhenTheLevelsCannotBeLinedUp) {
  const Reports r = reports("levels-unmapped");
  nlohmann::json one_host = r.measured;
  for (nlohmann::json& rank : one_host["ranks"]) rank["placement"]["host"] = "node0";
  const CommandResult shared = compare(r, one_host, "levels-one-host");
  ASSERT_EQ(shared.exit_code, 0) << shared.err;
  EXPECT_NE(
      shared.out.find("bytes per level: not compared: the ranks' hosts are not the prediction's nodes (rank 2 runs "
                      "on host node0 with ranks of the prediction's node 0, but the prediction puts it on node 1)"),
      std::string::npos)
      << shared.out;

  nlohmann::json unsplit = r.measured;
  unsplit["ranks"][1].erase("comm_bytes_sent_per_host_level");
  const CommandResult older = compare(r, unsplit, "levels-unsplit");
  ASSERT_EQ(older.exit_code, 0) << older.err;
  EXPECT_NE(older.out.find("not compared: "), std::string::npos) << older.out;
  EXPECT_NE(older.out.find("ranks[1] has no comm_bytes_sent_per_host_level"), std::string::npos) << older.out;

  nlohmann::json mistyped = r.measured;
  mistyped["ranks"][3]["comm_bytes_sent_per_host_level"]["across_hosts"] = "lots";
  const CommandResult bad = compare(r, mistyped, "levels-mistyped");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("ranks[3].comm_bytes_sent_per_host_level.across_hosts: expected a number"), std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace splitbrain::testing_support
