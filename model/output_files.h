#pragma once
// The output files of one command, written all or none: a command that fails part-way (a folder
// that cannot be made, a full disk, an export that cannot be expressed) leaves none of them, not
// the ones it happened to write first. Paths are checked before long work with
// check_output_path / check_output_folder (file_io.h); the contents are given here once known.
//
//   OutputFiles outputs;
//   outputs.add_text("--csv", csv_path, csv);
//   outputs.add_json("--json", json_path, report);
//   outputs.write_all();  // every file, or none and an InputError naming the flag and the file

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace splitbrain {

class OutputFiles {
 public:
  // Writes a whole file at the path it is given (a temporary name beside the output's).
  using Writer = std::function<void(const std::filesystem::path& file)>;

  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles();  // removes what an unfinished write_all left

  // `path` "-" is standard output, printed after every file is in place. `flag` names the
  // output in errors.
  void add_text(std::string_view flag, const std::string& path, std::string text);
  void add_json(std::string_view flag, const std::string& path, const nlohmann::json& document);
  void add_json(std::string_view flag, const std::string& path, const nlohmann::ordered_json& document);
  // A file written by `write` (a library's own save function), into a folder made if missing.
  void add_file(std::string_view flag, const std::filesystem::path& path, Writer write);

  // Writes every file to a temporary name beside it, then renames them all into place; on a
  // failure removes the temporaries and the folders it made, and throws InputError naming the
  // flag and the file. Then prints the standard-output ones.
  void write_all();

 private:
  struct Output {
    std::string flag;
    std::filesystem::path path;
    Writer write;
    std::filesystem::path temporary;  // set once written
  };
  void discard();

  std::vector<Output> files_;
  std::vector<std::string> standard_output_;
  std::vector<std::filesystem::path> made_folders_;  // outermost first
};

}  // namespace splitbrain
