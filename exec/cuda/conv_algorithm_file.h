#pragma once
// A file of cuDNN algorithm choices (conv_algorithms.h), so that a prediction and the run it is
// compared with time the same algorithms: `calibrate --backend cuda --conv-algorithms FILE` writes
// the choices its kernel problems ran with, `run --backend cuda --conv-algorithms FILE` adopts
// them (each process would otherwise search on its own, and for convolutions of tens of
// microseconds two searches can pick algorithms 60% apart). The choices hold for one GPU model,
// which the file names.
//
//   {"format": "splitbrain-conv-algorithms", "version": 1, "gpu": "NVIDIA H100 80GB HBM3",
//    "choices": {"<key>": {"forward": 1, "forward_workspace_bytes": 0, "backward_data": 1, ...}}}

#include <map>
#include <string>

#include "exec/cuda/conv_algorithms.h"

namespace splitbrain::exec::cuda {

struct ConvAlgorithmFile {
  std::string gpu;  // cudaDeviceProp::name of the GPU the choices were timed on
  std::map<std::string, ConvAlgorithms> choices;
};

// Writes to a temporary file, then renames it over `path`. Throws InputError naming the file.
void write_conv_algorithm_file(const std::string& path, const ConvAlgorithmFile& file);
// Throws InputError naming the file and the field when it is not such a file.
ConvAlgorithmFile read_conv_algorithm_file(const std::string& path);

}  // namespace splitbrain::exec::cuda
