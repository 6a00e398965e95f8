#include "exec/runtime/checkpoint_manifest.h"

#include <fmt/format.h>
#include <zlib.h>

#include "model/errors.h"
#include "model/json_object_reader.h"

namespace splitbrain::exec {
namespace {

constexpr std::string_view kFormat = "splitbrain-checkpoint";
constexpr int kVersion = 2;

template <class T>
std::string differs(std::string_view field, const T& checkpoint, const T& run) {
  return fmt::format("{}: the checkpoint was written for {}, this run is {}", field, checkpoint, run);
}

}  // namespace

nlohmann::json manifest_to_json(const CheckpointManifest& manifest) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const CheckpointRankFile& rank : manifest.ranks) {
    ranks.push_back({{"file", rank.file}, {"bytes", rank.bytes}, {"crc32", rank.crc32}, {"layout", rank.layout}});
  }
  return {{"format", kFormat},
          {"version", kVersion},
          {"step", manifest.step},
          {"model", manifest.model},
          {"mesh", manifest.mesh},
          {"batch", manifest.batch},
          {"optimizer", manifest.optimizer},
          {"zero_stage", manifest.zero_stage},
          {"ranks", ranks}};
}

CheckpointManifest manifest_from_json(const nlohmann::json& document, const std::string& source) {
  JsonObjectReader top(document, source);
  if (top.required_string("format") != kFormat) top.fail("format", fmt::format("expected \"{}\"", kFormat));
  if (const int64_t version = top.required_int("version"); version != kVersion) {
    top.fail("version", fmt::format("this splitbrain reads checkpoints of version {}, not {}", kVersion, version));
  }
  CheckpointManifest manifest;
  manifest.step = top.required_int("step");
  manifest.model = top.required_string("model");
  manifest.mesh = top.required_string("mesh");
  manifest.batch = top.required_int("batch");
  manifest.optimizer = top.required_string("optimizer");
  manifest.zero_stage = top.required_int32("zero_stage");
  JsonArrayReader ranks = top.array("ranks");
  for (size_t r = 0; r < ranks.size(); ++r) {
    JsonObjectReader rank = ranks.object_at(r);
    CheckpointRankFile file;
    file.file = rank.required_string("file");
    file.bytes = rank.required_int("bytes");
    const int64_t crc = rank.required_int("crc32");
    if (crc < 0 || crc > 0xffffffffLL) rank.fail("crc32", "expected a 32-bit checksum");
    file.crc32 = static_cast<uint32_t>(crc);
    JsonArrayReader layout = rank.array("layout");
    for (size_t i = 0; i < layout.size(); ++i) file.layout.push_back(layout.string_at(i));
    rank.reject_unknown_keys();
    manifest.ranks.push_back(std::move(file));
  }
  top.reject_unknown_keys();
  return manifest;
}

std::string manifest_mismatch(const CheckpointManifest& checkpoint, const CheckpointManifest& run, int rank) {
  if (checkpoint.model != run.model) return differs("model", checkpoint.model, run.model);
  if (checkpoint.mesh != run.mesh) return differs("mesh", checkpoint.mesh, run.mesh);
  if (checkpoint.batch != run.batch) return differs("batch", checkpoint.batch, run.batch);
  if (checkpoint.optimizer != run.optimizer) return differs("optimizer", checkpoint.optimizer, run.optimizer);
  if (checkpoint.zero_stage != run.zero_stage) return differs("zero_stage", checkpoint.zero_stage, run.zero_stage);
  if (checkpoint.ranks.size() != run.ranks.size()) return differs("ranks", checkpoint.ranks.size(), run.ranks.size());
  const auto& written = checkpoint.ranks.at(static_cast<size_t>(rank)).layout;
  const auto& wanted = run.ranks.at(static_cast<size_t>(rank)).layout;
  for (size_t i = 0; i < std::max(written.size(), wanted.size()); ++i) {
    const std::string a = i < written.size() ? written[i] : "nothing";
    const std::string b = i < wanted.size() ? wanted[i] : "nothing";
    if (a != b) return differs(fmt::format("ranks[{}].layout[{}]", rank, i), a, b);
  }
  return {};
}

uint32_t checksum(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes lengths as uInt: feed large files in pieces.
  constexpr size_t kPiece = 1u << 30;
  for (size_t at = 0; at < bytes.size(); at += kPiece) {
    const size_t size = std::min(kPiece, bytes.size() - at);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + at), static_cast<uInt>(size));
  }
  return static_cast<uint32_t>(crc);
}

}  // namespace splitbrain::exec
