#pragma once
// Reading and writing whole files the way every splitbrain command does: errors that name the
// file, and writes that never leave a half-written file behind (temp file, then rename).
// Lives in model/ because it is the bottom library every other one links.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

namespace splitbrain {

// Throws InputError("<path>: cannot open: <reason>") when the file cannot be read.
std::string read_text_file(const std::filesystem::path& path);
// Writes `content` to a temporary file next to `path`, then renames it over `path`.
// Throws InputError naming the file when it cannot be written (a bad output path is bad input).
void write_file_atomically(const std::filesystem::path& path, std::string_view content);
// Checks, before long work, that `path` (an output file; "-" is standard output) can be written
// later: its folder exists and a file can be made in it. Throws InputError naming `flag`, the
// path and why. Leaves nothing behind.
void check_output_path(const std::string& path, std::string_view flag);
// The same for an output folder: it is a folder a file can be made in, or it can be made (the
// nearest folder above it that exists takes new entries). Leaves nothing behind.
void check_output_folder(const std::string& folder, std::string_view flag);
// Writes text to a file atomically, or to standard output when path is "-".
void write_text_output(const std::string& path, std::string_view text);
// Writes pretty JSON to a file atomically, or to standard output when path is "-".
void write_json_output(const std::string& path, const nlohmann::json& document);
void write_json_output(const std::string& path, const nlohmann::ordered_json& document);

}  // namespace splitbrain
