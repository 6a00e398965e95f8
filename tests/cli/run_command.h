#pragma once
// Runs the splitbrain binary the way a user does, capturing exit code and output.

#include <filesystem>
#include <string>

namespace splitbrain::testing_support {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs `splitbrain <arguments>` through the shell (arguments are passed as written).
CommandResult run_splitbrain(const std::string& arguments);
// This test process's own folder in the temp directory (made if missing).
std::filesystem::path scratch_directory();
// Writes `content` to a fresh file in scratch_directory() and returns its path.
std::string write_temp_file(const std::string& name, const std::string& content);

}  // namespace splitbrain::testing_support
