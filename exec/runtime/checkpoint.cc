#include "exec/runtime/checkpoint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "exec/comm/gather_texts.h"
#include "exec/comm/mpi_check.h"
#include "exec/runtime/checkpoint_manifest.h"
#include "model/errors.h"
#include "model/file_io.h"
#include "model/json_object_reader.h"
#include "plans/redistribution.h"

namespace splitbrain::exec {
namespace {

constexpr uint64_t kMagic = 0x31544b4350425053ULL;  // "SPBCKPT1"
constexpr std::string_view kStepFolderPrefix = "step-";

MPI_Comm world(Trainer& trainer) { return trainer.communicator().communicators().world(); }
void barrier(Trainer& trainer) { SB_MPI_CHECK(MPI_Barrier(world(trainer))); }

// Every array the checkpoint holds, in a fixed order: parameters (whole, then ZeRO 3's slices,
// which stand for the parameters it does not keep whole), then optimizer moments (SGD's second
// moments are null: written as empty arrays).
std::vector<DeviceArray*> state_arrays(Trainer& trainer) {
  std::vector<DeviceArray*> arrays;
  for (LayerParameters& layer : trainer.parameters()) {
    for (TrackedArray& value : layer.values) {
      if (value) arrays.push_back(value.get());
    }
  }
  for (DeviceArray* slice : trainer.sharded_state()) arrays.push_back(slice);
  for (const TrackedArray& moment : trainer.optimizer().first_moments()) arrays.push_back(moment.get());
  for (const TrackedArray& moment : trainer.optimizer().second_moments()) arrays.push_back(moment.get());
  // A bf16 run's fp32 master copies: the parameters above are only their rounding.
  for (const TrackedArray& master : trainer.optimizer().master_copies()) arrays.push_back(master.get());
  return arrays;
}

int64_t elements_of(const DeviceArray* array) { return array != nullptr ? array->elements() : 0; }

// What each array of state_arrays is on this rank: which block of which tensor, which ZeRO
// slice, which moment. Two runs whose arrays have the same sizes but other layouts differ here.
std::vector<std::string> state_layout(Trainer& trainer, const plans::Plan& plan) {
  const int rank = trainer.communicator().rank();
  const plans::CompiledPlan& compiled = trainer.compiled();
  std::vector<std::string> lines;
  std::vector<LayerParameters>& parameters = trainer.parameters();
  for (size_t v = 0; v < parameters.size(); ++v) {
    for (size_t k = 0; k < parameters[v].values.size(); ++k) {
      if (!parameters[v].values[k]) continue;
      const plans::ParameterShard& shard = compiled.layers[v].layouts.parameters[k];
      lines.push_back(
          fmt::format("{} parameter {}: [{}] at [{}] of [{}]", plan.model->layer(static_cast<int>(v)).name, k,
                      fmt::join(parameters[v].values[k]->shape(), ", "),
                      fmt::join(plans::local_offset(shard.layout, plan.mesh, shard.global_shape, rank), ", "),
                      fmt::join(shard.global_shape, ", ")));
    }
  }
  const int stage = plan.pipe_axis >= 0 ? plan.mesh.coordinate(rank, plan.pipe_axis) : 0;
  const std::vector<DeviceArray*> slices = trainer.sharded_state();
  size_t slice = 0;
  for (const plans::GradientBucket& bucket : compiled.buckets) {
    if (bucket.stage != stage || slice >= slices.size()) continue;
    std::vector<std::string> layers;
    for (int v : bucket.layers) layers.push_back(plan.model->layer(v).name);
    lines.push_back(fmt::format("ZeRO slice of {}: {} values, member {} of {}", fmt::join(layers, ", "),
                                slices[slice]->elements(), plan.mesh.index_in_group(rank, bucket.axes),
                                plan.mesh.group_size(bucket.axes)));
    ++slice;
  }
  for (const TrackedArray& moment : trainer.optimizer().first_moments()) {
    lines.push_back(fmt::format("first moment: {} values", elements_of(moment.get())));
  }
  for (const TrackedArray& moment : trainer.optimizer().second_moments()) {
    lines.push_back(fmt::format("second moment: {} values", elements_of(moment.get())));
  }
  for (const TrackedArray& master : trainer.optimizer().master_copies()) {
    lines.push_back(fmt::format("fp32 master copy: {} values", elements_of(master.get())));
  }
  return lines;
}

// This run as a manifest (its own rank's file and layout filled in).
CheckpointManifest run_manifest(Trainer& trainer, const plans::Plan& plan) {
  CheckpointManifest manifest;
  manifest.step = trainer.steps_taken();
  manifest.model = plan.model_spec;
  manifest.mesh = plan.mesh.to_string();
  manifest.batch = plan.global_batch;
  manifest.optimizer = std::string(plans::optimizer_kind_name(plan.optimizer.kind));
  manifest.zero_stage = plan.zero_stage;
  manifest.ranks.resize(static_cast<size_t>(plan.mesh.rank_count()));
  manifest.ranks[static_cast<size_t>(trainer.communicator().rank())].layout = state_layout(trainer, plan);
  return manifest;
}

std::string encode_state(Trainer& trainer) {
  std::string bytes;
  auto put = [&](const void* data, size_t size) { bytes.append(static_cast<const char*>(data), size); };
  const int64_t steps = trainer.steps_taken();
  const int64_t optimizer_steps = trainer.optimizer().steps_taken();
  put(&kMagic, sizeof kMagic);
  put(&steps, sizeof steps);
  put(&optimizer_steps, sizeof optimizer_steps);
  std::vector<float> host;
  for (const DeviceArray* array : state_arrays(trainer)) {
    const int64_t size = elements_of(array);
    put(&size, sizeof size);
    if (array == nullptr) continue;
    host.resize(static_cast<size_t>(size));
    trainer.device().host_link().download(*array, host);
    put(host.data(), host.size() * sizeof(float));
  }
  return bytes;
}

void decode_state(Trainer& trainer, const std::string& bytes, const std::filesystem::path& path, int64_t step) {
  size_t at = 0;
  auto take = [&](void* data, size_t size) {
    if (at + size > bytes.size()) throw InputError(fmt::format("{}: truncated checkpoint", path.string()));
    std::memcpy(data, bytes.data() + at, size);
    at += size;
  };
  uint64_t magic = 0;
  int64_t steps = 0;
  int64_t optimizer_steps = 0;
  take(&magic, sizeof magic);
  if (magic != kMagic) throw InputError(fmt::format("{}: not a splitbrain checkpoint", path.string()));
  take(&steps, sizeof steps);
  if (steps != step) {
    throw InputError(
        fmt::format("{}: holds step {}, the manifest's checkpoint is of step {}", path.string(), steps, step));
  }
  take(&optimizer_steps, sizeof optimizer_steps);
  std::vector<float> host;
  for (DeviceArray* array : state_arrays(trainer)) {
    int64_t size = 0;
    take(&size, sizeof size);
    if (size != elements_of(array)) {
      throw InputError(
          fmt::format("{}: an array of {} values where this plan has {}", path.string(), size, elements_of(array)));
    }
    if (array == nullptr) continue;
    host.resize(static_cast<size_t>(size));
    take(host.data(), host.size() * sizeof(float));
    trainer.device().host_link().upload(host, *array);
  }
  if (at != bytes.size())
    throw InputError(fmt::format("{}: {} unexpected trailing bytes", path.string(), bytes.size() - at));
  trainer.set_steps_taken(steps);
  trainer.optimizer().set_steps_taken(optimizer_steps);
}

// Rank 0's `text` to every rank.
std::string broadcast(Trainer& trainer, std::string text) {
  auto size = static_cast<int>(text.size());
  SB_MPI_CHECK(MPI_Bcast(&size, 1, MPI_INT, 0, world(trainer)));
  text.resize(static_cast<size_t>(size));
  SB_MPI_CHECK(MPI_Bcast(text.data(), size, MPI_CHAR, 0, world(trainer)));
  return text;
}

// Runs `write` on every rank; if any rank fails, every rank throws (the failing one its own
// message, the others naming it), so no rank waits at a barrier for one that gave up.
template <class Write>
void on_every_rank(Trainer& trainer, const Write& write) {
  std::string error;
  try {
    write();
  } catch (const std::exception& e) {
    error = e.what();
  }
  int failed = error.empty() ? 0 : 1;
  int any = 0;
  SB_MPI_CHECK(MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, world(trainer)));
  if (!error.empty()) throw InputError(error);
  if (any != 0) throw InputError("checkpoint: another rank could not write its file (its message says why)");
}

}  // namespace

