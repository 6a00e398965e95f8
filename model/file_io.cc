#include "model/file_io.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/errors.h"

namespace splitbrain {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temporary = path.string() + fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary);
      throw InputError(fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary);
    throw InputError(fmt::format("{}: cannot rename the finished file into place: {}", path.string(), ec.message()));
  }
}

namespace {

// Makes and removes `probe`; false (errno set) when it cannot be made.
bool can_create(const std::filesystem::path& probe) {
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) return false;
  }
  std::error_code ec;
  std::filesystem::remove(probe, ec);
  return true;
}

}  // namespace

void check_output_path(const std::string& path, std::string_view flag) {
  if (path == "-") return;
  const std::filesystem::path file(path);
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw InputError(fmt::format("{} {}: is a folder, not a file", flag, path));
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(folder, ec)) {
    throw InputError(fmt::format("{} {}: folder {} does not exist", flag, path, folder.string()));
  }
  if (!can_create(path + fmt::format(".probe.{}", ::getpid())))
    throw InputError(fmt::format("{} {}: cannot write: {}", flag, path, std::strerror(errno)));
}

void check_output_folder(const std::string& folder, std::string_view flag) {
  std::error_code ec;
  // The folder itself when it exists, else the nearest one above it that would hold it.
  std::filesystem::path existing(folder);
  while (!existing.empty() && !std::filesystem::exists(existing, ec)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  if (!std::filesystem::is_directory(existing, ec)) {
    throw InputError(existing == folder
                         ? fmt::format("{} {}: is a file, not a folder", flag, folder)
                         : fmt::format("{} {}: {} is a file, not a folder", flag, folder, existing.string()));
  }
  if (!can_create(existing / fmt::format(".splitbrain-probe.{}", ::getpid()))) {
    const std::string reason = std::strerror(errno);
    throw InputError(existing == folder
                         ? fmt::format("{} {}: cannot write into it: {}", flag, folder, reason)
                         : fmt::format("{} {}: cannot make it in {}: {}", flag, folder, existing.string(), reason));
  }
}

void write_text_output(const std::string& path, std::string_view text) {
  if (path == "-") {
    std::cout << text << std::flush;
  } else {
    write_file_atomically(path, text);
  }
}

void write_json_output(const std::string& path, const nlohmann::json& document) {
  write_text_output(path, document.dump(2) + "\n");
}

void write_json_output(const std::string& path, const nlohmann::ordered_json& document) {
  write_text_output(path, document.dump(2) + "\n");
}

}  // namespace splitbrain
