#include "exec/runtime/checkpoint.h"

#include <fmt/format.h>
#include <mpi.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "exec/comm/mpi_check.h"
#include "model/errors.h"
#include "model/file_io.h"

namespace splitbrain::exec {
namespace {

constexpr uint64_t kMagic = 0x31544b4350425053ULL;  // "SPBCKPT1"

std::filesystem::path rank_file(const std::filesystem::path& directory, int rank) {
  return directory / fmt::format("rank-{}.bin", rank);
}

// Every array the checkpoint holds, in a fixed order: parameters (whole, then ZeRO 3's slices,
// which stand for the parameters it does not keep whole), then optimizer moments.
std::vector<std::vector<float>*> state_arrays(Trainer& trainer) {
  std::vector<std::vector<float>*> arrays;
  for (LayerParameters& layer : trainer.parameters()) {
    for (TrackedArray& value : layer.values) {
      if (value) arrays.push_back(&value->values);
    }
  }
  for (std::vector<float>* slice : trainer.sharded_state()) arrays.push_back(slice);
  for (auto& moment : trainer.optimizer().first_moments()) arrays.push_back(&moment);
  for (auto& moment : trainer.optimizer().second_moments()) arrays.push_back(&moment);
  return arrays;
}

nlohmann::json identity(const plans::Plan& plan) {
  return {{"model", plan.model_spec}, {"mesh", plan.mesh.to_string()}, {"batch", plan.global_batch},
          {"ranks", plan.mesh.rank_count()}, {"layers", plan.model->size()}};
}

void barrier(Trainer& trainer) { SB_MPI_CHECK(MPI_Barrier(trainer.communicator().communicators().world())); }

}  // namespace

void save_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory) {
  const int rank = trainer.communicator().rank();
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create the checkpoint folder: {}", directory.string(), ec.message()));
  std::string bytes;
  auto put = [&](const void* data, size_t size) { bytes.append(static_cast<const char*>(data), size); };
  const int64_t steps = trainer.steps_taken();
  const int64_t optimizer_steps = trainer.optimizer().steps_taken();
  put(&kMagic, sizeof kMagic);
  put(&steps, sizeof steps);
  put(&optimizer_steps, sizeof optimizer_steps);
  for (const std::vector<float>* array : state_arrays(trainer)) {
    const auto size = static_cast<int64_t>(array->size());
    put(&size, sizeof size);
    put(array->data(), array->size() * sizeof(float));
  }
  // A stale marker must not vouch for rank files being replaced.
  if (rank == 0) std::filesystem::remove(directory / "checkpoint.json", ec);
  barrier(trainer);
  write_file_atomically(rank_file(directory, rank), bytes);
  barrier(trainer);
  if (rank == 0) {
    nlohmann::json marker = identity(plan);
    marker["step"] = steps;
    write_file_atomically(directory / "checkpoint.json", marker.dump(2) + "\n");
  }
  barrier(trainer);
}

void load_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory) {
  const auto marker_path = directory / "checkpoint.json";
  nlohmann::json marker;
  try {
    marker = nlohmann::json::parse(read_text_file(marker_path));
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not a checkpoint marker: {}", marker_path.string(), e.what()));
  }
  nlohmann::json expected = identity(plan);
  for (const auto& [key, value] : expected.items()) {
    if (!marker.contains(key) || marker[key] != value) {
      throw InputError(fmt::format("{}: {}: the checkpoint was written for {}, this run is {}", marker_path.string(), key,
                                   marker.contains(key) ? marker[key].dump() : "nothing", value.dump()));
    }
  }
  const auto path = rank_file(directory, trainer.communicator().rank());
  const std::string bytes = read_text_file(path);
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
  take(&optimizer_steps, sizeof optimizer_steps);
  for (std::vector<float>* array : state_arrays(trainer)) {
    int64_t size = 0;
    take(&size, sizeof size);
    if (size != static_cast<int64_t>(array->size())) {
      throw InputError(fmt::format("{}: an array of {} values where this plan has {}", path.string(), size, array->size()));
    }
    take(array->data(), array->size() * sizeof(float));
  }
  if (at != bytes.size()) throw InputError(fmt::format("{}: {} unexpected trailing bytes", path.string(), bytes.size() - at));
  trainer.set_steps_taken(steps);
  trainer.optimizer().set_steps_taken(optimizer_steps);
  barrier(trainer);
}

}  // namespace splitbrain::exec