std::filesystem::path checkpoint_manifest_path(const std::filesystem::path& directory) {
  return directory / "checkpoint.json";
}

void save_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory) {
  const int rank = trainer.communicator().rank();
  const int64_t step = trainer.steps_taken();
  // A fresh folder for this checkpoint: the one the manifest names now stays untouched.
  std::string folder;
  if (rank == 0) folder = fmt::format("{}{}-{:08x}", kStepFolderPrefix, step, std::random_device{}());
  folder = broadcast(trainer, folder);
  const std::filesystem::path file = std::filesystem::path(folder) / fmt::format("rank-{}.bin", rank);
  std::string bytes;
  on_every_rank(trainer, [&] {
    std::error_code ec;
    std::filesystem::create_directories(directory / folder, ec);
    if (ec)
      throw InputError(
          fmt::format("{}: cannot create the checkpoint folder: {}", (directory / folder).string(), ec.message()));
    bytes = encode_state(trainer);
    write_file_atomically(directory / file, bytes);
  });
  nlohmann::json entry = {{"file", file.string()},
                          {"bytes", bytes.size()},
                          {"crc32", checksum(bytes)},
                          {"layout", state_layout(trainer, plan)}};
  const std::vector<std::string> entries = comm::gather_texts(entry.dump(), world(trainer));
  on_every_rank(trainer, [&] {
    if (rank != 0) return;
    CheckpointManifest manifest = run_manifest(trainer, plan);
    for (size_t r = 0; r < entries.size(); ++r) {
      const nlohmann::json e = nlohmann::json::parse(entries[r]);
      manifest.ranks[r] = {e.at("file").get<std::string>(), e.at("bytes").get<int64_t>(), e.at("crc32").get<uint32_t>(),
                           e.at("layout").get<std::vector<std::string>>()};
    }
    // The swap: from this rename on, the manifest names the new folder.
    write_file_atomically(checkpoint_manifest_path(directory), manifest_to_json(manifest).dump(2) + "\n");
    std::error_code ec;
    for (const auto& old : std::filesystem::directory_iterator(directory, ec)) {
      const std::string name = old.path().filename().string();
      if (old.is_directory() && name.starts_with(kStepFolderPrefix) && name != folder)
        std::filesystem::remove_all(old.path(), ec);
    }
  });
}

