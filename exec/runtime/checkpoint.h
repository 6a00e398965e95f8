#pragma once
// Checkpoints of a training run: every rank writes its parameter shards, their optimizer state
// and the step count to DIR/rank-<R>.bin (a temporary file, then a rename), and after all ranks
// have written, rank 0 writes DIR/checkpoint.json: a checkpoint without it is incomplete and is
// never resumed. Resuming restores everything a step depends on (the data order, the dropout
// masks and the learning-rate schedule are functions of the step), so 5 steps, a stop and 5
// resumed steps give bitwise the weights of 10 straight steps.

#include <filesystem>

#include "exec/runtime/trainer.h"

namespace splitbrain::exec {

// Collective over all ranks.
void save_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory);
// Collective over all ranks. Throws InputError naming the file when the checkpoint is missing,
// incomplete, or was written by another plan, model or rank count.
void load_checkpoint(Trainer& trainer, const plans::Plan& plan, const std::filesystem::path& directory);

}  // namespace splitbrain::exec
