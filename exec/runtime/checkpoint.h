#pragma once
// Checkpoints of a training run. A save writes every rank's parameter shards, their optimizer
// state and the step count into a new folder DIR/step-<N>-<id>/rank-<R>.bin, then rank 0 writes
// the manifest DIR/checkpoint.json (checkpoint_manifest.h: step, run, per rank its file's size,
// CRC-32 and array layout) by a rename, which is the moment the new checkpoint replaces the old
// one; the old folder is removed only after. A save that fails on any rank (a full disk) leaves
// the previous checkpoint whole and resumable. Resuming restores everything a step depends on
// (the data order, the dropout masks and the learning-rate schedule are functions of the step),
// so 5 steps, a stop and 5 resumed steps give bitwise the weights of 10 straight steps.

#include <filesystem>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

// Collective over all ranks. Throws InputError (on every rank) when a rank cannot write.
void save_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory);
// Collective over all ranks. Throws InputError naming the file and what differs when the
// checkpoint is missing, damaged, of another step, or was written by another run: model, mesh,
// batch, optimizer, ZeRO stage, or a different sharding of the same sizes.
void load_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory);

// The manifest's path in a checkpoint folder.
std::filesystem::path checkpoint_manifest_path(const std::filesystem::path& directory);

}  // namespace splitbrain::exec
