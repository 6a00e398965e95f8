#pragma once
// Whole data files into memory, gunzipped when they are gzip streams. The data sets are small
// (Fashion-MNIST's training images are 47 MB decompressed), so one read per process and then
// gathers from memory beat any streaming scheme, and keep the readers simple.

#include <cstdint>
#include <filesystem>
#include <vector>

namespace splitbrain::exec::data {

// Returns the file's bytes, decompressed when the content starts with the gzip magic (1f 8b), so
// "x.gz" and an already-extracted "x" read alike whatever the name says. Throws InputError naming
// the file for a missing or unreadable file and for a corrupt or truncated gzip stream.
std::vector<uint8_t> read_data_file(const std::filesystem::path& path);

// The first of `candidates` that exists; when none does, throws InputError naming the first and
// listing the others that were tried.
std::filesystem::path find_data_file(const std::vector<std::filesystem::path>& candidates);

}  // namespace splitbrain::exec::data
