#pragma once
// What the export tests share: fresh output folders, reading what was written, golden files in
// tests/cli/golden/export/, refusals and the `export` command line.

#include <filesystem>
#include <string>
#include <vector>

#include "tests/cli/run_command.h"

namespace splitbrain::testing_support {

extern const std::filesystem::path kExportGoldenDir;

std::string read_file(const std::filesystem::path& path);

// An empty folder `name` in the test's scratch directory (removed first if it exists).
std::filesystem::path fresh_dir(const std::string& name);

// Every file of `files` in `produced` equals the one in golden folder `golden`; with
// SPLITBRAIN_UPDATE_GOLDEN=1 in the environment the produced files replace the goldens instead.
void expect_golden(const std::filesystem::path& produced, const std::string& golden,
                   const std::vector<std::string>& files);

// Exit code 2 and every one of `parts` in the message.
void expect_refused(const CommandResult& r, const std::vector<std::string>& parts);

std::string export_command(const std::string& plan_file, const std::string& format, const std::filesystem::path& dir,
                           const std::string& cluster = "local-cpu");

// The single folder `plan --export --export-dir dir` wrote (one plan exported).
std::filesystem::path only_plan_dir(const std::filesystem::path& dir);

}  // namespace splitbrain::testing_support
