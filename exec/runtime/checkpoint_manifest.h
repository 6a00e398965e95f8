#pragma once
// The manifest of a checkpoint (DIR/checkpoint.json): which step it holds, the run it belongs
// to (model, mesh, batch, optimizer, ZeRO stage) and, per rank, its data file with the file's
// size and CRC-32 and the layout of every array in it (which block of which tensor). A resume
// compares all of it with the run it is asked to continue, so a damaged file, files of different
// steps, a checkpoint of another sharding with the same sizes or of another optimizer are each
// refused with what differs, instead of loading into the wrong place.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace splitbrain::exec {

struct CheckpointRankFile {
  std::string file;  // relative to the checkpoint folder
  int64_t bytes = 0;
  uint32_t crc32 = 0;
  std::vector<std::string> layout;  // one line per array, in the file's order
};

struct CheckpointManifest {
  int64_t step = 0;
  std::string model;
  std::string mesh;
  int64_t batch = 0;
  std::string optimizer;
  int zero_stage = 0;
  std::vector<CheckpointRankFile> ranks;
};

nlohmann::json manifest_to_json(const CheckpointManifest& manifest);
// Throws InputError naming `source` and the field for anything missing or mistyped.
CheckpointManifest manifest_from_json(const nlohmann::json& document, const std::string& source);

// The first difference between what a checkpoint was written for and the run resuming it, as
// "<field>: the checkpoint was written for X, this run is Y" (empty: none). Compares the run's
// identity and, for `rank`, the layout of its arrays.
std::string manifest_mismatch(const CheckpointManifest& checkpoint, const CheckpointManifest& run, int rank);

// CRC-32 (zlib's) of `bytes`.
uint32_t checksum(std::string_view bytes);

}  // namespace splitbrain::exec
