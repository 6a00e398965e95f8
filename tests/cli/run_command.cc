#include "tests/cli/run_command.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace splitbrain::testing_support {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::filesystem::path scratch_directory() {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("splitbrain_cli_tests_{}", ::getpid());
  std::filesystem::create_directories(dir);
  return dir;
}

CommandResult run_splitbrain(const std::string& arguments) {
  const auto dir = scratch_directory();
  const auto out_path = dir / "stdout";
  const auto err_path = dir / "stderr";
  const std::string command =
      fmt::format("{} {} > {} 2> {} < /dev/null", SPLITBRAIN_BINARY, arguments, out_path.string(), err_path.string());
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) throw std::runtime_error("could not run: " + command);
  return {WEXITSTATUS(status), slurp(out_path), slurp(err_path)};
}

std::string write_temp_file(const std::string& name, const std::string& content) {
  const auto path = scratch_directory() / name;
  std::ofstream(path) << content;
  return path.string();
}

}  // namespace splitbrain::testing_support
