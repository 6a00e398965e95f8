#pragma once
// Runs the splitbrain binary the way a user does, capturing exit code and output.

#include <string>

namespace splitbrain::testing_support {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs `splitbrain <arguments>` through the shell (arguments are passed as written).
CommandResult run_splitbrain(const std::string& arguments);
// Writes `content` to a fresh file in the temp directory and returns its path.
std::string write_temp_file(const std::string& name, const std::string& content);

}  // namespace splitbrain::testing_support