void load_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory) {
  const int rank = trainer.communicator().rank();
  const std::filesystem::path manifest_path = checkpoint_manifest_path(directory);
  const CheckpointManifest checkpoint = manifest_from_json(
      parse_json_strict(read_text_file(manifest_path), manifest_path.string()), manifest_path.string());
  if (const std::string mismatch = manifest_mismatch(checkpoint, run_manifest(trainer, plan), rank);
      !mismatch.empty()) {
    throw InputError(fmt::format("{}: {}", manifest_path.string(), mismatch));
  }
  const CheckpointRankFile& entry = checkpoint.ranks[static_cast<size_t>(rank)];
  const std::filesystem::path path = directory / entry.file;
  const std::string bytes = read_text_file(path);
  if (static_cast<int64_t>(bytes.size()) != entry.bytes) {
    throw InputError(fmt::format("{}: truncated checkpoint: {} bytes, the manifest says {}", path.string(),
                                 bytes.size(), entry.bytes));
  }
  if (checksum(bytes) != entry.crc32) {
    throw InputError(fmt::format("{}: checksum mismatch: the file is damaged or not this checkpoint's", path.string()));
  }
  decode_state(trainer, bytes, path, checkpoint.step);
  barrier(trainer);
}

}  // namespace splitbrain::exec
