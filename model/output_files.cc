#include "model/output_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <utility>

#include "model/errors.h"
#include "model/file_io.h"

namespace splitbrain {

OutputFiles::~OutputFiles() { discard(); }

void OutputFiles::add_text(std::string_view flag, const std::string& path, std::string text) {
  if (path == "-") {
    standard_output_.push_back(std::move(text));
    return;
  }
  add_file(flag, path,
           [text = std::move(text)](const std::filesystem::path& file) { write_file_atomically(file, text); });
}

void OutputFiles::add_json(std::string_view flag, const std::string& path, const nlohmann::json& document) {
  add_text(flag, path, document.dump(2) + "\n");
}

void OutputFiles::add_json(std::string_view flag, const std::string& path, const nlohmann::ordered_json& document) {
  add_text(flag, path, document.dump(2) + "\n");
}

void OutputFiles::add_file(std::string_view flag, const std::filesystem::path& path, Writer write) {
  files_.push_back({std::string(flag), path, std::move(write), {}});
}

void OutputFiles::write_all() {
  for (Output& file : files_) {
    // The folders first: a fresh --emit-plans or --export-dir folder, removed again on failure.
    std::error_code ec;
    std::vector<std::filesystem::path> missing;
    for (std::filesystem::path folder = file.path.parent_path();
         !folder.empty() && !std::filesystem::exists(folder, ec); folder = folder.parent_path()) {
      missing.push_back(folder);
    }
    for (auto folder = missing.rbegin(); folder != missing.rend(); ++folder) {
      if (!std::filesystem::create_directory(*folder, ec) && ec) {
        throw InputError(fmt::format("{} {}: cannot make the folder {}: {}", file.flag, file.path.string(),
                                     folder->string(), ec.message()));
      }
      made_folders_.push_back(*folder);
    }
    file.temporary = file.path;
    file.temporary += fmt::format(".partial.{}", ::getpid());
    try {
      file.write(file.temporary);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: not written: {}", file.flag, file.path.string(), e.what()));
    }
  }
  // Every file is whole: from here on only renames within their folders, which do not fail
  // for want of space.
  for (Output& file : files_) {
    std::error_code ec;
    std::filesystem::rename(file.temporary, file.path, ec);
    if (ec) {
      throw InputError(fmt::format("{} {}: cannot rename the finished file into place: {}", file.flag,
                                   file.path.string(), ec.message()));
    }
    file.temporary.clear();
  }
  files_.clear();
  made_folders_.clear();
  for (const std::string& text : standard_output_) std::cout << text << std::flush;
  standard_output_.clear();
}

void OutputFiles::discard() {
  std::error_code ec;
  for (const Output& file : files_) {
    if (!file.temporary.empty()) std::filesystem::remove(file.temporary, ec);
  }
  // Innermost first; a folder that holds something (a file renamed in before a failure) stays.
  for (auto folder = made_folders_.rbegin(); folder != made_folders_.rend(); ++folder)
    std::filesystem::remove(*folder, ec);
  files_.clear();
  made_folders_.clear();
}

}  // namespace splitbrain
