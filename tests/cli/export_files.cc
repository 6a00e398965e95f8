// Helpers of the export tests.

#include "tests/cli/export_files.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

namespace splitbrain::testing_support {

namespace fs = std::filesystem;

const fs::path kExportGoldenDir = fs::path(SPLITBRAIN_SOURCE_DIR) / "tests" / "cli" / "golden" / "export";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(write_temp_file(name + "-marker", "")).parent_path() / name;
  fs::remove_all(dir);
  return dir;
}

void expect_golden(const fs::path& produced, const std::string& golden, const std::vector<std::string>& files) {
  const fs::path golden_dir = kExportGoldenDir / golden;
  const char* update = std::getenv("SPLITBRAIN_UPDATE_GOLDEN");
  for (const auto& file : files) {
    ASSERT_TRUE(fs::exists(produced / file)) << (produced / file);
    if (update != nullptr && std::string(update) == "1") {
      fs::create_directories(golden_dir);
      fs::copy_file(produced / file, golden_dir / file, fs::copy_options::overwrite_existing);
      continue;
    }
    EXPECT_EQ(read_file(produced / file), read_file(golden_dir / file))
        << (golden_dir / file) << " differs from " << (produced / file)
        << " (bash tools/regenerate-export-goldens.sh rewrites the goldens)";
  }
}

void expect_refused(const CommandResult& r, const std::vector<std::string>& parts) {
  EXPECT_EQ(r.exit_code, 2) << "stdout: " << r.out << "\nstderr: " << r.err;
  for (const auto& part : parts) EXPECT_NE(r.err.find(part), std::string::npos) << part << "\nstderr: " << r.err;
}

std::string export_command(const std::string& plan_file, const std::string& format, const fs::path& dir,
                           const std::string& cluster) {
  return "export --plan " + plan_file + " --format " + format + " --cluster " + cluster + " -o " + dir.string();
}

fs::path only_plan_dir(const fs::path& dir) {
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}), 1) << dir;
  return fs::directory_iterator(dir)->path();
}

}  // namespace splitbrain::testing_support
